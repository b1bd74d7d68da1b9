#!/usr/bin/env bash
# Writes the objects, headers and LLVM IR that ffnc generates for every example
# and integration spec on every target into DIR, so that a refactoring can be
# checked byte for byte: run it before and after, then `diff -r BEFORE AFTER`.
#   scripts/snapshot-objects.sh [--ffnc=PATH] DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ffnc=$root/build/bin/ffnc
case "${1:-}" in --ffnc=*) ffnc=${1#--ffnc=}; shift ;; esac
out=${1:?usage: snapshot-objects.sh [--ffnc=PATH] DIR}
mkdir -p "$out"
specs=("$root"/examples/*.ffn "$root"/examples/embed/*.ffn \
       "$root"/test/Integration/*.ffn "$root"/test/GPU/Inputs/*.ffn)
targets=(x86-64-avx2 x86-64-avx512 x86-64-avx512-bf16 nvptx-sm80 nvptx-sm90 nvptx-sm90a)
for spec in "${specs[@]}"; do
  name=$(basename "$(dirname "$spec")")-$(basename "$spec" .ffn)
  for t in "${targets[@]}"; do
    # Threads are pinned so the snapshot does not depend on this machine's cores.
    common=(--target="$t" --kernel-threads=4 "$spec")
    "$ffnc" --emit=obj -o "$out/$name.$t.o" --header="$out/$name.$t.h" \
      "${common[@]}" 2>"$out/$name.$t.stderr" || echo "exit $?" >>"$out/$name.$t.stderr"
    if [[ $t == x86* ]]; then
      "$ffnc" --emit=llvm -o "$out/$name.$t.ll" "${common[@]}" 2>/dev/null || true
    fi
  done
done
ls "$out" | wc -l
