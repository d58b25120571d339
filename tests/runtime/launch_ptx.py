"""Hand-written sm_90a kernels for the launches with a tensor map and with a cluster, and
their launch records (no compile writes tensor maps yet). test_launch_maps.py assembles
them with ptxas on the CPU; tests/gpu/test_launch_maps_gpu.py launches them."""

from __future__ import annotations

from cutec.atoms.tma import TmaDataType
from cutec.ir.signature import (
    KernelSignature,
    LaunchInfo,
    ScalarParam,
    TensorMapParam,
    TensorParam,
)

HEADER = ".version 8.0\n.target sm_90a\n.address_size 64\n"

# Each CTA loads the 16 x 8 box at (16 * ctaid.x, 8 * ctaid.y) of the column-major
# f32 matrix A (M x N, leading dimension ldA) through its tensor map, one
# cp.async.bulk.tensor completing on an mbarrier (512 bytes, the full box even where
# it is out of bounds and zero-filled), and its 128 threads store the box, as it lies in
# shared memory (element (i, j) at j * 16 + i), to D[128 * (ctaid.y * nctaid.x +
# ctaid.x) + tid]. The map's .param is used in place: its generic address
# (cvta.param) is the instruction's tensor-map operand.
TMA_TILE_PTX = (
    HEADER
    + """
.visible .entry tma_tile(
	.param .u64 tma_tile_param_0,
	.param .s64 tma_tile_param_1,
	.param .s64 tma_tile_param_2,
	.param .s64 tma_tile_param_3,
	.param .u64 tma_tile_param_4,
	.param .s64 tma_tile_param_5,
	.param .align 64 .b8 tma_tile_param_6[128]
)
.reqntid 128, 1, 1
{
	.reg .pred %p<3>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<2>;
	.shared .align 128 .b8 tile[512];
	.shared .align 8 .b64 bar;

	mov.u32 %r1, %tid.x;
	mov.u32 %r2, bar;
	mov.u32 %r3, tile;
	mov.u32 %r4, %ctaid.x;
	mov.u32 %r6, %ctaid.y;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra WAIT;
	mbarrier.init.shared::cta.b64 [%r2], 1;
	fence.proxy.async.shared::cta;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r2], 512;
	shl.b32 %r5, %r4, 4;
	shl.b32 %r7, %r6, 3;
	mov.b64 %rd2, tma_tile_param_6;
	cvta.param.u64 %rd3, %rd2;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
		[%r3], [%rd3, {%r5, %r7}], [%r2];
WAIT:
	bar.sync 0;
LOOP:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
	@!%p2 bra LOOP;
	shl.b32 %r8, %r1, 2;
	add.u32 %r9, %r3, %r8;
	ld.shared.f32 %f1, [%r9];
	ld.param.u64 %rd4, [tma_tile_param_4];
	cvta.to.global.u64 %rd5, %rd4;
	mov.u32 %r10, %nctaid.x;
	mad.lo.u32 %r11, %r6, %r10, %r4;
	shl.b32 %r12, %r11, 7;
	add.u32 %r13, %r12, %r1;
	mul.wide.u32 %rd6, %r13, 4;
	add.u64 %rd7, %rd5, %rd6;
	st.global.f32 [%rd7], %f1;
	ret;
}
"""
)

TMA_TILE = (
    KernelSignature(
        "tma_tile",
        (
            TensorParam("A", "f32", ("M", "N"), (1, "ldA"), 16, "read"),
            TensorParam("D", "f32", ("T",), (1,), 16, "write"),
            TensorMapParam(
                "A_map", "A", TmaDataType.FLOAT32, ("M", "N"), ("ldA",), (16, 8), (1, 1)
            ),
        ),
        (
            ("A", "ptr"),
            ("M", "index"),
            ("N", "index"),
            ("ldA", "index"),
            ("D", "ptr"),
            ("T", "index"),
            ("A_map", "tensor_map"),
        ),
        (),
    ),
    LaunchInfo((128, 1, 1), None, ("ceil_div(M,16)", "ceil_div(N,8)", "1"), None, 0, 32),
)

# In clusters of 2 CTAs: thread 0 of each CTA writes its rank in the cluster, its
# cluster's index, its own index and the grid's cluster count to D[4 * ctaid.x ...].
CLUSTER_IDS_PTX = (
    HEADER
    + """
.visible .entry cluster_ids(
	.param .u64 cluster_ids_param_0,
	.param .s64 cluster_ids_param_1,
	.param .s32 cluster_ids_param_2
)
.reqntid 32, 1, 1
.reqnctapercluster 2, 1, 1
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<6>;

	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	ld.param.u64 %rd1, [cluster_ids_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r2, %ctaid.x;
	mul.wide.u32 %rd3, %r2, 16;
	add.u64 %rd4, %rd2, %rd3;
	mov.u32 %r3, %cluster_ctarank;
	mov.u32 %r4, %clusterid.x;
	mov.u32 %r5, %nclusterid.x;
	st.global.v4.u32 [%rd4], {%r3, %r4, %r2, %r5};
DONE:
	ret;
}
"""
)

# The grid is n CTAs, rounded up to whole clusters of 2 at launch.
CLUSTER_IDS = (
    KernelSignature(
        "cluster_ids",
        (TensorParam("D", "s32", ("T",), (1,), 16, "write"), ScalarParam("n", "i32")),
        (("D", "ptr"), ("T", "index"), ("n", "i32")),
        (),
    ),
    LaunchInfo((32, 1, 1), None, ("n", "1", "1"), (2, 1, 1), 0, 32),
)

# The same launch through cutec.jit, in thread-level IR: every thread of CTA b writes
# b + 1 to out[b]; the grid is n CTAs, in clusters of 2.
CTAS_IR = """module {
  kernel @ctas(%out: !gpu.ptr<i32, global>, %n: i32) attributes {reqntid = array<i32: 32, 1, 1>,
      grid = ["n", "1", "1"], cluster_dim = array<i32: 2, 1, 1>} {
    %b = gpu.block_id x : index
    %bi = arith.index_cast %b : index to i32
    %c1 = arith.constant 1 : i32
    %v = arith.addi %bi, %c1 : i32
    %at = thread.ptr_add %out, %bi : !gpu.ptr<i32, global>, i32
    thread.store %v, %at : i32, !gpu.ptr<i32, global>
    return
  }
}
"""
