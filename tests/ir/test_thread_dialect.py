"""The thread dialect's verifier and the atom op's signature."""

from __future__ import annotations

import pytest

from cutec.atoms.copy import copy_atom
from cutec.atoms.mma import mma_atoms
from cutec.ir.core import VerifyError
from cutec.ir.dialects import thread
from cutec.ir.parser import parse_module
from cutec.ir.traits import AddressSpace, EffectKind
from cutec.ir.verifier import verify

SIG = (
    "(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>, %d: !gpu.ptr<f64, global>, "
    "%x: f32, %i: i32, %p: i1, %r: !gpu.ptr<f32, reg>, %gen: !gpu.ptr<f32, generic>)"
)


def _kernel(body: str) -> str:
    return f"module {{\n  kernel @k{SIG} {{\n    {body}\n    return\n  }}\n}}\n"


CASES = [
    (
        "%v = thread.load %g : !gpu.ptr<f32, global> -> vector<3xf32>",
        "vector accesses are .v2 or .v4 (or 8 16-bit elements in pairs), not vector<3xf32>",
    ),
    (
        "%v = thread.load %g : !gpu.ptr<f32, global> -> vector<8xf32>",
        "vector accesses are .v2 or .v4 (or 8 16-bit elements in pairs), not vector<8xf32>",
    ),
    (
        "%v = thread.load %d : !gpu.ptr<f64, global> -> vector<4xf64>",
        "vector<4xf64> is wider than 128 bits",
    ),
    (
        "%v = thread.load %g : !gpu.ptr<f32, global> -> vector<2xi32>",
        "accesses vector<2xi32> through a pointer to f32",
    ),
    (
        "%v = thread.load %r : !gpu.ptr<f32, reg> -> f32",
        "cannot access memory through a reg pointer",
    ),
    ("thread.store %i, %g : i32, !gpu.ptr<f32, global>", "accesses i32 through a pointer to f32"),
    (
        "%v = thread.load_if %p, %g, %i : !gpu.ptr<f32, global> -> f32",
        "default i32 is not the result's f32",
    ),
    (
        "thread.store_if %p, %x, %r : f32, !gpu.ptr<f32, reg>",
        "cannot access memory through a reg pointer",
    ),
    (
        "%q = thread.cvta %g : !gpu.ptr<f32, global> to !gpu.ptr<f32, shared>",
        "converts between generic and a state space, not global to shared",
    ),
    (
        "%q = thread.cvta %gen : !gpu.ptr<f32, generic> to !gpu.ptr<f32, reg>",
        "cvta has no reg form",
    ),
    (
        "%q = thread.cvta %s : !gpu.ptr<f32, shared> to !gpu.ptr<i32, generic>",
        "keeps the element type (f32); ptr_cast changes it",
    ),
    (
        "%q = thread.ptr_cast %s : !gpu.ptr<f32, shared> to !gpu.ptr<i32, global>",
        "keeps the address space (shared); cvta changes it",
    ),
    (
        "%t = thread.cp_async cg %s, %g {bytes = 8"
        " : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>",
        "cp.async.cg copies 16 bytes, not 8",
    ),
    (
        '%t = "thread.cp_async"(%s, %g, %x) {bytes = 16'
        " : i32} : (!gpu.ptr<f32, shared>, !gpu.ptr<f32, global>, f32) -> !gpu.token",
        "operand 'src_size' must be i32, got f32",
    ),
    (
        "%a = thread.alloc_shared {bytes = 64 : i64, align = 12 : i64} : !gpu.ptr<f32, shared>",
        "attribute 'align' must be a power of 2",
    ),
    (
        "%a = thread.alloc_shared {bytes = 64 : i64, align = 16 : i64} : !gpu.ptr<f32, global>",
        "allocates shared memory, not global",
    ),
    ("%v = thread.from_elements %x, %x : vector<4xf32>", "vector<4xf32> takes 4 elements, got 2"),
    ("%v = thread.from_elements %x, %i : vector<2xf32>", "element #1 is i32, not f32"),
    (
        "%v = thread.from_elements %x, %x"
        " : vector<2xf32>\n    %e = thread.extract %v {pos = 2 : i64} : vector<2xf32>",
        "position 2 is outside vector<2xf32>",
    ),
    (
        '%d0 = thread.atom "NoSuchAtom"(%x) {role = "mma"} : (f32) -> (f32)',
        "op no MMA or copy atom named 'NoSuchAtom'",
    ),
    (
        '%d0 = thread.atom "UniversalFMA_F32F32F32F32"(%x, %x) {role = "mma"}'
        " : (f32, f32) -> (f32)",
        "atom UniversalFMA_F32F32F32F32 takes 3 operands ($a x1, $b x1, $c x1), got 2",
    ),
    (
        '%d0 = thread.atom "UniversalFMA_F32F32F32F32"(%x, %x, %i) {role = "mma"}'
        " : (f32, f32, i32) -> (f32)",
        "operand #2 ($c) of atom UniversalFMA_F32F32F32F32 is a .f32 register, not i32",
    ),
    (
        '%d0 = thread.atom "UniversalFMA_F32F32F32F32"(%x, %x, %x) {role = "copy"}'
        " : (f32, f32, f32) -> (f32)",
        "MMA atom UniversalFMA_F32F32F32F32 has one role, 'mma', not 'copy'",
    ),
    (
        '%d0:2 = thread.atom "UniversalFMA_F32F32F32F32"(%x, %x, %x) {role = "mma"}'
        " : (f32, f32, f32) -> (f32, f32)",
        "atom UniversalFMA_F32F32F32F32 takes 1 results ($d x1), got 2",
    ),
    (
        '%d0 = thread.atom "UniversalCopy<uint32_t>"(%s) {role = "ld.global"}'
        " : (!gpu.ptr<f32, shared>) -> (f32)",
        "operand #0 ($addr) of atom UniversalCopy<uint32_t> must be a global or generic pointer"
        ", got !gpu.ptr<f32, shared>",
    ),
    (
        '%d0 = thread.atom "UniversalCopy<uint32_t>"(%g) {role = "ld.texture"}'
        " : (!gpu.ptr<f32, global>) -> (f32)",
        "copy atom UniversalCopy<uint32_t> has no 'ld.texture' instruction",
    ),
    (
        '%d0:2 = thread.atom "SM75_U32x4_LDSM_N"(%s) {role = "copy"}'
        " : (!gpu.ptr<f32, shared>) -> (i32, i32)",
        "atom SM75_U32x4_LDSM_N takes 4 results ($d x4), got 2",
    ),
    (
        "thread.named_barrier_sync {count = 128 : i32, id = 0 : i32}",
        "barrier 0 is gpu.barrier's (bar.sync 0); a named barrier is 1..15",
    ),
    (
        "thread.named_barrier_arrive {count = 128 : i32, id = 16 : i32}",
        "bar.arrive.named: $id must be 0..15, got 16",
    ),
    (
        "thread.named_barrier_sync {count = 100 : i32, id = 1 : i32}",
        "bar.sync.named: $count must be 32..1024 in steps of 32, got 100",
    ),
]


@pytest.mark.parametrize(("body", "message"), CASES, ids=[m for _, m in CASES])
def test_verifier_rejects(body: str, message: str) -> None:
    module = parse_module(_kernel(body), "t.mlir")
    with pytest.raises(VerifyError) as info:
        verify(module)
    line = info.value.render().splitlines()[0]
    assert line.startswith("t.mlir:") and "error: '" in line and message in line, line


def test_every_atom_template_has_a_signature() -> None:
    """Each MMA atom writes d (wgmma also reads it); loads write registers, stores none."""
    for atom in mma_atoms().values():
        sig = thread.atom_signature(atom, "mma")
        assert [o.name for o in sig.outputs] == ["d"], atom.name
        in_place = "c" not in [o.name for o in atom.ptx.operands]
        assert ("d" in [o.name for o in sig.inputs]) == in_place, atom.name
    ld = thread.atom_signature(copy_atom("UniversalCopy<uint128_t>"), "ld.shared")
    assert [(o.name, o.count) for o in ld.outputs] == [("v", 4)]
    st = thread.atom_signature(copy_atom("UniversalCopy<uint128_t>"), "st.global")
    assert st.outputs == () and [o.name for o in st.inputs] == ["addr", "v"]
    cp = thread.atom_signature(copy_atom("SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>"), "copy")
    assert cp.outputs == () and cp.num_inputs == 3
    tma = thread.atom_signature(copy_atom("SM90_TMA_STORE_2D", bits=4096), "copy")
    assert tma.outputs == () and tma.num_inputs == 4  # tmap, 2 coordinates, smem address


def test_atom_effects_follow_the_role() -> None:
    module = parse_module(
        _kernel(
            '%u = thread.atom "UniversalCopy<uint32_t>"(%g) {role = "ld.global"} : '
            "(!gpu.ptr<f32, global>) -> (f32)\n"
            '    thread.atom "UniversalCopy<uint32_t>"(%s, %u) {role = "st.shared"} : '
            "(!gpu.ptr<f32, shared>, f32) -> ()"
        ),
        "t.mlir",
    )
    verify(module)
    ld, st = list(module.walk_type(thread.AtomOp))
    assert [(e.kind, e.space) for e in ld.memory_effects()] == [
        (EffectKind.READ, AddressSpace.GLOBAL)
    ]
    assert [(e.kind, e.space) for e in st.memory_effects()] == [
        (EffectKind.WRITE, AddressSpace.SHARED)
    ]
