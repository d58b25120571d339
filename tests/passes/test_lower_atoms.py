"""lower-to-thread's ldmatrix and mma.sync rules (cutec/passes/lower_atoms.py): the IR
they make, and each user mistake as one located diagnostic. Their values are tested
in tests/cpu/test_collective.py."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects import thread
from cutec.ir.dialects.builtin import KernelOp
from tests.cpu.mma_cases import MMA_ATOM_KERNEL, MMA_CASES


def _thread_ir(**defines: object) -> KernelOp:
    module = compile(Source.from_file(MMA_ATOM_KERNEL), Stage.THREAD, Options(defines=defines))
    (kernel,) = module.module.walk_type(KernelOp)  # type: ignore[union-attr]
    return kernel


def test_one_atom_op_per_instruction_with_packed_registers() -> None:
    """x4 ldmatrix of A: 4 registers of vector<2xf16>; x2 of B: 2; one mma.sync taking
    4 + 2 packed registers and 4 f32 accumulators."""
    atoms = list(_thread_ir(**MMA_CASES["f16_f32acc_x4_x2"]).walk_type(thread.AtomOp))
    shapes = [(a.atom.value, [str(v.type) for v in a.args], [str(r.type) for r in a.outs])
              for a in atoms]  # fmt: skip
    half2 = "vector<2xf16>"
    assert shapes == [
        ("SM75_U32x4_LDSM_N", ["!gpu.ptr<f16, shared>"], [half2] * 4),
        ("SM75_U32x2_LDSM_N", ["!gpu.ptr<f16, shared>"], [half2] * 2),
        ("SM80_16x8x16_F32F16F16F32_TN", [half2] * 6 + ["f32"] * 4, ["f32"] * 4),
    ]
    assert all(a.memory_effects() == () for a in atoms[2:])  # mma.sync: registers only
    assert [e.space.value for e in atoms[0].memory_effects()] == ["shared"]


def test_s8_registers_are_four_bytes() -> None:
    (ldsm_a, _ldsm_b, mma) = _thread_ir(**MMA_CASES["s8_k32"]).walk_type(thread.AtomOp)
    assert {str(r.type) for r in ldsm_a.outs} == {"vector<4xi8>"}
    assert [str(v.type) for v in mma.args][-4:] == ["i32"] * 4


@pytest.mark.parametrize(
    ("defines", "message"),
    [
        # an MN-major tile read by the non-transposing ldmatrix: rows are not contiguous
        (
            {"sA_layout": "(16, 16) : (1, 16)"},
            "SM75_U32x4_LDSM_N reads 16-byte rows of shared memory, but 8 consecutive elements",
        ),
        # .trans of 32-bit elements does not exist (the frontend's copy_atom check)
        (
            {**MMA_CASES["tf32_k8"], "LDSM_A": "SM75_U16x4_LDSM_T"},
            "SM75_U16x4_LDSM_T is not valid for Dst of 32-bit values",
        ),
    ],
)
def test_mistakes_are_located_errors(defines: dict, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile(Source.from_file(MMA_ATOM_KERNEL), Stage.PTX, Options(defines=defines))
    rendered = info.value.render()
    assert rendered.startswith(f"{MMA_ATOM_KERNEL}:") and message in rendered
    assert rendered.splitlines()[-1].strip().endswith("^")
