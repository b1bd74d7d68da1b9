#!/usr/bin/env bash
# Builds what a GPU machine needs to check and benchmark ffnc's NVIDIA back
# end into one folder (default .device/): the runtime, ffn-gpu-run, the
# benchmark script and kernel libraries for the example and test specs.
# Nothing in it needs LLVM, MLIR or the CUDA toolkit on the GPU machine:
# only its driver (and PyTorch for the benchmark's peer).
#
#   scripts/gpu-bundle.sh [--target=nvptx-sm90a] [out-dir]
#   then, on the GPU machine: out-dir/run-all.sh      (both of these:)
#                             out-dir/run-checks.sh   (numerics, exit 0 = pass)
#                             out-dir/run-bench.sh    (ffnc vs cuBLASLt, and
#                                                      vs PyTorch if installed)
#                             out-dir/run-pingpong.sh (sm_90a: the ping-pong
#                                                      tile's checks and A/B)
#                             out-dir/run-warpring.sh (decode: the stream's
#                                                      warp rings, checks, A/B)
#                             out-dir/run-widen.sh    (quantized: widening in
#                                                      registers, checks, A/B)
set -euo pipefail
cd "$(dirname "$0")/.."
target=nvptx-sm90a
if [[ "${1:-}" == --target=* ]]; then target=${1#--target=}; shift; fi
out=${1:-.device}
ffnc=build/bin/ffnc
mkdir -p "$out"
rm -f "$out"/*.so "$out"/*.names
cp build/bin/ffn-gpu-run build/lib/libffn_runtime.so bench/gpu/gpu_bench.py "$out"/
# ffn-gpu-bench is built where the toolkit's nvcc and cublasLt.h are.
if [[ -x build/bin/ffn-gpu-bench ]]; then cp build/bin/ffn-gpu-bench "$out"/; fi
for spec in examples/zoo.ffn examples/classic.ffn examples/grouped.ffn \
            examples/moe.ffn test/GPU/Inputs/tails.ffn \
            test/GPU/Inputs/grouped.ffn test/GPU/Inputs/invariant.ffn \
            test/GPU/Inputs/quant.ffn test/GPU/Inputs/moe.ffn \
            test/GPU/Inputs/int8-activations.ffn \
            bench/gpu/bench.ffn; do
  name=$(basename "$spec" .ffn)
  # examples/grouped.ffn and the grouped tails share a base name (so do
  # the mixtures').
  [[ $spec == test/* && -e "$out/$name.so" ]] && name="$name-tails"
  "$ffnc" "$spec" --target="$target" --emit=so -o "$out/$name.so"
  grep -o '^ *ffn [A-Za-z0-9_]*' "$spec" | awk '{print $2}' | tr '\n' ' ' >"$out/$name.names"
done
# The ping-pong wgmma tile (sm_90a; only --strategy picks it until a GPU
# has timed it): the bench's dense FFNs and the tails built with it, for
# run-pingpong.sh. The override sets every bucket's tile; the A/B compares
# the large-m buckets, where the default takes the 128 x 256 tile.
if [[ $target == nvptx-sm90a ]]; then
  for name in bert_base_gelu bert_base_gelu_f16 bert_base_postln \
              llama7b_swiglu llama7b_swiglu_f16; do
    "$ffnc" bench/gpu/bench.ffn --ffn=$name --target="$target" \
      --strategy=block_m=128,block_n=128 --emit=so -o "$out/pingpong-$name.so"
  done
  # Its ring six stages deep (193 KiB; the default rings stop at four).
  for name in bert_base_gelu llama7b_swiglu; do
    "$ffnc" bench/gpu/bench.ffn --ffn=$name --target="$target" \
      --strategy=block_m=128,block_n=128,stages=6 --emit=so \
      -o "$out/pingpong6-$name.so"
  done
  "$ffnc" test/GPU/Inputs/tails.ffn --target="$target" \
    --strategy=block_m=128,block_n=128 --emit=so -o "$out/tails-pingpong.so"
fi
# The decode stream through warp-private cp.async rings (only --strategy
# picks it until a GPU has timed it), 2, 3, 4 and 6 stages, for
# run-warpring.sh; the other buckets are the default's.
for stages in 2 3 4 6; do
  for name in bert_base_gelu llama7b_swiglu llama7b_swiglu_f16; do
    "$ffnc" bench/gpu/bench.ffn --ffn=$name --target="$target" \
      --strategy=warp_stages=$stages --emit=so \
      -o "$out/warpring$stages-$name.so"
  done
done
# Quantized weights widened in registers (only --strategy picks it until
# a GPU has timed it), for run-widen.sh: LLaMA-7B int4 on bf16 (every
# bucket) and the quantized test specs that can take it.
"$ffnc" bench/gpu/bench.ffn --ffn=llama7b_swiglu_w4 --target="$target" \
  --strategy=widen=registers --emit=so -o "$out/widen-llama7b_swiglu_w4.so"
"$ffnc" test/GPU/Inputs/widen.ffn --target="$target" \
  --strategy=widen=registers --emit=so -o "$out/widen-tails.so"
grep -o '^ *ffn [A-Za-z0-9_]*' test/GPU/Inputs/widen.ffn | awk '{print $2}' | tr '\n' ' ' >"$out/widen-tails.names"
cat >"$out/run-checks.sh" <<'SH'
#!/usr/bin/env bash
# Every kernel of every bundled spec against the f64 reference, at token
# counts covering each bucket and tile tail. The groups run side by side
# (each f64 reference is single-threaded; a GPU machine has many cores),
# each under a time limit so one hang cannot take the whole lease; their
# logs print in order at the end.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
limit=${FFN_CHECK_TIMEOUT:-400}
logs=$(mktemp -d)
n=0
group() {
  n=$((n + 1))
  (timeout "$limit" ./ffn-gpu-run "$@" >"$logs/$n.log" 2>&1
   echo $? >"$logs/$n.rc") &
  echo "$*" >"$logs/$n.cmd"
}
for lib in zoo tails grouped-tails quant int8-activations; do
  group $lib.so $(cat $lib.names) --tokens=1,7,16,17,100,129,300
  # Device pointers on a stream (ffn_kernel_run_device): the workspace the
  # runtime keeps between runs, grown and then reused as m falls.
  group $lib.so $(cat $lib.names) --tokens=17,300,1,129,16 --stream
done
group classic.so transformer_base bert_base --tokens=1,16,130
group classic.so llama2_7b_mlp --tokens=1,17
group grouped.so $(cat grouped.names) --tokens=1,16,300
# Mixtures of experts: random, skewed (one dominant expert) and tied routing.
for routing in random skewed tied; do
  group moe-tails.so $(cat moe-tails.names) --routing=$routing --tokens=1,7,16,17,100,300
done
# Mixtral's f64 reference at m = 300 takes minutes on one core: m = 65
# reaches its wgmma bucket.
for name in $(cat moe.names); do
  case $name in mixtral*) tokens=1,16,65 ;; *) tokens=1,16,300 ;; esac
  group moe.so $name --tokens=$tokens
done
# batch_invariant kernels: shared rows bit-identical across token counts
group invariant.so $(cat invariant.names) --invariance --tokens=1,7,16,100,300
wait
status=0
for i in $(seq 1 $n); do
  rc=$(cat "$logs/$i.rc")
  echo "== ffn-gpu-run $(cat "$logs/$i.cmd") (exit $rc$([ "$rc" = 124 ] && echo ", timed out after ${limit}s"))"
  cat "$logs/$i.log"
  [ "$rc" = 0 ] || status=1
done
rm -rf "$logs"
echo "gpu checks: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
SH
cat >"$out/find-cublaslt.sh" <<'SH'
# Sourced by run-bench.sh and run-pingpong.sh. cuBLASLt: $FFN_CUBLASLT, the
# toolkit's, or the one PyTorch's wheels bring
# (site-packages/nvidia/.../libcublasLt.so.*).
if [[ -z "${FFN_CUBLASLT:-}" ]]; then
  lt=$(ls /usr/local/cuda/lib64/libcublasLt.so.1[2-9] 2>/dev/null | tail -1)
  if [[ -z "$lt" ]]; then
    lt=$(python3 -c "import glob, os, site; found = [p for s in site.getsitepackages() + [site.getusersitepackages()] for p in sorted(glob.glob(os.path.join(s, 'nvidia', '**', 'libcublasLt.so.*'), recursive=True))]; print(found[-1] if found else '')" 2>/dev/null)
  fi
  if [[ -n "$lt" ]]; then export FFN_CUBLASLT=$lt; fi
fi
echo "cuBLASLt: ${FFN_CUBLASLT:-(found by dlopen in the library path)}"
SH
cat >"$out/run-bench.sh" <<'SH'
#!/usr/bin/env bash
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,power.limit,driver_version --format=csv,noheader
status=0
. ./find-cublaslt.sh
if [[ -x ./ffn-gpu-bench ]]; then
  ./ffn-gpu-bench ./bench.so \
    llama7b_swiglu:1,16,256,4096 llama7b_swiglu_f16:1,16,256,4096 \
    bert_base_gelu:1,8,128,2048,16384 bert_base_gelu_f16:1,8,128,2048,16384 \
    llama7b_swiglu_f32:1,16,512 \
    llama7b_swiglu_w4:1,16,256,4096 llama7b_swiglu_w8:1,16,256 \
    mixtral_moe:1,16,256,4096 \
    bert_base_postln:1,8,128,2048 llama7b_swiglu_rms:1,16,4096 || status=1
fi
if python3 -c 'import torch' 2>/dev/null; then
  python3 gpu_bench.py ./libffn_runtime.so ./bench.so \
    llama7b_swiglu:1,4,16,64,128,512,1024,2048,8192 bert_base_gelu:1,16,128,512,2048,8192 \
    llama7b_swiglu_f32:1,16,512 || status=1
fi
exit $status
SH
cat >"$out/run-pingpong.sh" <<'SH'
#!/usr/bin/env bash
# The ping-pong tile against the default 128 x 256 one: numerics first
# (the tails and the bench FFNs against the f64 reference), then one
# ffn-gpu-bench process timing both builds against the same cuBLASLt FFN.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0
./ffn-gpu-run tails-pingpong.so $(cat tails.names) --tokens=1,17,300,1100 || status=1
./ffn-gpu-run pingpong-bert_base_gelu.so bert_base_gelu --tokens=1100,2048 || status=1
./ffn-gpu-run pingpong-llama7b_swiglu.so llama7b_swiglu --tokens=1100 || status=1
./ffn-gpu-run pingpong6-bert_base_gelu.so bert_base_gelu --tokens=1100 || status=1
[ $status = 0 ] || { echo "ping-pong checks: FAIL"; exit 1; }
. ./find-cublaslt.sh
./ffn-gpu-bench ./bench.so \
  bert_base_gelu:1100,2048,4096,16384 bert_base_postln:2048 \
  llama7b_swiglu:1024,4096 llama7b_swiglu_f16:4096 bert_base_gelu_f16:16384 \
  --library=./pingpong-bert_base_gelu.so bert_base_gelu:1100,2048,4096,16384 \
  --library=./pingpong-bert_base_postln.so bert_base_postln:2048 \
  --library=./pingpong-llama7b_swiglu.so llama7b_swiglu:1024,4096 \
  --library=./pingpong-llama7b_swiglu_f16.so llama7b_swiglu_f16:4096 \
  --library=./pingpong-bert_base_gelu_f16.so bert_base_gelu_f16:16384 \
  --library=./pingpong6-bert_base_gelu.so bert_base_gelu:2048,16384 \
  --library=./pingpong6-llama7b_swiglu.so llama7b_swiglu:4096
SH
cat >"$out/run-warpring.sh" <<'SH'
#!/usr/bin/env bash
# The decode stream's warp rings against its loads straight into registers
# (the default): numerics first, then one ffn-gpu-bench process timing the
# default build, each ring depth and cuBLASLt at decode m.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0
for stages in 2 3 4 6; do
  ./ffn-gpu-run warpring$stages-llama7b_swiglu.so llama7b_swiglu --tokens=1,16 || status=1
  ./ffn-gpu-run warpring$stages-bert_base_gelu.so bert_base_gelu --tokens=1,8 || status=1
done
./ffn-gpu-run warpring4-llama7b_swiglu_f16.so llama7b_swiglu_f16 --tokens=1 || status=1
[ $status = 0 ] || { echo "warp ring checks: FAIL"; exit 1; }
. ./find-cublaslt.sh
libs=()
for stages in 2 3 4 6; do
  libs+=(--library=./warpring$stages-llama7b_swiglu.so llama7b_swiglu:1,16
         --library=./warpring$stages-bert_base_gelu.so bert_base_gelu:1,8)
done
./ffn-gpu-bench ./bench.so llama7b_swiglu:1,16 llama7b_swiglu_f16:1 \
  bert_base_gelu:1,8 "${libs[@]}" \
  --library=./warpring4-llama7b_swiglu_f16.so llama7b_swiglu_f16:1
SH
cat >"$out/run-widen.sh" <<'SH'
#!/usr/bin/env bash
# Quantized weights widened in registers against the default (converted
# tiles in shared memory): numerics first, then one ffn-gpu-bench process
# timing both builds of LLaMA-7B int4 against the same cuBLASLt FFN.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0
./ffn-gpu-run widen-tails.so $(cat widen-tails.names) --tokens=1,7,16,17,100,129,300 || status=1
./ffn-gpu-run widen-llama7b_swiglu_w4.so llama7b_swiglu_w4 --tokens=1,16,256 || status=1
[ $status = 0 ] || { echo "widen checks: FAIL"; exit 1; }
. ./find-cublaslt.sh
./ffn-gpu-bench ./bench.so llama7b_swiglu_w4:1,16,256,1024,4096 \
  --library=./widen-llama7b_swiglu_w4.so llama7b_swiglu_w4:1,16,256,1024,4096
SH
cat >"$out/run-all.sh" <<'SH'
#!/usr/bin/env bash
# The GPU suite, then the benchmark: what a lent GPU machine runs.
cd "$(dirname "$0")"
status=0
./run-checks.sh || status=1
./run-bench.sh || status=1
exit $status
SH
chmod +x "$out"/run-checks.sh "$out"/run-bench.sh "$out"/run-all.sh \
  "$out"/run-pingpong.sh "$out"/run-warpring.sh "$out"/run-widen.sh
echo "bundle for $target in $out ($(du -sh "$out" | cut -f1))"
