#!/usr/bin/env bash
# ptxas -v over every kernel ffnc generates for the example, test and bench
# spec files and for random spec files, on sm_80 and sm_90a: one line a
# kernel (spec file, arch, kernel, registers, spill bytes, stack bytes) in
# OUT/kernels.txt, then the kernels and file/arch pairs that spill. Compare
# two builds' kernels.txt to see what a change does to ptxas's register
# budget (docs/gpu.md, "Spills"). Needs a build and the CUDA toolkit's
# ptxas; the default 41 files took about 9 minutes as two runs, one arch
# each, on two cores (2026-11-30).
#   scripts/ptxas-sweep.sh [OUT=build/ptxas-sweep] [FFNC=build/bin/ffnc] \
#       [SEEDS="201-210 301-320"] [ARCHS="sm_80 sm_90a"]
# (two runs with one arch each and their own OUT use both cores).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/ptxas-sweep}
ffnc=${2:-$root/build/bin/ffnc}
seeds=${3:-201-210 301-320}
archs=${4:-sm_80 sm_90a}
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
mkdir -p "$out"
files=("$root"/examples/{zoo,classic,grouped,moe}.ffn
       "$root"/test/GPU/Inputs/{tails,grouped,quant,int8-activations,moe}.ffn
       "$root"/bench/gpu/bench.ffn "$root"/compiler/tools/ffn-bench/bench.ffn)
for range in $seeds; do
  for ((s = ${range%-*}; s <= ${range#*-}; ++s)); do
    python3 "$root/test/GPU/Inputs/sim/random_specs.py" "$s" 6 > "$out/seed$s.ffn"
    files+=("$out/seed$s.ffn")
  done
done
: > "$out/kernels.txt"
for f in "${files[@]}"; do
  # Two spec files share a name (examples/ and test/GPU/Inputs/): keep
  # the folder in the label.
  label=$(basename "$(dirname "$f")")/$(basename "$f" .ffn)
  for arch in $archs; do
    ptx=$out/$(echo "$label" | tr / _)-$arch.ptx
    if ! "$ffnc" "$f" --target=nvptx-${arch/_/} --emit=ptx -o "$ptx" 2>/dev/null; then
      echo "$label $arch ffnc-failed" >> "$out/kernels.txt"
      continue
    fi
    python3 "$root/test/GPU/Inputs/ptxas_check.py" "$ptxas" "$arch" "$ptx" \
        --per-kernel | grep -v "^$arch:" | sed "s|^|$label $arch |" \
        >> "$out/kernels.txt" || true
  done
done
kernels=$(grep -vc ffnc-failed "$out/kernels.txt" || true)
echo "$kernels kernels, $(grep -c ffnc-failed "$out/kernels.txt" || true) ffnc failures"
echo "spilling kernels (file arch kernel registers spill-bytes stack-bytes):"
awk '$5 > 0 || $6 > 0' "$out/kernels.txt"
echo "file/arch pairs with a spill: $(awk '$5 > 0 || $6 > 0 {print $1, $2}' \
    "$out/kernels.txt" | sort -u | wc -l) of $((${#files[@]} * $(echo $archs | wc -w)))"
