#!/usr/bin/env bash
# Gather what bench/accelerator/run.sh needs on a GPU machine without a package index: the wheels it lacks
# (wheels.txt) in bench/accelerator/wheels/ and the MNIST files in bench/accelerator/mnist/ (both ignored by git),
# checked to stay under SIZE_LIMIT_MIB with the checkout, for a machine that takes the checkout and them as one copy.
#   bench/accelerator/prepare.sh [MNIST_FOLDER]     (default: $JAXMLP_DATA_DIR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mnist=${1:-${JAXMLP_DATA_DIR:-}}
[ -n "$mnist" ] || { echo "bench/accelerator/prepare.sh: give the folder of the MNIST IDX files (or set JAXMLP_DATA_DIR)" >&2; exit 2; }
limit_mib=${SIZE_LIMIT_MIB:-64}  # the checkout and what goes with it, together

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
[ $((tree + carried)) -lt $limit_mib ] || { echo "bench/accelerator/prepare.sh: over ${limit_mib} MiB with the checkout: set SIZE_LIMIT_MIB or carry less" >&2; exit 1; }
