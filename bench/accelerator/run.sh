#!/usr/bin/env bash
# The whole accelerator check (a GPU, a TPU, or the CPU as a dry run) in one command, under one hard time limit:
#   bench     each benchmark module on its own (--modules: floor, epoch, update, predict, loader; --size sizes,
#             --rounds), its own file and time cap, with pytest's --durations; each benchmark written as it finishes
#             (bench's --rows-json): a module cut off keeps the rows it finished; the slow rungs (the tutorial's
#             DataLoader, registry.SLOW_PIPELINES: seconds an epoch) timed with --slow-rounds rounds, their epochs in
#             a call of their own after the modules (bench-epoch-slow); then the modules' benchmarks in one
#             bench-*-<backend>.json, raw samples kept, as `nox -s bench` writes it
#   profile   an XLA trace of the `scan` epoch, of the `pallas` epoch (a TPU's) and of the tutorial's `seed` steps
#             (the `batched` host loop where torch or PIL is missing)
#   precision the `scan` pipeline (and `pallas` on a TPU) trained --train-epochs per precision (`--precision` f32,
#             tf32 on a GPU, bf16): time and test accuracy after each epoch
#   scaling   `jaxmlp scaling` on one host (N = 1 on one GPU; a TPU host: all its chips)
#   nox       (gpu, only asked: not a default) `nox --no-venv -s bench-gpu -- --preinstalled --size=smoke`: the
#             session as a user runs it (every module again at smoke sizes), with its `jaxmlp scaling`
# The bench's f32 rows (epochs, floor) are float32 products on every backend (JAX's `highest`); its bf16 rows
# bfloat16 products, tf32 rows (a GPU's) TF32 passes; the update and predict benchmarks are at JAX's own setting
# (JAX_DEFAULT_MATMUL_PRECISION, in the metadata: at `default` a GPU takes TF32 passes, a TPU one bf16 pass).
# Everything lands in $OUT (a new temporary folder if unset): log.txt,
# results.tar.gz (the result files as the store names them, to put into reports/; the traces of a call that wrote a
# benchmark run in that run's folder, <backend>-<time>/traces/<pipeline>/), modules.tar.gz (each module's own
# pytest-benchmark file), traces-<pipeline>.tar.gz (the traces of a call that wrote no benchmark run).
#
#   bench/accelerator/run.sh                  on a GPU machine where JAX for CUDA is installed (bench/accelerator/
#                                             prepare.sh makes the wheels such a machine may lack): the first call
#   bench/accelerator/run.sh --limit 560 --modules floor,update,predict,loader --gemm-shapes layers \
#       --only bench,precision,scaling        the GPU's second call
#   bench/accelerator/run.sh --backend tpu    on a TPU host (JAX with libtpu): pandas, tqdm, platformdirs and pillow,
#                                             where missing, from a local package index ($JAXMLP_TPU_INDEX, default
#                                             /opt/pypi/simple), torch's CPU build from a folder of wheels
#                                             ($JAXMLP_TPU_WHEELS, default /opt/wheels) for the tutorial's DataLoader
#   bench/accelerator/run.sh --backend cpu    the dry run of the GPU's first call on this machine's CPU (smoke sizes)
# It says its plan first: each step asked for, what it needs (from the logs of earlier runs in reports/, else
# estimated from its benchmarks' count), what the limit leaves out (bench/accelerator/plan.py).
# Options (each backend's defaults: below, and bench/accelerator/README.md): --limit SECONDS (the hard limit of the
# whole run; gpu 420, cpu 480, tpu 540), --rounds N (gpu and tpu 3, cpu 1), --slow-rounds N (the slow rungs' rounds,
# default 1), --slow-workers N,... (the slow rungs' epochs at these worker counts, default 0), --size SIZE (the
# bench's sizes: quick; the CPU dry run: smoke, every benchmark at tiny sizes), --only STEP,... (gpu and cpu
# bench,profile; tpu forms,bench; forms: kernel_forms.py, asked only), --modules MODULE,... (the bench step's modules,
# in that order; gpu and cpu floor,epoch; tpu epoch), --pipelines P,... (the epoch and loader modules' pipelines; the epoch's default
# on gpu and cpu registry.GPU_LADDER, else all), --gemm-shapes squares|layers|all (the floor's squares, or its
# products at the step's shapes; gpu and cpu squares, tpu all), --train-epochs N (the precision step's epochs, 1).
# A TPU host held for ten minutes a call takes three calls of 540 s (bench/accelerator/README.md): the defaults
# (--modules epoch --only forms,bench), then --modules floor,update,predict,loader --only bench,profile, then --only
# precision,scaling --train-epochs 8. --plan-only prints the plan alone (no install, no device, nothing run).
# Exit codes: 0 every step completed; 1 a step failed, was cut off or did not fit (named; what was measured is
# packed); 2 a wrong argument, no such device, or an unwritable $OUT (one line, before anything is measured).
set -uo pipefail

main() {  # the whole script as one function: bash has read all of it before it runs (an edit mid-run is safe)

plan_only= backend=gpu limit= rounds= slow_rounds=1 size= only= modules= pipelines= train_epochs=1 slow_workers=0 gemm_shapes=
usage="use --backend cpu|gpu|tpu, --limit SECONDS, --rounds N, --slow-rounds N, --slow-workers N,..., --size quick|smoke|..., --only forms,bench,profile,precision,nox,scaling, --modules floor,epoch,update,predict,loader, --pipelines P,..., --gemm-shapes squares|layers|all, --train-epochs N, --plan-only"
while [ $# -gt 0 ]; do
    case $1 in --backend|--limit|--rounds|--slow-rounds|--slow-workers|--size|--only|--modules|--pipelines|--gemm-shapes|--train-epochs)
        [ $# -ge 2 ] || { echo "bench/accelerator/run.sh: $1 needs a value: $usage" >&2; exit 2; } ;;
    esac
    case $1 in
        --backend) backend=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --slow-rounds) slow_rounds=$2; shift 2 ;;
        --slow-workers) slow_workers=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --modules) modules=$2; shift 2 ;;
        --pipelines) pipelines=$2; shift 2 ;;
        --gemm-shapes) gemm_shapes=$2; shift 2 ;;
        --train-epochs) train_epochs=$2; shift 2 ;;
        --plan-only) plan_only=1; shift ;;
        *) echo "bench/accelerator/run.sh: unknown argument $1: $usage" >&2; exit 2 ;;
    esac
done
case $backend in cpu|gpu|tpu) ;; *) echo "bench/accelerator/run.sh: --backend $backend: use cpu, gpu or tpu" >&2; exit 2 ;; esac
# Each backend's defaults. A GPU's (and the CPU's dry run of them): the floor's large squares and bandwidth, the epoch
# ladder (registry.GPU_LADDER; registry.GPU_ALL_PRECISIONS in every precision, the rest in f32) and the traces of scan
# and seed, planned to fit 420 s; its second call takes the step's products, update, predict, the loaders, training
# and scaling (bench/accelerator/README.md). A TPU's: the first of its three calls, the kernel's forms and the epoch
# ladder in 540 s.
ladder=  # gpu: the epoch module's pipelines where --pipelines does not say are registry.GPU_LADDER (else all)
case $backend in
    gpu|cpu)
        : "${limit:=$([ "$backend" = gpu ] && echo 420 || echo 480)}" "${only:=bench,profile}" "${modules:=floor,epoch}"
        : "${gemm_shapes:=squares}" "${size:=$([ "$backend" = gpu ] && echo quick || echo smoke)}"
        : "${rounds:=$([ "$backend" = gpu ] && echo 3 || echo 1)}"  # the CPU's dry run: one round of each
        ladder=gpu ;;
    tpu)
        : "${limit:=540}" "${only:=forms,bench}" "${modules:=epoch}"
        : "${gemm_shapes:=all}" "${size:=quick}" "${rounds:=3}" ;;
esac
case $gemm_shapes in squares|layers|all) ;;
    *) echo "bench/accelerator/run.sh: --gemm-shapes $gemm_shapes: use squares, layers or all" >&2; exit 2 ;;
esac
for pair in "--limit $limit" "--rounds $rounds" "--slow-rounds $slow_rounds" "--train-epochs $train_epochs"; do
    [[ ${pair#* } =~ ^[1-9][0-9]*$ ]] || { echo "bench/accelerator/run.sh: $pair: give a whole number, 1 or more" >&2; exit 2; }
done
[[ $slow_workers =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "bench/accelerator/run.sh: --slow-workers $slow_workers: give worker counts, e.g. 0 or 0,2" >&2; exit 2; }
for module in ${modules//,/ }; do
    case $module in floor|epoch|update|predict|loader) ;;
        *) echo "bench/accelerator/run.sh: --modules $module: use floor, epoch, update, predict or loader" >&2; exit 2 ;;
    esac
done
for name in ${only//,/ }; do
    case $name in forms|bench|profile|precision|nox|scaling) ;;
        *) echo "bench/accelerator/run.sh: --only $name: use forms, bench, profile, precision, nox or scaling" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# The pipelines asked for (all by default), split: the fast rungs, then the slow ones (registry.SLOW_PIPELINES)
split=$(PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} python3 - "$pipelines" "$ladder" <<'EOF'
import sys
from jaxmlp import registry  # plain Python: nothing else imported
ladder = list(registry.GPU_LADDER) if sys.argv[2] == "gpu" else list(registry.PIPELINES)
asked = [p.strip() for p in sys.argv[1].split(",") if p.strip()] or ladder
unknown = [p for p in asked if p not in registry.PIPELINES]
if unknown:
    sys.exit(f"bench/accelerator/run.sh: --pipelines {','.join(unknown)}: use {','.join(registry.PIPELINES)}")
# the default ladder's: GPU_ALL_PRECISIONS in every precision, the rest in f32; pipelines asked for: every precision
every = ",".join(registry.GPU_ALL_PRECISIONS) if sys.argv[2] == "gpu" and not sys.argv[1].strip() else "-"
print(",".join(p for p in asked if p not in registry.SLOW_PIPELINES) or "-",
      ",".join(p for p in asked if p in registry.SLOW_PIPELINES) or "-", every)
EOF
) || exit 2
read -r fast slow every <<<"$split"

if [ -z "$plan_only" ]; then
    out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/jaxmlp-accel-run.XXXXXX")}
    mkdir -p "$out" 2>/dev/null && touch "$out/log.txt" 2>/dev/null || { echo "bench/accelerator/run.sh: cannot write in $out: set OUT to a folder you can write to" >&2; exit 2; }
fi
stage=$(mktemp -d "${TMPDIR:-/tmp}/jaxmlp-accel-stage.XXXXXX")  # what gets packed: results/, modules/, traces/
mkdir -p "$stage/results" "$stage/modules" "$stage/traces"
trap 'rm -rf "$stage"' EXIT  # what was measured is packed into $OUT before the end; the staging folder never stays
[ -n "$plan_only" ] || exec > >(tee -a "$out/log.txt") 2>&1
cd "$root"

export PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.4}  # a parent and its worker fit (GPU)
export JAXMLP_DATA_DIR=${JAXMLP_DATA_DIR:-$here/mnist}
unset PYTEST_XDIST_WORKER  # started from a pytest-xdist worker (its tests), pytest-benchmark would time nothing
python=python3
if ! command -v python >/dev/null; then  # the noxfile's sessions run `python`; some images have python3 alone
    mkdir -p "$stage/bin" && ln -s "$(command -v python3)" "$stage/bin/python" && export PATH=$stage/bin:$PATH
fi
reserve=25  # seconds kept for packing what was measured
deadline=$((SECONDS + limit))
failed=()

step() {  # step NAME NEEDS CAP COMMAND...: run it for at most its cap (the plan's, else CAP) and the time left
    local name=$1 needs=$2 cap=${planned_caps[$1]:-$3} left rc  # (bounded.py: its whole process group, its end one line)
    shift 3
    left=$((deadline - SECONDS - reserve))
    if [ "$left" -lt "$needs" ]; then
        echo "== $name: skipped: ${left} s left of the ${limit} s limit, it needs about ${needs} s"
        failed+=("$name (skipped)")
        return
    fi
    [ "$left" -le "$cap" ] || left=$cap
    echo "== $name (at most ${left} s): $*"
    python3 "$here/bounded.py" "$name" "$left" "$@"
    rc=$?
    [ "$rc" -eq 0 ] || failed+=("$name (exit $rc$([ "$rc" -eq 124 ] && echo ', out of time'))")
}
wants() { [[ ",$only," == *",$1,"* ]]; }

[ -n "$plan_only" ] && echo "== the plan alone (--plan-only): nothing installed, no device asked, nothing run"
echo "== bench/accelerator/run.sh --backend $backend --limit $limit --rounds $rounds --slow-rounds $slow_rounds" \
    "--slow-workers $slow_workers --size $size --only $only --modules $modules --pipelines ${pipelines:-all}" \
    "--gemm-shapes $gemm_shapes" \
    "--train-epochs $train_epochs;" \
    "$(date -u +%FT%TZ)"
if [ "$backend" = gpu ] && [ -z "$plan_only" ]; then  # the GPU first: nothing is installed on a machine without one
    timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null \
        || { echo "bench/accelerator/run.sh: no GPU answers nvidia-smi: run it on the GPU machine, or --backend cpu" >&2; exit 2; }
    if ls "$here"/wheels/*.whl >/dev/null 2>&1; then  # what the machine lacks (wheels.txt), in a folder of its own
        $python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
            "$here"/wheels/*.whl || { echo "bench/accelerator/run.sh: the carried wheels did not install" >&2; exit 1; }
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi
fi
if [ "$backend" = tpu ] && [ -z "$plan_only" ]; then  # what jaxmlp needs beside JAX, from the machine's own index, after JAX on the path
    index=${JAXMLP_TPU_INDEX:-/opt/pypi/simple}
    wheels=${JAXMLP_TPU_WHEELS:-/opt/wheels}
    missing=$($python -c 'import importlib.util as u
names = {"pandas": "pandas", "tqdm": "tqdm", "platformdirs": "platformdirs", "PIL": "pillow", "torch": "torch"}
print(" ".join(p for m, p in names.items() if u.find_spec(m) is None))')
    if [ -n "$missing" ]; then
        [ -d "$index" ] || { echo "bench/accelerator/run.sh: this Python lacks $missing and there is no package index" \
            "at $index: install them, or set JAXMLP_TPU_INDEX" >&2; exit 2; }
        links=()
        [ -d "$wheels" ] && links=(--find-links "$wheels")  # torch's CPU build (the index has none)
        echo "== installing $missing from $index ${links[*]}"
        PIP_CONFIG_FILE=/dev/null $python -m pip install -q --isolated --only-binary=:all: --no-compile \
            --index-url "file://$index" "${links[@]}" --target /tmp/jaxmlp-site $missing \
            || echo "== $missing did not all install from $index: the pipelines that need them are skipped, saying why"
        export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/jaxmlp-site  # last: the machine's JAX and numpy stay first
    fi
fi
export PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH}  # this checkout's jaxmlp, installed or not
# The packages the asked steps take that a machine may lack (carried as wheels to a GPU machine), imported once
# now: one that does not import is one line naming what is skipped for it (the pipelines' own check imports too).
needs=()
[[ ",$fast,$slow,$pipelines," == *",grain,"* || ( -z $pipelines && ",$modules," == *",loader,"* ) ]] && needs+=(grain)
[[ ",$fast,$slow,$pipelines," == *",hf,"* || ( -z $pipelines && ",$modules," == *",loader,"* ) ]] && needs+=(hf)
wants nox && [ "$backend" = gpu ] && needs+=(nox)
if [ ${#needs[@]} -gt 0 ] && [ -z "$plan_only" ]; then
    $python - "${needs[@]}" <<'EOF'
import importlib, sys
said = {"grain": ("grain", "the grain pipeline's rows are skipped"),
        "hf": ("datasets", "the hf pipeline's rows are skipped"), "nox": ("nox", "the nox step fails")}
for need in sys.argv[1:]:
    module, skipped = said[need]
    try:
        importlib.import_module(module)
    except Exception as e:  # absent, or a carried wheel that does not import here: one line each
        first = (str(e).strip().splitlines() or [""])[0]
        print(f"== {module} does not import here ({type(e).__name__}: {first}): {skipped}")
EOF
fi
# The device, then (asked for the bench) each bench step's benchmarks as pytest collects them, for the plan.
counted=$stage/ids/rows.txt  # each bench step's count; beside it, its benchmarks' ids (bench-<module>.txt)
mkdir -p "$stage/ids"
collect=()
if wants bench; then
    collect=(--backends "$backend" --size "$size" --rounds "$rounds" --slow-rounds "$slow_rounds" -p no:cacheprovider)
    # the epoch's pipelines (the loader step takes every loader unless --pipelines says: then they are not narrowed)
    if [ -n "$pipelines" ] || [[ -n $ladder && ",$modules," != *",loader,"* ]]; then
        collect+=(--pipelines "$(echo "$fast,$slow" | tr ',' '\n' | grep -v '^-$' | paste -sd,)")
    fi
    [ "$every" != - ] && collect+=(--all-precisions "$every")
    [ "$gemm_shapes" != all ] && collect+=(--gemm-shapes "$gemm_shapes")
    for module in ${modules//,/ }; do collect+=("bench/bench_$module.py"); done
fi
$python - "${plan_only:-device}" "$backend" "$counted" "$slow" "$slow_workers" "${collect[@]}" <<'EOF' || exit 2
import os, platform, sys
import jax, jaxlib, numpy
from jaxmlp.measure import environment
def device_said(backend):
    """The device, in one line; none (exit 2, one line) where JAX has none of the backend's."""
    try:  # an absent accelerator, or a TPU another program holds: one line (`select_device`), never a traceback
        device = environment.select_device(backend)
    except Exception as e:
        said = (str(e).strip().splitlines() or [type(e).__name__])[0]
        sys.exit(f"bench/accelerator/run.sh: JAX has no {backend} device here: {said}")
    torch = environment.package_version("torch") or "none"
    return (f"python {platform.python_version()}, jax {jax.__version__}, jaxlib {jaxlib.__version__}, numpy "
            f"{numpy.__version__}, torch {torch}; {device.device_kind} ({device.platform}), "
            f"{len(jax.devices(backend))} device(s); CPU {environment.cpu_model()}, {os.cpu_count()} cores")
if sys.argv.pop(1) != "1":  # --plan-only: the benchmarks counted as the backend's run would collect them, no device
    print(device_said(sys.argv[1]))
if sys.argv[5:]:  # in this process: no other start; its counts only (the steps collect again as they run)
    import collections, contextlib, io, pytest
    class Items:
        found = []
        def pytest_collection_finish(self, session):
            self.found = list(session.items)
    items, slow, workers = Items(), sys.argv[3].split(","), {int(w) for w in sys.argv[4].split(",")}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = pytest.main(["--collect-only", "-q", "--rootdir", ".", *sys.argv[5:]], plugins=[items])
    counts, ids = collections.Counter(), {}
    for item in items.found:
        module = item.path.stem.removeprefix("bench_")
        params = item.callspec.params if hasattr(item, "callspec") else {}
        if module == "epoch" and params.get("pipeline") in slow:
            module = "epoch-slow" if item.originalname == "test_epoch" and params.get("workers") in workers else ""
        counts[module] += bool(module)
        if module:  # its id, for the plan's durations (plan.from_durations)
            ids.setdefault(module, []).append(item.nodeid)
    for module, listed in ids.items():
        with open(os.path.join(os.path.dirname(sys.argv[2]), f"bench-{module}.txt"), "w") as f:
            f.write("\n".join(listed) + "\n")
    with open(sys.argv[2], "w") as f:
        f.write(" ".join(f"{m}={n}" for m, n in counts.items()) + "\n")
    if code not in (0, 5):
        print(f"== the bench's benchmarks were not all collected (pytest exit {code}): the plan counts those that were")
EOF
ls "$JAXMLP_DATA_DIR"/train-images-idx3-ubyte* >/dev/null 2>&1 \
    || echo "== no MNIST files in $JAXMLP_DATA_DIR (bench/accelerator/prepare.sh copies them): the synthetic set instead"
data=()
ls "$JAXMLP_DATA_DIR"/train-images-idx3-ubyte* >/dev/null 2>&1 || data=(--dataset synthetic)
[ "$size" = smoke ] && data=(--dataset synthetic)  # a smoke run checks each step works: the benchmarks' data too

# Caps (seconds), per backend: a step's own limit, whatever the plan estimates (bench/accelerator/plan.py). A TPU's from
# its v5e runs (reports/tpu-*/log.txt: floor 46-88 s, epoch 80-134, update 67, predict 67, loader 18, the slow rungs
# 85-87 at one round); a GPU's from the plan's estimates of its defaults with room (no GPU run's log yet); the CPU's
# dry run at smoke sizes.
case $backend in
    gpu) declare -A caps=([floor]=150 [epoch]=200 [update]=120 [predict]=100 [loader]=180 [epoch-slow]=90
                          [profile]=60 [train]=60 [scaling]=120 [nox]=400 [forms]=240) ;;
    tpu) declare -A caps=([floor]=110 [epoch]=220 [update]=90 [predict]=100 [loader]=120 [epoch-slow]=180
                          [profile]=90 [train]=60 [scaling]=120 [nox]=600 [forms]=240) ;;
    cpu) declare -A caps=([floor]=120 [epoch]=240 [update]=90 [predict]=90 [loader]=150 [epoch-slow]=120
                          [profile]=90 [train]=60 [scaling]=120 [nox]=600 [forms]=300) ;;
esac
profiled=seed  # the tutorial's own steps; without torch or PIL its DataLoader cannot run: the host loop
$python -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ("torch", "PIL")))' \
    || profiled=batched
traced=(scan)
[ "$backend" = tpu ] && traced+=(pallas)  # the whole epoch as one Pallas kernel: a TPU's
precisions=(f32 bf16)  # jaxmlp's precisions: f32 (float32 products on every backend), tf32 (a GPU's), bf16
[ "$backend" = gpu ] && precisions=(f32 tf32 bf16)

# The plan, said before any step: each step asked for in the order it runs, with its cap; what each needs, from the
# logs of earlier runs on this backend kept in reports/ (their "== STEP: exit 0 after N s"), else unknown; and what
# this limit leaves out.
logs=${JAXMLP_PLAN_LOGS:-$root/reports}  # the earlier runs' logs the plan reads (a test's own folder)
planned=()
wants forms && planned+=("forms:${caps[forms]}:60")
rows() { tr ' ' '\n' <"$counted" 2>/dev/null | sed -n "s/^$1=//p" | grep . || echo -; }  # a step's benchmarks
if wants bench; then
    for module in ${modules//,/ }; do
        [ "$module" = epoch ] && [ "$fast" = - ] && continue
        planned+=("bench-$module:${caps[$module]}:20:$(rows "$module")")
    done
    [[ ",$modules," == *",epoch,"* ]] && [ "$slow" != - ] \
        && planned+=("bench-epoch-slow:${caps[epoch-slow]}:20:$(rows epoch-slow)")
fi
if wants profile; then
    for pipeline in "${traced[@]}" "$profiled"; do planned+=("profile-$pipeline:${caps[profile]}:30"); done
fi
if wants nox && [ "$backend" = gpu ]; then
    planned+=("nox:${caps[nox]}:60")
elif wants scaling; then
    planned+=("scaling:${caps[scaling]}:30")
fi
if wants precision; then
    for pipeline in "${traced[@]}"; do
        for precision in "${precisions[@]}"; do planned+=("train-$pipeline-$precision:${caps[train]}:25:$train_epochs"); done
    done
fi
if [ -n "$plan_only" ]; then  # before the start: the newest log's start counted too; nothing run
    python3 "$here/plan.py" "$backend" "$limit" "$((limit - reserve))" "$logs" --reserve "$reserve" \
        --ids "$stage/ids" "${planned[@]}"
    exit
fi
declare -A planned_caps=()  # each step's cap from what it needs (plan.cap_for), where the plan has it
python3 "$here/plan.py" "$backend" "$limit" "$((deadline - SECONDS - reserve))" "$logs" \
    --caps "$stage/caps.txt" --ids "$stage/ids" "${planned[@]}"
while read -r name cap; do planned_caps[$name]=$cap; done <"$stage/caps.txt" 2>/dev/null

before=$(ls reports)
if wants forms; then  # first: the kernel's forms and the scan against plain JAX, in one process (kernel_forms.py)
    forms=(--train-epochs 8)  # the accuracy after the pipelines' 8 epochs; a smoke run: a check of the script
    [ "$size" = smoke ] && forms=(--limit 1000 --rounds 1 --epochs 1 --train-epochs 1)
    commit=${JAXMLP_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null)}  # the file names the commit measured
    step forms 60 "${caps[forms]}" env JAXMLP_COMMIT="$commit" $python "$here/kernel_forms.py" --out "$stage/results" \
        "${forms[@]}"
fi
if wants bench; then  # a module at a time, each its own file and cap (seconds): one cut off loses only itself
    written=()  # each module's file, in the order they ran
    bench_module() {  # bench_module NAME TARGET [PYTEST ARGS...]: one pytest process under its cap
        local name=$1 target=$2 kept
        shift 2
        step "bench-$name" 20 "${caps[$name]}" $python -m pytest "$target" -q -p no:cacheprovider --durations=0 \
            --backends "$backend" --rounds "$rounds" --slow-rounds "$slow_rounds" --size "$size" \
            --benchmark-json "$stage/modules/bench-$name.json" --benchmark-save-data \
            --rows-json "$stage/modules/rows-$name.json" --benchmark-columns=min,median,iqr,rounds "$@"
        if [ -s "$stage/modules/bench-$name.json" ]; then
            written+=("$stage/modules/bench-$name.json")
            rm -f "$stage/modules/rows-$name.json"  # the same rows, written as each finished
        elif [ -f "$stage/modules/rows-$name.json" ]; then  # cut off: the rows it finished, written as they did
            kept=$($python -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["benchmarks"]))' \
                "$stage/modules/rows-$name.json" 2>/dev/null || echo "no")
            echo "== bench-$name: did not finish: the benchmarks it finished kept ($kept, rows-$name.json)"
            written+=("$stage/modules/rows-$name.json")
        else
            echo "== bench-$name: no benchmark finished"
        fi
    }
    narrowed=()
    [ -n "$pipelines" ] && narrowed=(--pipelines "$pipelines")
    precise=()
    [ "$every" != - ] && precise=(--all-precisions "$every")
    shapes=()
    [ "$gemm_shapes" != all ] && shapes=(--gemm-shapes "$gemm_shapes")
    for module in ${modules//,/ }; do
        case $module in
            epoch) [ "$fast" = - ] || bench_module epoch bench/bench_epoch.py --pipelines "$fast" "${precise[@]}" ;;
            floor) bench_module floor bench/bench_floor.py "${shapes[@]}" ;;
            loader) bench_module loader bench/bench_loader.py "${narrowed[@]}" ;;
            *) bench_module "$module" "bench/bench_$module.py" ;;
        esac
    done
    if [[ ",$modules," == *",epoch,"* ]] && [ "$slow" != - ]; then  # last: cut off, they lose only themselves
        bench_module epoch-slow bench/bench_epoch.py::test_epoch --pipelines "$slow" "${precise[@]}" \
            "-k$(echo "$slow_workers" | sed 's/^/-/; s/,/- or -/g; s/$/-/')"  # its worker counts: test_epoch[tpu-seed-0-f32]
    fi
    # One run, as `nox -s bench` writes it: the modules' benchmarks in one file, with the first module's metadata.
    if $python - "$stage/bench-$backend.json" "${written[@]}" <<'EOF'
import json, os, sys
docs = []
for path in sys.argv[2:]:
    try:
        with open(path) as f:
            docs.append(json.load(f))
    except (OSError, ValueError) as e:
        print(f"== {path}: not read ({e})")
docs = [d for d in docs if d.get("benchmarks")]
if not docs:
    sys.exit("bench/accelerator/run.sh: no module wrote a benchmark")
merged = {**docs[0], "benchmarks": [b for d in docs for b in d["benchmarks"]]}
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(merged, f)
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
print(f"== merged {len(merged['benchmarks'])} benchmarks of {len(docs)} modules")
EOF
    then
        $python -m jaxmlp summary "$stage/bench-$backend.json" --save "$stage/results" || failed+=("bench-summary")
    else
        failed+=("bench-merge")
    fi
fi
if wants profile; then
    for pipeline in "${traced[@]}"; do
        step "profile-$pipeline" 30 "${caps[profile]}" $python -m jaxmlp profile --pipeline "$pipeline" --steps 3 \
            --backend "$backend" --logdir "$stage/traces/$pipeline" "${data[@]}"
    done
    step "profile-$profiled" 30 "${caps[profile]}" $python -m jaxmlp profile --pipeline "$profiled" --steps 30 --backend "$backend" \
        --logdir "$stage/traces/$profiled" "${data[@]}"
fi
if wants nox && [ "$backend" = gpu ]; then  # the session as a user runs it where JAX for CUDA is preinstalled: smoke
    # sizes (the numbers are the modules' above), then `jaxmlp scaling` (N = 1 on one GPU) and a report; only the
    # scaling file is kept
    listed=$(ls reports)
    step nox 60 "${caps[nox]}" $python -m nox --no-venv -s bench-gpu -- --preinstalled --size=smoke
    for entry in $(comm -13 <(echo "$listed") <(ls reports)); do
        case $entry in scaling-*) mv "reports/$entry" "$stage/results/" ;; *) rm -rf "reports/${entry:?}" ;; esac
    done
elif wants scaling; then  # N = 1 (a TPU host: all its chips, in the worker it starts; this process holds none)
    devices=(--devices 1)
    [ "$backend" = tpu ] && devices=()
    step scaling 30 "${caps[scaling]}" $python -m jaxmlp scaling --backend "$backend" "${devices[@]}" --epochs 4 --calls 30 \
        --out "$stage/results" "${data[@]}"
fi

if wants precision; then
    for pipeline in "${traced[@]}"; do  # scan, and the pallas kernel on a TPU: the accuracy after each epoch
        for precision in "${precisions[@]}"; do
            step "train-$pipeline-$precision" 25 "${caps[train]}" $python -m jaxmlp train --pipeline "$pipeline" \
                --epochs "$train_epochs" --precision "$precision" --backend "$backend" --json "$stage/results" \
                --no-progress "${data[@]}"
        done
    done
fi

# Pack: the new result files the store named (moved out of this checkout's reports/), each module's own file, and
# each trace folder: in the run's folder (reports/<backend>-<time>/traces/<pipeline>/, layout.run_folder) where this
# call wrote a benchmark run, where `jaxmlp report` and `summary` compute its operation tables; else on its own.
for entry in $(comm -13 <(echo "$before") <(ls reports)); do
    [ "$entry" = traces ] || mv "reports/$entry" "$stage/results/"
done
run_folder=$($python - "$stage/results"/bench-*.json <<'EOF'
import sys
from pathlib import Path
from jaxmlp.results.store import layout  # plain Python
found = [layout.run_folder(p) for p in sys.argv[1:] if Path(p).is_file()]
print(found[0].name if found and found[0] else "")
EOF
)
if [ -n "$run_folder" ]; then  # its log beside the run: the measured step times a later call's plan reads
    mkdir -p "$stage/results/$run_folder" && cp "$out/log.txt" "$stage/results/$run_folder/log.txt"
fi
for run in "${traced[@]}" "$profiled"; do
    [ -d "$stage/traces/$run" ] || continue
    if [ -n "$run_folder" ]; then
        mkdir -p "$stage/results/$run_folder/traces" && mv "$stage/traces/$run" "$stage/results/$run_folder/traces/$run"
    else
        tar -czf "$out/traces-$run.tar.gz" -C "$stage/traces/$run" .
    fi
done
tar -czf "$out/results.tar.gz" -C "$stage/results" .
tar -czf "$out/modules.tar.gz" -C "$stage/modules" .
rm -rf "$stage"
echo "== packed in $out: $(cd "$out" && ls -s --block-size=K | tail -n +2 | tr '\n' ' ')"
echo "== results: $(tar -tzf "$out/results.tar.gz" | grep -c -v '/$') files; $((SECONDS)) s of the ${limit} s limit"
if [ ${#failed[@]} -gt 0 ]; then
    echo "bench/accelerator/run.sh: ${#failed[@]} step(s) did not complete: ${failed[*]}; see $out/log.txt" >&2
    exit 1
fi
echo "== every step completed"
}

main "$@"; exit  # on the line that runs it: bash reads no further (an edit mid-run is safe)
