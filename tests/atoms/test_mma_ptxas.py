"""Every MMA atom's PtxTemplate, rendered into a kernel, assembles with ptxas for its target."""

from __future__ import annotations

import pytest

from cutec.atoms.mma import MmaAtom, mma_atoms
from tests.atoms.ptx_harness import assemble, fragment_kernel, ptxas_path

pytestmark = pytest.mark.skipif(ptxas_path() is None, reason="ptxas not on PATH")

WGMMA_BEFORE = ("wgmma.fence.sync.aligned;",)
WGMMA_AFTER = ("wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;")


def mma_kernel(atom: MmaAtom, name: str = "atom_test"):
    """The fragment kernel of `atom`: loads A, B, C (and wgmma's scale-d), stores D."""
    names = [op.name for op in atom.ptx.operands]
    inputs = [n for n in names if n != "d"]
    if atom.min_target.name == "sm_90a":
        # wgmma accumulates into D in place: D is loaded too, and fenced before the MMA.
        return fragment_kernel(
            atom.ptx,
            arch=atom.ptxas_arch,
            inputs=["d", *inputs],
            outputs=["d"],
            before=WGMMA_BEFORE,
            after=WGMMA_AFTER,
            name=name,
        )
    return fragment_kernel(atom.ptx, arch=atom.ptxas_arch, inputs=inputs, outputs=["d"], name=name)


def _assemble_family(atoms: list[MmaAtom]) -> None:
    # One module per target with one kernel per atom keeps ptxas runs few and fast.
    by_arch: dict[str, list[str]] = {}
    for i, atom in enumerate(atoms):
        by_arch.setdefault(atom.ptxas_arch, []).append(mma_kernel(atom, f"k{i}").ptx)
    for arch, modules in by_arch.items():
        header_end = modules[0].index(".visible")
        ptx = modules[0][:header_end] + "".join(m[m.index(".visible") :] for m in modules)
        result = assemble(ptx, arch)
        assert result.returncode == 0, f"{arch}: {result.stderr[:2000]}"


@pytest.mark.parametrize("family", ["UniversalFMA", "SM70", "SM80"])
def test_mma_sync_atoms_assemble(family: str) -> None:
    _assemble_family([a for a in mma_atoms().values() if a.name.startswith(family)])


def test_wgmma_atoms_assemble() -> None:
    atoms = [a for a in mma_atoms().values() if a.min_target.name == "sm_90a"]
    # Every N, dtype, source and majors at the smallest and largest N; the rest by N.
    picked = [a for a in atoms if a.shape_mnk[1] in (8, 256)]
    picked += [a for a in atoms if a.name.endswith("F32F16F16_SS_TN")]
    _assemble_family(picked)


@pytest.mark.slow
def test_every_wgmma_atom_assembles() -> None:
    _assemble_family([a for a in mma_atoms().values() if a.min_target.name == "sm_90a"])


def test_rendered_instruction_text() -> None:
    atom = mma_atoms()["SM90_64x8x16_F16F16F16_SS_NT"]
    text = atom.ptx.render({"d": ["%r0", "%r1"], "a": "%rd0", "b": "%rd1", "scale_d": "%p0"})
    assert text == (
        "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r0, %r1}, %rd0, %rd1, %p0, 1, 1, 1, 1;"
    )
    rs = mma_atoms()["SM90_64x8x32_F32E4M3E5M2_RS_TN"].ptx.text
    assert rs == "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2 $d, $a, $b, $scale_d, 1, 1;"
    volta = mma_atoms()["SM70_8x8x4_F32F16F16F32_NT"].ptx.text
    assert volta == "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32 $d, $a, $b, $c;"
