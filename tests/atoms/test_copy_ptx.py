"""Copy atom PTX templates: exact text, and every template assembles with ptxas for its target."""

from __future__ import annotations

import pytest

from cutec.atoms.copy import CopyAtom, copy_atom, copy_atoms
from cutec.atoms.copy_sm90 import tma_load, tma_store
from cutec.atoms.ptx_template import PtxTemplate
from tests.atoms.ptx_harness import (
    MAX_PTX_VERSION,
    assemble,
    fake_operands,
    kernel,
    ptx_version_for,
    ptxas_path,
)

TMA = [f(rank, 8192) for f in (tma_load, tma_store) for rank in range(1, 6)]
TEMPLATES: list[tuple[CopyAtom, str, PtxTemplate]] = [
    (atom, role, tpl) for atom in [*copy_atoms(), *TMA] for role, tpl in atom.templates
]
IDS = [f"{atom.name}:{role}" for atom, role, _ in TEMPLATES]


@pytest.mark.parametrize(
    ("name", "role", "values", "text"),
    [
        (
            "UniversalCopy<uint128_t>",
            "ld.global",
            {"v": ["%r0", "%r1", "%r2", "%r3"], "addr": "%rd0"},
            "ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%rd0];",
        ),
        (
            "UniversalCopy<uint64_t>",
            "st.shared",
            {"v": ["%r0", "%r1"], "addr": "%r2"},
            "st.shared.v2.b32 [%r2], {%r0, %r1};",
        ),
        (
            "UniversalCopy<uint8_t>",
            "ld.local",
            {"v": "%rs0", "addr": "%r1"},
            "ld.local.b8 %rs0, [%r1];",
        ),
        (
            "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
            "copy",
            {"dst": "%r0", "src": "%rd0"},
            "cp.async.cg.shared.global.L2::128B [%r0], [%rd0], 16;",
        ),
        (
            "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>",
            "copy",
            {"dst": "%r0", "src": "%rd0", "src_size": "%r1"},
            "cp.async.ca.shared.global.L2::128B [%r0], [%rd0], 4, %r1;",
        ),
        (
            "SM75_U32x1_LDSM_N",
            "copy",
            {"d": "%r0", "src": "%r1"},
            "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r0}, [%r1];",
        ),
        (
            "SM75_U16x8_LDSM_T",
            "copy",
            {"d": ["%r0", "%r1", "%r2", "%r3"], "src": "%r4"},
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r0, %r1, %r2, %r3}, [%r4];",
        ),
        (
            "SM90_U16x4_STSM_T",
            "copy",
            {"s": ["%r0", "%r1"], "dst": "%r4"},
            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r4], {%r0, %r1};",
        ),
    ],
)
def test_rendered_text(name: str, role: str, values: dict, text: str) -> None:
    assert copy_atom(name).template(role).render(values) == text


def test_tma_rendered_text() -> None:
    load = tma_load(1, 8192).template()
    assert load.render({"dst": "%r0", "tmap": "%rd0", "coords": "%r1", "mbar": "%r2"}) == (
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%r0], [%rd0, {%r1}], [%r2];"
    )
    store = tma_store(3, 8192).template()
    assert store.render({"tmap": "%rd0", "coords": ["%r0", "%r1", "%r2"], "src": "%r3"}) == (
        "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd0, {%r0, %r1, %r2}], [%r3];"
    )
    hinted = tma_load(2, 8192).template("copy.L2::cache_hint")
    assert hinted.operand("policy").ptx_type == "b64"
    assert hinted.operand("coords").count == 2


@pytest.mark.parametrize(("atom", "role", "tpl"), TEMPLATES, ids=IDS)
def test_every_template_renders(atom: CopyAtom, role: str, tpl: PtxTemplate) -> None:
    text = tpl.render(fake_operands(tpl))
    assert "$" not in text and text.endswith(";")
    assert ptx_version_for(atom.target(), atom.min_ptx) <= MAX_PTX_VERSION


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas not on PATH")
@pytest.mark.parametrize(("atom", "role", "tpl"), TEMPLATES, ids=IDS)
def test_every_template_assembles(atom: CopyAtom, role: str, tpl: PtxTemplate) -> None:
    # The atom's own lowest target and PTX version: proves min_arch/min_ptx suffice.
    target = atom.target()
    ptx = kernel([tpl.render(fake_operands(tpl))], target, ptx_version_for(target, atom.min_ptx))
    result = assemble(ptx, target)
    assert result.returncode == 0, f"{atom.name} {role} on {target}:\n{result.stderr}\n{ptx}"


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas not on PATH")
@pytest.mark.parametrize(
    ("name", "target"),
    [("SM90_U32x1_STSM_N", "sm_80"), ("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "sm_75")],
)
def test_below_min_arch_is_rejected_by_ptxas(name: str, target: str) -> None:
    """min_arch is not too low: one arch below, ptxas refuses the instruction."""
    atom = copy_atom(name)
    tpl = atom.template()
    ptx = kernel([tpl.render(fake_operands(tpl))], target, ptx_version_for("sm_90", (7, 8)))
    assert assemble(ptx, target).returncode != 0
