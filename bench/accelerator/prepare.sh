#!/usr/bin/env bash
# Make what bench/accelerator/run.sh carries to the GPU machine: the wheels it lacks (wheels.txt) in bench/accelerator/wheels/
# and the MNIST files in bench/accelerator/mnist/ (both ignored by git; the device tool's run carries them).
#   bench/accelerator/prepare.sh [MNIST_FOLDER]     (default: $JAXMLP_DATA_DIR, else ../shared/data/mnist)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mnist=${1:-${JAXMLP_DATA_DIR:-$root/../shared/data/mnist}}
limit_mib=64  # the device tool's limit on the tree and the carried paths together

ls "$mnist"/train-images-idx3-ubyte* >/dev/null 2>&1 || {
    echo "bench/accelerator/prepare.sh: no MNIST IDX files in $mnist: give the folder that holds them" >&2; exit 2; }
mkdir -p "$here/wheels" "$here/mnist"
cp "$mnist"/*-ubyte* "$here/mnist/"
platforms=""
for p in manylinux_2_35_x86_64 manylinux_2_34_x86_64 manylinux_2_31_x86_64 manylinux_2_28_x86_64 \
         manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    platforms="$platforms --platform $p"
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $platforms \
    -d "$here/wheels" -r "$here/wheels.txt" 2>&1 | { grep -v "^WARNING: Location" || true; }
# One version of each package: two stop the whole install there.
dupes=$(ls "$here/wheels" | sed 's/-[0-9].*//' | tr 'A-Z-' 'a-z_' | sort | uniq -d)
[ -z "$dupes" ] || { echo "bench/accelerator/prepare.sh: two versions of $dupes in $here/wheels: remove the older" >&2; exit 1; }
tree=$(cd "$root" && git ls-files -co --exclude-standard -z | du -c --files0-from=- -m 2>/dev/null | tail -1 | cut -f1)
carried=$(du -sm "$here/wheels" "$here/mnist" | awk '{s+=$1} END {print s}')
echo "bench/accelerator: $(ls "$here/wheels" | wc -l) wheels and $(ls "$here/mnist" | wc -l) MNIST files; the tree ${tree} MiB + carried ${carried} MiB (limit ${limit_mib} MiB)"
[ $((tree + carried)) -lt $limit_mib ] || { echo "bench/accelerator/prepare.sh: over the device tool's ${limit_mib} MiB" >&2; exit 1; }
