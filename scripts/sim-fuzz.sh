#!/usr/bin/env bash
# Random specs through the GPU kernels in the PTX interpreter, seed after
# seed, alternating sm_80 and sm_90a (sim-random.test runs two fixed
# seeds in the suite). Needs a build (scripts/build.sh) and the CUDA
# toolkit's ptxas.
#   scripts/sim-fuzz.sh [FIRST_SEED=1] [SEEDS=10] [TOKENS=1,17,130,300]
# Each seed's specs, libraries and outputs stay in build/sim-fuzz/SEED-TARGET;
# the script ends non-zero if any seed failed, naming them.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
first=${1:-1}
seeds=${2:-10}
tokens=${3:-1,17,130,300}
bin=$root/build/bin
out=$root/build/sim-fuzz
failed=()
for ((s = first; s < first + seeds; ++s)); do
  target=nvptx-sm80
  ((s % 2 == 0)) && target=nvptx-sm90a
  d=$out/$s-$target
  mkdir -p "$d"
  python3 "$root/test/GPU/Inputs/sim/random_specs.py" "$s" 6 > "$d/specs.ffn"
  if ! "$bin/ffnc" "$d/specs.ffn" --target=$target --emit=so -o "$d/k.so" 2> "$d/ffnc.err" ||
     ! "$bin/ffnc" "$d/specs.ffn" --target=$target --emit=ptx -o "$d/k.ptx" 2>> "$d/ffnc.err"; then
    echo "seed $s ($target): ffnc failed: $(grep -m1 error "$d/ffnc.err")"
    failed+=("$s")
    continue
  fi
  names=$(grep -o '^ffn r[0-9]*' "$d/specs.ffn" | cut -d' ' -f2)
  # shellcheck disable=SC2086
  LD_LIBRARY_PATH=$root/build/lib/fake-cuda FFN_FAKE_CUDA_PTX=$d/k.ptx \
    FFN_FAKE_CUDA_LOG=$d/driver.log "$bin/ffn-gpu-run" "$d/k.so" $names \
    --tokens="$tokens" > "$d/out" 2>&1
  rc=$?
  echo "seed $s ($target): $(grep -c PASS "$d/out") passed, $(grep -c FAIL "$d/out") failed, exit $rc"
  if ((rc != 0)); then
    grep -v PASS "$d/out" | head -4
    grep -m1 'failed:' "$d/driver.log"
    failed+=("$s")
  fi
done
if ((${#failed[@]})); then
  echo "failing seeds: ${failed[*]}"
  exit 1
fi
