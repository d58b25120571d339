set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/gpu/test_gemm_hopper_gpu.py "tests/gpu/test_tensor_core_gpu.py::test_gemm_auto_with_only_the_tile_against_float64" > $OUT/tests.log 2>&1; echo "tests rc=$?"; tail -5 $OUT/tests.log
timeout 110 python3 benchmarks/gemm.py --kernels gemm_auto.gemm_nt,gemm_auto.gemm_tn,gemm_auto.gemm_nn,gemm_auto.gemm_tt --sizes 4096,8192 --impls cutec,cublas,triton --repeat 10 --no-host > $OUT/bench.log 2>&1; echo "bench rc=$?"; tail -45 $OUT/bench.log
