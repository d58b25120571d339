"""compute-sanitizer over every lowered example: no out-of-bounds or misaligned access
(memcheck), no shared-memory hazard (racecheck), on sizes the tiles divide and sizes
they do not, up to 512 in each dimension so that a run takes minutes, not hours.

One process per tool runs every example through `cutec.jit` on cutec.DeviceArray
inputs (no torch: the sanitizer then watches cutec's launches only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).parents[2]

# (example, kernel, extents of each tensor, scalars): ragged and whole-tile sizes.
RUNS = [
    ("sgemm_1", "sgemm_nt", {"A": (260, 45), "B": (132, 45), "C": (260, 132)}, (1.0, 0.5)),
    ("sgemm_1", "sgemm_tn", {"A": (200, 37), "B": (136, 37), "C": (200, 136)}, (1.0, 0.0)),
    ("sgemm_2", "sgemm_nt", {"A": (512, 64), "B": (256, 64), "C": (512, 256)}, (1.0, 0.5)),
    ("sgemm_2", "sgemm_nt", {"A": (132, 29), "B": (260, 29), "C": (132, 260)}, (1.0, 0.0)),
    ("sgemm_2", "sgemm_tn", {"A": (300, 29), "B": (140, 29), "C": (300, 140)}, (1.0, 0.5)),
    ("sgemm_2_shared", "sgemm_nt", {"A": (388, 72), "B": (128, 72), "C": (388, 128)}, (1.0, 1.0)),
    ("sgemm_pipelined", "sgemm_nt", {"A": (256, 96), "B": (128, 96), "C": (256, 128)}, (1.0, 0.5)),
    ("sgemm_pipelined", "sgemm_tn", {"A": (128, 32), "B": (256, 32), "C": (128, 256)}, (1.0, 0.0)),
    ("sgemm_pipeline_pass", "sgemm_nt",
     {"A": (256, 96), "B": (128, 96), "C": (256, 128)}, (1.0, 0.5)),
    ("sgemm_pipeline_pass", "sgemm_tn",
     {"A": (128, 32), "B": (256, 32), "C": (128, 256)}, (1.0, 0.0)),
    ("sgemm_pipeline_pass", "sgemm_nt_any",
     {"A": (132, 29), "B": (260, 29), "C": (132, 260)}, (1.0, 0.5)),
    ("sgemm_pipeline_pass", "sgemm_tn_any",
     {"A": (300, 45), "B": (140, 45), "C": (300, 140)}, (1.0, 0.0)),
    ("sgemm_sm80", "hgemm_tn", {"A": (256, 128), "B": (128, 128), "C": (256, 128)}, (1.0, 0.5)),
    ("hgemm_pipeline_pass", "hgemm_tn",
     {"A": (256, 128), "B": (128, 128), "C": (256, 128)}, (1.0, 0.5)),
    # the whole-tensor gemm: cp.async pipeline, ldmatrix, mma.sync, the epilogue's
    # shared chunk between barriers, 16-byte predicated stores (NT) and scalar (TN)
    ("gemm_auto", "gemm_nt", {"A": (200, 72), "B": (136, 72), "C": (200, 136)}, (1.0, 0.5)),
    ("gemm_auto", "gemm_tn", {"A": (130, 64), "B": (72, 64), "C": (130, 72)}, (1.0, 0.0)),
    ("auto_atoms", "gemm_tn", {"A": (256, 64), "B": (128, 64), "C": (256, 128)}, (1.0, 0.5)),
    ("tiled_copy", "copy_kernel", {"S": (512, 256), "D": (512, 256)}, ()),
    ("tiled_copy", "copy_kernel_vectorized", {"S": (512, 256), "D": (512, 256)}, ()),
    ("tiled_copy", "copy_if_kernel_vectorized", {"S": (132, 70), "D": (132, 70)}, ()),
    ("elementwise", "axpy", {"x": (5000,), "y": (5000,), "z": (5000,)}, (0.75,)),
    ("transpose", "transpose", {"S": (256, 96), "D": (96, 256)}, ()),
    # tiles of slices of rank-3 tensors (issue 26: they were not predicated)
    ("batched_gemm", "bgemm_nt",
     {"A": (130, 41, 3), "B": (75, 41, 3), "C": (130, 75, 3)}, (1.0, 0.5)),
]  # fmt: skip

SCRIPT = """
import sys
import numpy as np
import cutec
from cutec.commands.run_args import layouts
from cutec.commands.run_launch import _random
runs = eval(sys.argv[1])
rng = np.random.default_rng(0)
for example, kernel, shapes, scalars, *defines in runs:  # defines: compile-time parameters
    k = cutec.jit(f"examples/{example}.cute", kernel=kernel, **(defines[0] if defines else {}))
    laid = layouts(list(k.signature.params), {n: list(s) for n, s in shapes.items()}, {})
    args = []
    for p in k.signature.params:
        if p.name in laid:
            shape, strides = laid[p.name]
            span = 1 + sum((e - 1) * s for e, s in zip(shape, strides))
            flat = _random(p.element, span, rng)
            a = cutec.DeviceArray(shape, p.element, strides)
            cutec.runtime.cuda.check(cutec.runtime.cuda.driver().cuMemcpyHtoD(
                a.ptr, flat.ctypes.data, flat.nbytes), "copy")
            args.append(a)
    k(*args, *scalars)
    cutec.synchronize()
    print("ran", example, kernel, flush=True)
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_examples_are_clean_under_compute_sanitizer(tool: str) -> None:
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer is not on PATH")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sanitizer, "--tool", tool, "--error-exitcode", "3", sys.executable, "-c", SCRIPT,
         repr(RUNS)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    report = proc.stdout + proc.stderr
    print(report[-3000:])
    assert proc.returncode == 0, report[-6000:]
    assert report.count("ran ") == len(RUNS)
    assert "ERROR SUMMARY: 0 errors" in report or "RACECHECK SUMMARY: 0 hazards" in report


# The Hopper examples (compute capability 9.0 only), with the tools' checks of wgmma
# operands, bulk copies and asynchronous shared-memory writes switched on.
HOPPER_RUNS = [
    ("wgmma_sm90", "hgemm_nt", {"A": (256, 192), "B": (128, 192), "C": (256, 128)}, (1.0, 0.5)),
    ("wgmma_sm90", "hgemm_tn", {"A": (128, 256), "B": (256, 256), "C": (128, 256)}, (1.0, 0.0)),
    ("wgmma_tma_sm90", "hgemm_nt", {"A": (200, 72), "B": (136, 72), "C": (200, 136)}, (1.0, 0.5)),
    ("wgmma_tma_sm90", "hgemm_tn", {"A": (136, 200), "B": (72, 200), "C": (136, 72)}, (1.0, 0.0)),
    ("gemm_ws_sm90", "gemm_ws_tn", {"A": (200, 136), "B": (300, 136), "C": (200, 300)}, (1.0, 0.5)),
    ("gemm_auto", "gemm_tn", {"A": (200, 136), "B": (300, 136), "C": (200, 300)}, (1.0, 0.5)),
    ("gemm_auto", "gemm_nt", {"A": (200, 72), "B": (136, 72), "C": (200, 136)}, (1.0, 0.0)),
]  # fmt: skip
HOPPER_TOOLS = {
    "memcheck": ["--check-warpgroup-mma", "yes", "--check-bulk-copy", "yes"],
    "racecheck": ["--racecheck-memcpy-async", "yes"],
    "synccheck": [],
}


@pytest.mark.parametrize("tool", sorted(HOPPER_TOOLS))
def test_hopper_examples_are_clean_under_compute_sanitizer(tool: str) -> None:
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer is not on PATH")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the Hopper examples need compute capability 9.0")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sanitizer, "--tool", tool, *HOPPER_TOOLS[tool], "--error-exitcode", "3",
         sys.executable, "-c", SCRIPT, repr(HOPPER_RUNS)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    report = proc.stdout + proc.stderr
    print(report[-3000:])
    assert proc.returncode == 0, report[-6000:]
    assert report.count("ran ") == len(HOPPER_RUNS)
