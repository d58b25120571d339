#!/usr/bin/env bash
# The Hopper body's GPU checks in one device call (docs/notes/2026-11-29-gemm-hopper-body.md):
# the GPU tests the first run did not reach, compute-sanitizer on gemm_auto's Hopper body,
# persistent against one CTA per tile, and ncu's tensor-pipe utilisation. Logs under $OUT.
#   bash benchmarks/hopper_check.sh        (with .whl carried: lark, filecheck)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PATH=$PATH:/usr/local/cuda/bin
# 1. correctness: tf32 (rounded operands), persistent, copies below 4 bytes, the tf32 bits
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gemm_hopper_gpu.py tests/gpu/test_tf32_rounding_gpu.py -k "tf32 or persistent or below_4 or rounds" "tests/gpu/test_tensor_core_gpu.py::test_gemm_auto_with_only_the_tile_against_float64" "tests/gpu/test_tensor_core_gpu.py::test_gemm_auto_f16_accumulation_against_float64" > $OUT/tests.log 2>&1; echo "tests rc=$?"; tail -3 $OUT/tests.log
# 2. compute-sanitizer on gemm_auto's Hopper body (small ragged runs; tf32 NN and TT: the
#    register A)
python3 - > $OUT/san_script.txt <<'PY'
import re, sys
sys.path.insert(0, ".")
src = open("tests/gpu/test_sanitizer_gpu.py").read()
ns = {}
exec(src[src.index('SCRIPT = """'):src.index('"""', src.index('SCRIPT = """') + 12) + 3], ns)
print(ns["SCRIPT"])
PY
RUNS='[("gemm_auto", "gemm_tn", {"A": (200, 136), "B": (300, 136), "C": (200, 300)}, (1.0, 0.5)), ("gemm_auto", "gemm_nt", {"A": (200, 72), "B": (136, 72), "C": (200, 136)}, (1.0, 0.0)), ("gemm_auto", "gemm_nn", {"A": (200, 72), "B": (136, 72), "C": (200, 136)}, (1.0, 0.5), {"T": "tf32"}), ("gemm_auto", "gemm_tt", {"A": (200, 72), "B": (136, 72), "C": (200, 136)}, (1.0, 0.5), {"T": "tf32"})]'
for tool in "memcheck --check-warpgroup-mma yes --check-bulk-copy yes" "racecheck --racecheck-memcpy-async yes" "synccheck"; do
  timeout 45 compute-sanitizer --tool $tool --error-exitcode 3 python3 -c "$(cat $OUT/san_script.txt)" "$RUNS" > $OUT/san_${tool%% *}.log 2>&1
  echo "sanitizer ${tool%% *} rc=$? $(grep -c '^ran ' $OUT/san_${tool%% *}.log) runs; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san_${tool%% *}.log | tail -1)"
done
# 3. persistent against one CTA per tile, f16 -> f32
timeout 45 python3 benchmarks/gemm.py --kernels gemm_auto.gemm_tn,gemm_auto.gemm_nt --sizes 4096,8192 --impls cutec,cublas --define PERSIST=true --repeat 10 --no-host > $OUT/persist.log 2>&1; echo "persist rc=$?"; grep -E "^\| (f16f32|bf16f32) " $OUT/persist.log
# 4. ncu: the tensor pipe of gemm_tn f16 -> f32 at 4096^3
ncu --query-metrics --chip gh100 2>/dev/null | grep -i "pipe_tensor" > $OUT/ncu_metrics.txt
M=$(grep -o "sm__pipe_tensor_op_gmma_cycles_active" $OUT/ncu_metrics.txt | head -1); M=${M:-sm__pipe_tensor_op_hmma_cycles_active}
cat > /tmp/one.py <<'PY'
import torch, cutec
k = cutec.jit("examples/gemm_auto.cute", "gemm_tn", BN=256, BK=64, BP=4)
a = torch.randn(4096, 4096, device="cuda").half(); b = torch.randn(4096, 4096, device="cuda").half()
c = torch.empty(4096, 4096, device="cuda").t()
for _ in range(3): k(a, b, c, 1.0, 0.0)
torch.cuda.synchronize()
PY
timeout 60 ncu --clock-control none -k regex:gemm_tn --launch-skip 2 -c 1 --metrics $M.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum python3 /tmp/one.py > $OUT/ncu.log 2>&1; echo "ncu rc=$?"; grep -E "pipe_tensor|sm__throughput|gpu__time" $OUT/ncu.log
# 5. the TMA epilogue (epilogue = "tma", opt-in) against the registers' one and cuBLAS, beta = 0
#    (its store maps need ldC and M multiples of 4 f32: the JIT's variant for these sizes,
#    multiples of 16, has them as facts)
sed -e 's/stream_k = STREAM_K)/stream_k = STREAM_K, epilogue = "tma")/' examples/gemm_auto.cute > /tmp/gemm_auto_tma.cute
cat > /tmp/epi_time.py <<'PY'
import torch, cutec
def ms(fn, n=20):
    for _ in range(3): fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n): fn()
    e.record(); torch.cuda.synchronize(); return s.elapsed_time(e) / n
for kern in ("gemm_tn", "gemm_nt"):
    for size in (4096, 8192):
        g = torch.Generator(device="cuda").manual_seed(size)
        a = torch.randn(size, size, generator=g, device="cuda").half(); b = torch.randn(size, size, generator=g, device="cuda").half()
        if kern == "gemm_nt": a, b = a.t().contiguous().t(), b.t().contiguous().t()
        c = torch.empty(size, size, device="cuda").t()
        row = [kern, size]
        ref = a.double() @ b.double().t()
        for src in ("examples/gemm_auto.cute", "/tmp/gemm_auto_tma.cute"):
            k = cutec.jit(src, kern, BN=256, BK=64, BP=4)
            k(a, b, c, 1.0, 0.0); err = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
            row += [round(ms(lambda: k(a, b, c, 1.0, 0.0)), 4), f"{err:.1e}"]
        cub = ms(lambda: torch.matmul(a, b.t()))  # cuBLAS, f16 out: the yardstick of both
        row += [round(cub, 4), "reg/cuBLAS", round(cub / row[2], 3), "tma/cuBLAS", round(cub / row[4], 3)]
        print(*row, flush=True)
PY
timeout 90 python3 /tmp/epi_time.py > $OUT/epi.log 2>&1; echo "epilogue timing rc=$?"; cat $OUT/epi.log | tail -6
