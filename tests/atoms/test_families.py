"""Atom families (cutec/atoms/family.py): every record names one, and the traits agree
with the records and their PTX."""

from __future__ import annotations

from cutec.atoms.copy import (
    CopyAtom,
    box_copy_names,
    copy_atom,
    copy_atoms,
    copy_family,
    is_copy_template,
)
from cutec.atoms.family import FAMILY_TRAITS, Family, IssueGroup
from cutec.atoms.mma import MmaAtom, mma_atoms
from cutec.atoms.mma_sm90 import name_over_n
from cutec.cpu import codegen_collective, codegen_ops, codegen_tma, collective, reference


def _all_atoms() -> list[MmaAtom | CopyAtom]:
    boxes = [copy_atom(name, bits=1024) for name in box_copy_names()]
    return [*mma_atoms().values(), *copy_atoms(), *boxes]


def test_every_family_has_traits_and_atoms() -> None:
    assert set(FAMILY_TRAITS) == set(Family)
    assert {a.family for a in _all_atoms()} == set(Family)


def test_traits_agree_with_every_record() -> None:
    for atom in _all_atoms():
        _check_traits(atom)


def _check_traits(atom: MmaAtom | CopyAtom) -> None:
    traits = atom.traits
    assert traits.kind == ("mma" if isinstance(atom, MmaAtom) else "copy")
    assert traits.group.threads == atom.num_threads
    texts = [atom.ptx.text] if isinstance(atom, MmaAtom) else [t.text for _, t in atom.templates]
    opcodes = {text.split()[0] for text in texts}
    if atom.family is Family.UNIVERSAL_COPY:  # ld.<space> / st.<space>, one per role
        assert {op.split(".")[0] for op in opcodes} == {"ld", "st"}
    elif atom.family is Family.UNIVERSAL_FMA:  # s32: mad.lo, C's int a*b+c
        assert opcodes <= {"fma.rn.f32", "fma.rn.f64", "fma.rn.f16", "mad.lo.s32"}
    else:
        assert all(op.startswith(traits.instruction + ".") for op in opcodes), atom.name
    if isinstance(atom, CopyAtom):
        text = texts[0]
        assert atom.transpose == (".trans" in text)
        assert atom.zfill == ("$src_size" in text)
        assert atom.cache == (text.split(".")[2] if atom.family is Family.CP_ASYNC else None)


def test_families_tell_the_instructions_apart() -> None:
    assert copy_atom("SM75_U16x8_LDSM_T").transpose and not copy_atom("SM75_U32x4_LDSM_N").transpose
    zfill = copy_atom("SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>")
    assert (zfill.family, zfill.cache, zfill.zfill) == (Family.CP_ASYNC, "cg", True)
    assert zfill.async_completion == "cp.async.group"
    assert mma_atoms()["SM70_8x8x4_F32F16F16F32_TN"].family is Family.QUADPAIR_MMA
    assert mma_atoms()["SM80_8x8x4_F64F64F64F64_TN"].family is Family.MMA_SYNC
    assert Family.WGMMA.traits.group is IssueGroup.WARPGROUP
    assert copy_atom("SM90_TMA_STORE_3D", bits=1024).async_completion == "bulk_group"


def test_lookups_by_name() -> None:
    assert copy_family("SM90_TMA_LOAD_5D") is Family.TMA_LOAD
    assert copy_family("SM90_TMA_LOAD_6D") is None and copy_family("auto") is None
    assert copy_family("UniversalCopy<uint32_t>") is Family.UNIVERSAL_COPY
    assert is_copy_template("UniversalCopy") and is_copy_template("SM80_CP_ASYNC_CACHEGLOBAL")
    assert not is_copy_template("SM75_U32x4_LDSM_N") and not is_copy_template("UniversalFMA")
    wgmma = mma_atoms()["SM90_64x136x16_F32BF16BF16_RS_TN"]
    assert name_over_n(wgmma) == "SM90_64xNx16_F32BF16BF16_RS_TN"


def test_both_cpu_backends_run_the_same_families() -> None:
    runs = codegen_ops._THREAD_ATOM_CODE.keys() | codegen_tma.TMA_ATOM_CODE.keys()
    assert reference._THREAD_ATOM_RULES.keys() == runs | codegen_ops.INTERPRETER_ONLY
    assert not codegen_ops.INTERPRETER_ONLY & runs
    assert not codegen_ops._THREAD_ATOM_CODE.keys() & codegen_tma.TMA_ATOM_CODE.keys()
    assert collective.WARP_RULES.keys() == codegen_collective._WARP_CODE.keys()
    # a warpgroup instruction (wgmma) runs as each warp's part (cutec/cpu/wgmma.py)
    groups = {IssueGroup.WARP, IssueGroup.WARPGROUP}
    assert all(f.traits.group in groups for f in collective.WARP_RULES)
    assert all(f.traits.group is IssueGroup.THREAD for f in reference._THREAD_ATOM_RULES)
