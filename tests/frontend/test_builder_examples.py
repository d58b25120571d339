"""The builder on sgemm_sm80, wgmma_sm90, tiled_copy and auto_atoms: the types CuTe computes.

Expected layouts come from CuTe itself (tests/atoms/data/tiled_reference.txt, made
with nvcc from CuTe's headers) or are computed with cutec.layout from CuTe's
definitions (the GMMA smem atoms of mma_traits_sm90_gmma.hpp).
"""

from __future__ import annotations

from pathlib import Path

from cutec.frontend import compile_source
from cutec.ir.core import Operation
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute_coord import basis, decode, identity_layout
from cutec.ir.printer import print_op
from cutec.layout import ComposedLayout, Layout, Swizzle, local_tile, tile_to_shape, upcast
from cutec.layout.swizzle import upcast_swizzle

EXAMPLES = Path(__file__).parents[2] / "examples"


def kernel(name: str, kernel_name: str) -> KernelOp:
    path = EXAMPLES / name
    op = compile_source(path.read_text(), str(path)).lookup(kernel_name)
    assert isinstance(op, KernelOp)
    return op


def named(op: Operation, name: str) -> str:
    for o in op.walk():
        for r in o.results:
            if r.name_hint == name:
                return str(r.type)
    raise AssertionError(f"no value named {name}")


def spec(t: str) -> str:
    """The layout of a printed tensor type."""
    return t.split(", ", 2)[2][:-1]


def test_sgemm_sm80_ldmatrix_partitions_are_cutes() -> None:
    k = kernel("sgemm_sm80.cute", "hgemm_tn")
    # CuTe (tiled_reference.txt, sm80_2x2_perm / ldsm_A / ldsm_B): the MMA fragments
    assert spec(named(k, "tCrA")) == "((2,2,2),4,4):((1,2,4),32,8)"
    assert spec(named(k, "tCrB")) == "((2,2),8,4):((1,2),16,4)"
    # retile_D of them for SM75_U32x4_LDSM_N: (CPY,MMA_M,MMA_K) and (CPY,MMA_N,MMA_K)
    assert spec(named(k, "tXrA")) == "((8,1),4,4):((1,0),32,8)"
    assert spec(named(k, "tXrB")) == "(((4,2),1),4,4):(((1,16),0),32,4)"
    copies = {str(op.result.type) for op in k.walk() if isinstance(op, C.MakeTiledCopyOp)}
    assert (
        '!cute.tiled_copy<"SM75_U32x4_LDSM_N", f16, ((4,8,2,2),((2,2,2),(1,1))):'
        "((64,1,16,0),((32,8,256),(0,0))), (32,16)>"
    ) in copies
    # partition_S of the swizzled (BLK_M,BLK_K,PIPE) smem: (CPY,MMA_M,MMA_K,PIPE)
    assert named(k, "tXsA").endswith("((8,1),4,4,(1,3)):((1,0),2048,128,(0,8192))>")
    assert [op.name for op in k.walk() if isinstance(op, C.RetileOp)] == ["cute.retile"] * 2


def test_wgmma_smem_layout_is_cutes_gmma_atom_tiled() -> None:
    k = kernel("wgmma_sm90.cute", "hgemm_nt")
    # GMMA::Layout_MN_SW128_Atom<half_t> = upcast<16>(Sw<3,4,3> o (1024,8):(1,1024)); cutec
    # swizzles element offsets, so the byte swizzle is recast to 16-bit units.
    atom = ComposedLayout(
        upcast_swizzle(Swizzle(3, 4, 3), 2), 0, upcast(Layout((1024, 8), (1, 1024)), 16)
    )
    assert str(atom.layout_a) == "Sw<3,3,3>" and str(atom.layout_b) == "(_64,_8):(_1,_64)"
    expected = C.LayoutSpec.of(tile_to_shape(atom, (128, 64, 3)))
    assert named(k, "sA") == f"!cute.tensor<f16, smem, {expected}>"
    assert str(expected) == "Sw<3,3,3> o 0 o ((64,2),(8,8),(1,3)):((1,512),(64,1024),(0,8192))"


def test_wgmma_operands_are_smem_descriptors_and_the_batch_is_bracketed() -> None:
    k = kernel("wgmma_sm90.cute", "hgemm_nt")
    gemm = next(op for op in k.walk() if isinstance(op, C.GemmOp))
    a, b, c = (v.type for v in gemm.operands[1:])
    assert (a.space.memory, b.space.memory, c.space.memory) == ("smem", "smem", "rmem")
    # make_fragment_A of an SS atom's smem partition is the partition itself: gemm's A
    # is a slice of tCsA, no register fragment is made for it
    a_slice = gemm.operands[1].owner
    assert isinstance(a_slice, C.SliceOp) and a_slice.operands[0].name_hint == "tCsA"
    assert not any(
        isinstance(op, C.MakeFragmentOp) and "f16, rmem, (64" in str(op.result.type)
        for op in k.walk()
    )
    names = [
        op.name
        for op in k.walk()
        if op.name.startswith("cute.warpgroup")
        or op.name in ("cute.gemm", "cute.fence_view_async_shared")
    ]
    assert names == [
        "cute.fence_view_async_shared",
        "cute.warpgroup_fence_operand",
        "cute.warpgroup_arrive",
        "cute.gemm",
        "cute.warpgroup_commit_batch",
        "cute.warpgroup_wait",
        "cute.warpgroup_fence_operand",
    ]
    assert spec(named(k, "tCrC")) == "((2,2,8),2,2):((1,2,4),32,64)"  # (MMA,MMA_M,MMA_N)


def test_tiled_copy_divides_and_predicates() -> None:
    k = kernel("tiled_copy.cute", "copy_kernel")
    assert named(k, "tiled_S") == "!cute.tensor<f32, gmem, ((128,64),?,?):((1,?),128,?)>"
    assert named(k, "tile_S") == "!cute.tensor<f32, gmem, (128,64):(1,?)>"
    k = kernel("tiled_copy.cute", "copy_if_kernel_vectorized")
    assert named(k, "cS") == "!cute.coord_tensor<2, (?,?):(E0,E1)>"
    # CuTe: ((_4,_1),_1,_8):((_1@0,_0),_0,_8@1), the same partition as the data's
    assert named(k, "thr_tile_C") == "!cute.coord_tensor<2, ((4,1),1,8):((E0,0),0,8*E1)>"
    assert spec(named(k, "thr_tile_S")) == "((4,1),1,8):((1,0),0,?)"
    assert named(k, "thr_tile_P") == "!cute.tensor<i1, rmem, ((4,1),1,8):((1,0),0,4)>"
    ops = [op.name for op in k.walk()]
    assert ops.count("cute.copy_if") == 2 and ops.count("cute.load_coord") == 64


def test_coordinates_of_a_residue_tile_never_alias() -> None:
    # A 100x50 tensor tiled 64x32: the last tile runs past both extents. Every element of
    # it decodes to its own coordinate, even outside the shape (where elem_less is false).
    layout = identity_layout((100, 50))
    tile = local_tile(layout, (64, 32), (1, 1))
    seen = {
        decode(tile(i, j) + basis(0, 64) + basis(1, 32), 2) for i in range(64) for j in range(32)
    }
    assert seen == {(64 + i, 32 + j) for i in range(64) for j in range(32)}
    assert (
        str(C.CoordTensorType(2, C.LayoutSpec.of(tile))) == "!cute.coord_tensor<2, (64,32):(E0,E1)>"
    )


def test_auto_atoms_take_their_types_from_the_tensors() -> None:
    # The MMA's atom is chosen when its types are known (its first use), the operand
    # copies' when the tensor they read is (their first partition_S); the gmem -> smem
    # copy stays auto until select-atoms (its partitions do not depend on the atom).
    k = kernel("auto_atoms.cute", "gemm_tn")
    mmas = [op for op in k.walk() if isinstance(op, C.MakeTiledMmaOp)]
    assert [str(op.result.type) for op in mmas] == [
        '!cute.tiled_mma<"SM80_16x8x16_F32F16F16F32_TN", f32, f16, f16, f32, (2,2,1):(1,2,0)>'
    ]
    assert all(op.auto is not None for op in mmas)
    copies = [op for op in k.walk() if isinstance(op, C.MakeTiledCopyOp)]
    atoms = {(op.result.type.atom, op.attributes.get("operand")) for op in copies}
    assert {(a, str(o) if o else None) for a, o in atoms} == {
        ("auto", None),
        ("SM75_U32x4_LDSM_N", '"A"'),
        ("SM75_U32x2_LDSM_N", '"B"'),
    }
    assert {str(op.result.type.element) for op in copies} == {"f16"}
    text = print_op(k)
    assert "cute.retile" in text and "cute.gemm" in text


def test_const_binds_a_runtime_size_immutably() -> None:
    k = kernel("sgemm_2.cute", "sgemm_nt")
    assert named(k, "K_TILE_MAX") == "index"
