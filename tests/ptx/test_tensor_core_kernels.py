"""The tensor-core path assembles: every case of the single-warp ldmatrix + mma.sync
kernel (tests/cpu/mma_cases.py: f16 with f32 and f16 accumulators, bf16, tf32, s8;
ldmatrix x1/x2/x4 and .trans) and examples/sgemm_sm80.cute at its default tile sizes,
for sm_80 and sm_90a, without spills; the instructions are the atoms' own templates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutec.atoms.copy import copy_atom
from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import find_ptxas
from tests.cpu.mma_cases import MMA_ATOM_KERNEL, MMA_CASES, MMA_REGISTERS_KERNEL, case_atom

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

EXAMPLES = Path(__file__).parents[2] / "examples"
TARGETS = ["sm_80", "sm_90a"]


def _opcode(template_text: str) -> str:
    return template_text.split()[0]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(MMA_CASES))
def test_single_warp_mma_kernel_assembles(case: str, target: str) -> None:
    params = MMA_CASES[case]
    result = compile(
        Source.from_file(MMA_ATOM_KERNEL), Stage.CUBIN, Options(defines=params, target=target)
    )
    assert result.ptx is not None and result.cubin is not None and result.resources
    for usage in result.resources.values():
        assert not usage.spills and usage.stack_frame == 0, usage
    ptx = result.ptx
    assert ptx.count(_opcode(case_atom(case).ptx.text)) == 1  # one mma.sync
    for which in ("LDSM_A", "LDSM_B"):
        name = params.get(which, {"LDSM_A": "SM75_U32x4_LDSM_N"}.get(which, "SM75_U32x2_LDSM_N"))
        assert _opcode(copy_atom(name).template().text) in ptx, name


@pytest.mark.parametrize("target", TARGETS)
def test_f64_mma_kernel_assembles(target: str) -> None:
    result = compile(Source.from_file(MMA_REGISTERS_KERNEL), Stage.CUBIN, Options(target=target))
    assert result.ptx is not None and result.resources
    assert result.ptx.count("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64") == 1
    for usage in result.resources.values():
        assert not usage.spills and usage.stack_frame == 0, usage


@pytest.mark.parametrize("target", TARGETS)
def test_sgemm_sm80_k_loop_is_ldmatrix_and_mma_sync(target: str) -> None:
    """The k-loop of the 128x128x64 tile: per k-tile each thread issues 4 k-blocks x
    (4 ldmatrix.x4 of A + 4 of B) and 4 x 4 x 8 mma.sync m16n8k16, and 8 + 8 cp.async of
    16 bytes (the .ca atom, as written); one wait_group 1 and one barrier."""
    ptx = compile(
        Source.from_file(EXAMPLES / "sgemm_sm80.cute"), Stage.PTX, Options(target=target)
    ).ptx
    assert ptx is not None
    head = re.search(r"^(\$L_for_\d+):", ptx, re.M)
    assert head is not None
    loop = ptx[head.end() : ptx.index(f"bra {head.group(1)};")]
    assert loop.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4 * 8
    assert loop.count("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") == 4 * 4 * 8
    assert loop.count("cp.async.ca.shared.global [") == 16
    assert loop.count("cp.async.wait_group 1;") == 1 and loop.count("bar.sync 0;") == 1
