#!/usr/bin/env bash
# The whole GPU check in one command, under one hard time limit (bench/gpu/README.md says how and why):
#   bench     each benchmark module on its own (update, predict, floor, epoch, loader; quick sizes, --rounds),
#             its own file, with pytest's --durations: a module cut off by the limit loses only itself
#   profile   an XLA trace of the `scan` epoch and of the tutorial's `seed` steps
#   precision the `scan` pipeline trained one epoch per matmul precision (default, highest, tensorfloat32, bfloat16)
#   nox       `nox --no-venv -s bench-gpu -- --preinstalled --size=smoke`: the session as a user runs it, with its
#             `jaxmlp scaling` (N = 1 on one GPU); the scaling file is kept
# The float32 matmul precision of the bench step is JAX_DEFAULT_MATMUL_PRECISION's (default: XLA's own, TF32 on GPU).
# Everything lands in $OUT (a new temporary folder if unset): log.txt, results.tar.gz (the result files as the
# store names them, to put into reports/), traces-scan.tar.gz and traces-seed.tar.gz (TensorBoard run folders).
#
#   bench/gpu/run.sh                  on the GPU machine: bench/gpu/prepare.sh first (here), carry
#                                     bench/gpu/wheels and bench/gpu/mnist
#   bench/gpu/run.sh --backend cpu    the dry run on this machine's CPU, where jaxmlp's packages are installed
# Options: --limit SECONDS (default 400: the hard limit of the whole run), --rounds N (default 3), --only STEP,...
set -uo pipefail

main() {  # the whole script as one function: bash has read all of it before it runs (an edit mid-run is safe)

backend=gpu limit=400 rounds=3 only=bench,profile,precision,nox
while [ $# -gt 0 ]; do
    case $1 in
        --backend) backend=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        *) echo "bench/gpu/run.sh: unknown argument $1: use --backend cpu|gpu, --limit SECONDS, --rounds N," \
                "--only bench,profile,precision,nox" >&2; exit 2 ;;
    esac
done
case $backend in cpu|gpu) ;; *) echo "bench/gpu/run.sh: --backend $backend: use cpu or gpu" >&2; exit 2 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/jaxmlp-gpu-run.XXXXXX")}
mkdir -p "$out" && touch "$out/log.txt" || { echo "bench/gpu/run.sh: cannot write in $out: set OUT to a folder you can write to" >&2; exit 2; }
stage=$(mktemp -d "${TMPDIR:-/tmp}/jaxmlp-gpu-stage.XXXXXX")  # what gets packed: results/ and traces/
mkdir -p "$stage/results" "$stage/traces"
exec > >(tee -a "$out/log.txt") 2>&1
cd "$root"

export PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.4}  # a parent and its worker fit
export JAXMLP_DATA_DIR=${JAXMLP_DATA_DIR:-$here/mnist}
python=python3
if ! command -v python >/dev/null; then  # the noxfile's sessions run `python`; some images have python3 alone
    mkdir -p "$stage/bin" && ln -s "$(command -v python3)" "$stage/bin/python" && export PATH=$stage/bin:$PATH
fi
reserve=25  # seconds kept for packing what was measured
deadline=$((SECONDS + limit))
failed=()

step() {  # step NAME NEEDS_SECONDS COMMAND...: run it under the time left (its whole process group), go on either way
    local name=$1 needs=$2 left rc start
    shift 2
    left=$((deadline - SECONDS - reserve))
    if [ "$left" -lt "$needs" ]; then
        echo "== $name: skipped: ${left} s left of the ${limit} s limit, it needs about ${needs} s"
        failed+=("$name (skipped)")
        return
    fi
    echo "== $name (at most ${left} s): $*"
    start=$SECONDS
    timeout -k 10 "$left" "$@"
    rc=$?
    echo "== $name: exit $rc after $((SECONDS - start)) s"
    [ "$rc" -eq 0 ] || failed+=("$name (exit $rc$([ "$rc" -eq 124 ] && echo ', out of time'))")
}
wants() { [[ ",$only," == *",$1,"* ]]; }

echo "== bench/gpu/run.sh --backend $backend --limit $limit --rounds $rounds --only $only; $(date -u +%FT%TZ)"
if [ "$backend" = gpu ]; then
    if ls "$here"/wheels/*.whl >/dev/null 2>&1; then  # what the machine lacks (wheels.txt), in a folder of its own
        $python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
            "$here"/wheels/*.whl || { echo "bench/gpu/run.sh: the carried wheels did not install" >&2; exit 1; }
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader \
        || { echo "bench/gpu/run.sh: no GPU answers nvidia-smi: run it on the GPU machine, or --backend cpu" >&2; exit 2; }
fi
export PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH}  # this checkout's jaxmlp, installed or not
$python - "$backend" <<'EOF' || { echo "bench/gpu/run.sh: JAX has no $backend device here" >&2; exit 2; }
import os, platform, sys
import jax, jaxlib, numpy, torch
from jaxmlp.measure import environment
device = jax.devices(sys.argv[1])[0]
print(f"python {platform.python_version()}, jax {jax.__version__}, jaxlib {jaxlib.__version__}, numpy {numpy.__version__},"
      f" torch {torch.__version__}; {device.device_kind} ({device.platform}); CPU {environment.cpu_model()},"
      f" {os.cpu_count()} cores")
EOF
ls "$JAXMLP_DATA_DIR"/train-images-idx3-ubyte* >/dev/null 2>&1 \
    || echo "== no MNIST files in $JAXMLP_DATA_DIR (bench/gpu/prepare.sh copies them): the synthetic set instead"
data=()
ls "$JAXMLP_DATA_DIR"/train-images-idx3-ubyte* >/dev/null 2>&1 || data=(--dataset synthetic)

before=$(ls reports)
if wants bench; then  # a module at a time, each its own file: a module cut off by the limit loses only itself
    for module in update predict floor epoch loader; do
        step "bench-$module" 30 $python -m pytest "bench/bench_$module.py" -q -p no:cacheprovider --durations=0 \
            --backends "$backend" --rounds "$rounds" --benchmark-json "$stage/bench-$module.json" \
            --benchmark-save-data --benchmark-columns=min,median,iqr,rounds
        [ -s "$stage/bench-$module.json" ] && $python -m jaxmlp summary "$stage/bench-$module.json" \
            --save "$stage/results"
    done
fi
if wants nox; then  # the session as a user runs it where JAX for CUDA is preinstalled: smoke sizes (the numbers
    # are the modules' above), then `jaxmlp scaling` (N = 1 on one GPU) and a report; only the scaling file is kept
    session=bench-gpu
    [ "$backend" = gpu ] || session=bench  # bench-gpu refuses a machine without a GPU: scaling follows by hand
    listed=$(ls reports)
    step nox 60 $python -m nox --no-venv -s "$session" -- --preinstalled --size=smoke
    [ "$backend" = gpu ] || step scaling 30 $python -m jaxmlp scaling --backend cpu --devices 1 --out reports "${data[@]}"
    for entry in $(comm -13 <(echo "$listed") <(ls reports)); do
        case $entry in scaling-*) mv "reports/$entry" "$stage/results/" ;; *) rm -rf "reports/${entry:?}" ;; esac
    done
fi
if wants profile; then
    step profile-scan 30 $python -m jaxmlp profile --pipeline scan --steps 3 --backend "$backend" \
        --logdir "$stage/traces/scan" "${data[@]}"
    step profile-seed 30 $python -m jaxmlp profile --pipeline seed --steps 30 --backend "$backend" \
        --logdir "$stage/traces/seed" "${data[@]}"
fi
if wants precision; then
    for precision in default highest tensorfloat32 bfloat16; do
        step "train-$precision" 25 env JAX_DEFAULT_MATMUL_PRECISION=$precision $python -m jaxmlp train \
            --pipeline scan --epochs 1 --backend "$backend" --json "$stage/results" --no-progress "${data[@]}"
    done
fi

# Pack: the new result files the store named (moved out of this checkout's reports/), and each trace folder.
for entry in $(comm -13 <(echo "$before") <(ls reports)); do
    [ "$entry" = traces ] || mv "reports/$entry" "$stage/results/"
done
tar -czf "$out/results.tar.gz" -C "$stage/results" .
for run in scan seed; do
    [ -d "$stage/traces/$run" ] && tar -czf "$out/traces-$run.tar.gz" -C "$stage/traces/$run" .
done
rm -rf "$stage"
echo "== packed in $out: $(cd "$out" && ls -s --block-size=K | tail -n +2 | tr '\n' ' ')"
echo "== results: $(tar -tzf "$out/results.tar.gz" | grep -c -v '/$') files; $((SECONDS)) s of the ${limit} s limit"
if [ ${#failed[@]} -gt 0 ]; then
    echo "bench/gpu/run.sh: ${#failed[@]} step(s) did not complete: ${failed[*]}; see $out/log.txt" >&2
    exit 1
fi
echo "== every step completed"
}

main "$@"
