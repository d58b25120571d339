"""Bad launch arguments (issue 26): what the launch refuses, by name, and what it must run.

Each case is run on the CPU backend where it can be (device="cpu" runs the kernel and
checks it), else through the GPU launch function with the driver replaced by a
recorder (tests/runtime/test_jit_cpu.py's `_fake_gpu`): the same generated code a GPU
launch runs, up to cuLaunchKernel. The C launcher's share is in test_fast_launch.py;
tests/gpu/test_launch_args_gpu.py runs the torch cases on a GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cutec.driver import Options, Source, Stage, compile
from cutec.ir.signature import KernelSignature

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own disk cache, and no kernel object shared with another test."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})


# --------------------------------------------------------------------------- outputs
# Written through a view made in a loop and by an atomic only; read by an atomic load.
ACCESSES = """
kernel k(A: f32[N] : (1), B: f32[N] : (1), H: s32[N] : (1), F: s32[N] : (1),
         P: s32[N] : (1))
  grid 1 threads 32
{
  for i in range(2) {
    t = local_tile(B, 16, i)
    t[thread.x % 16] = A[thread.x]
  }
  atomic_add(H, thread.x, 1)
  x = atomic_load(F, 0)
  atomic_store(P, 0, x)
}
"""


def test_the_signature_says_which_parameters_the_kernel_writes() -> None:
    """A parameter is written when an op writes global memory through a view of it:
    `write`, or `atomic` when only atomics write it; an atomic load only reads."""
    result = compile(Source(ACCESSES, "a.cute"), Stage.CUTE, Options())
    sig = result.signatures["k"]
    access = {p.name: p.access for p in sig.params}
    assert access == {"A": "read", "B": "write", "H": "atomic", "F": "read", "P": "atomic"}
    assert KernelSignature.from_json(sig.to_json()) == sig
    data = sig.to_json()
    data["params"][0]["access"] = "sometimes"
    with pytest.raises(ValueError, match="parameter 'A': access 'sometimes'"):
        KernelSignature.from_json(data)
    tn = compile(Source.from_file(EXAMPLES / "gemm_auto.cute"), Stage.CUTE,
                 Options(kernel="gemm_tn", pipeline=""))  # fmt: skip
    assert [p.access for p in tn.signatures["gemm_tn"].params[:3]] == ["read", "read", "write"]
