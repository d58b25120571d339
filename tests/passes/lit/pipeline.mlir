// RUN: cutec opt %s --passes pipeline
// The loop of tests/passes/test_software_pipeline.py's kernels (16 threads, 16x16x2 tiles),
// annotated pipeline(stages = 3): the shared tensors get a stage mode, the
// prologue copies tiles 0 and 1 into stages 0 and 1 (one group each, nothing
// when the loop has no tile), and each iteration waits for its tile
// (wait_group 1 = stages - 2), passes one barrier, copies tile k+2 (tile k
// again past the end) into stage (k+2)%3 and computes on stage k%3.
//
// CHECK-LABEL: kernel @smem_operands
// CHECK: %sA = cute.alloc_smem : !cute.tensor<f32, smem, (16,2,3):(1,16,32)>
// CHECK-NEXT: %[[SA0:.*]] = cute.slice %sA {coord = #cute.tuple<(_,_,0)>} {{.*}} -> !cute.tensor<f32, smem, (16,2):(1,16)>
// CHECK: %sB = cute.alloc_smem : !cute.tensor<f32, smem, (16,2,3):(1,16,32)>
// CHECK: %tAsA = cute.partition %[[SA0]], %0, %tid_x {operand = "D"}
// CHECK: %[[N:.*]] = cute.size %tAgA
// CHECK: scf.if
// CHECK: cute.slice %sA {coord = #cute.tuple<(_,_,0)>}
// CHECK: cute.copy_async
// CHECK: cute.copy_async
// CHECK-NEXT: thread.cp_async_commit
// CHECK: arith.select
// CHECK: cute.slice %sA {coord = #cute.tuple<(_,_,1)>}
// CHECK: cute.copy_async
// CHECK: cute.copy_async
// CHECK-NEXT: thread.cp_async_commit
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: thread.cp_async_commit
// CHECK-NEXT: thread.cp_async_commit
// CHECK-NEXT: scf.yield
// CHECK: %[[S0:.*]] = arith.constant 0 : index
// CHECK: scf.for %k_tile = {{.*}} iter_args(%stage = %[[S0]]) -> (index)
// CHECK-NEXT: thread.cp_async_wait {pending = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %k_tile, %[[C2]]
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi slt, %[[AHEAD]], %[[N]]
// CHECK-NEXT: %[[TILE:.*]] = arith.select %[[IN]], %[[AHEAD]], %k_tile
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %stage, %[[Z]]
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1 : index
// CHECK-NEXT: %[[PREV:.*]] = arith.addi %stage, %[[M1]]
// CHECK-NEXT: %[[WRITE:.*]] = arith.select %[[FIRST]], %[[C2]], %[[PREV]]
// CHECK-NEXT: cute.slice %tAgA, %[[TILE]]
// CHECK-NEXT: cute.slice %sA, %[[WRITE]] {coord = #cute.tuple<(_,_,?)>}
// CHECK: cute.copy_async
// CHECK: cute.copy_async
// CHECK-NEXT: thread.cp_async_commit
// CHECK-NEXT: %[[SAK:.*]] = cute.slice %sA, %stage {coord = #cute.tuple<(_,_,?)>}
// CHECK-NEXT: %[[TCSA:.*]] = cute.partition %[[SAK]], %1, %tid_x {operand = "A"}
// CHECK: cute.gemm %1, %[[TCSA]]
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi eq, %stage, %[[C2]]
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %stage, %[[C1]]
// CHECK-NEXT: %[[WRAPPED:.*]] = arith.select %[[LAST]], %[[Z]], %[[NEXT]]
// CHECK-NEXT: scf.yield %[[WRAPPED]] : index
// CHECK-NOT: gpu.barrier
// CHECK: cute.axpby
//
// With the operands copied to registers per k-block, the iteration issues its
// copies, then k-block 1's registers load before k-block 0's FMAs, and k-block 0
// of the next tile from stage (k+1)%3 after the barrier, before k-block 1's FMAs.
// CHECK-LABEL: kernel @register_operands
// CHECK: thread.cp_async_wait {pending = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: scf.if
// CHECK: cute.slice %tCrA {coord = #cute.tuple<(_,_,0)>}
// CHECK: scf.for %k_tile = {{.*}} iter_args(%stage = {{.*}}) -> (index)
// CHECK: cute.copy_async
// CHECK: cute.copy_async
// CHECK-NEXT: thread.cp_async_commit
// CHECK: cute.slice %sA, %stage
// CHECK: %[[A1:.*]] = cute.slice %tCrA {coord = #cute.tuple<(_,_,1)>}
// CHECK-NEXT: cute.copy %{{.*}}, %[[A1]]
// CHECK: %[[B1:.*]] = cute.slice %tCrB {coord = #cute.tuple<(_,_,1)>}
// CHECK-NEXT: cute.copy %{{.*}}, %[[B1]]
// CHECK-NEXT: cute.slice %tCrA {coord = #cute.tuple<(_,_,0)>}
// CHECK: cute.gemm
// CHECK-NEXT: thread.cp_async_wait {pending = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: arith.cmpi eq, %stage
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: arith.addi %stage
// CHECK-NEXT: %[[NEXT:.*]] = arith.select
// CHECK: cute.slice %sA, %[[NEXT]]
// CHECK: %[[A0:.*]] = cute.slice %tCrA {coord = #cute.tuple<(_,_,0)>}
// CHECK-NEXT: cute.copy %{{.*}}, %[[A0]]
// CHECK: cute.gemm %1, %[[A1]], %[[B1]], %tCrC
// CHECK-NEXT: scf.yield %[[NEXT]] : index

module attributes {target = "sm_90a"} {
  kernel @smem_operands(%A: !gpu.ptr<f32, global>, %M: index, %K: index, %ldA: index, %B: !gpu.ptr<f32, global>, %N: index, %ldB: index, %C: !gpu.ptr<f32, global>, %ldC: index) attributes {reqntid = array<i32: 16, 1, 1>, grid = ["M//16", "N//16", "1"]} {
    %bid_x = gpu.block_id x : index
    %bid_y = gpu.block_id y : index
    %tid_x = gpu.thread_id x : index
    %0 = cute.make_tiled_copy : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)>
    %A_1 = cute.make_tensor %A, %M, %K, %ldA {div = array<i64: 16, 2, 1>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %B_1 = cute.make_tensor %B, %N, %K, %ldB {div = array<i64: 16, 2, 1>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %C_1 = cute.make_tensor %C, %M, %N, %ldC {div = array<i64: 16, 16, 1>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %1 = cute.make_tiled_mma : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)>
    %sA = cute.alloc_smem : !cute.tensor<f32, smem, (16,2):(1,16)>
    %sB = cute.alloc_smem : !cute.tensor<f32, smem, (16,2):(1,16)>
    %gA = cute.local_tile %A_1, %bid_x, %bid_y {tiler = #cute.tuple<(16,16,2)>, coord = #cute.tuple<(?,?,_)>, proj = #cute.tuple<(1,X,1)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>
    %gB = cute.local_tile %B_1, %bid_x, %bid_y {tiler = #cute.tuple<(16,16,2)>, coord = #cute.tuple<(?,?,_)>, proj = #cute.tuple<(X,1,1)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>
    %gC = cute.local_tile %C_1, %bid_x, %bid_y {tiler = #cute.tuple<(16,16,2)>, coord = #cute.tuple<(?,?,_)>, proj = #cute.tuple<(1,1,X)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (16,16):(1,?)>
    %tAgA = cute.partition %gA, %0, %tid_x {operand = "S"} : !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)>
    %tAsA = cute.partition %sA, %0, %tid_x {operand = "D"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)>
    %tBgB = cute.partition %gB, %0, %tid_x {operand = "S"} : !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)>
    %tBsB = cute.partition %sB, %0, %tid_x {operand = "D"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)>
    %tCsA = cute.partition %sA, %1, %tid_x {operand = "A"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)> -> !cute.tensor<f32, smem, (1,4,2):(0,4,16)>
    %tCsB = cute.partition %sB, %1, %tid_x {operand = "B"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)> -> !cute.tensor<f32, smem, (1,4,2):(0,4,16)>
    %tCgC = cute.partition %gC, %1, %tid_x {operand = "C"} : !cute.tensor<f32, gmem, (16,16):(1,?)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)> -> !cute.tensor<f32, gmem, (1,4,4):(0,4,?)>
    %tCrC = cute.make_fragment : !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>
    cute.clear %tCrC : !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>
    %2 = cute.size %tAgA {mode = #cute.tuple<3>} : !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)> -> index
    %3 = arith.constant 0 : index
    %4 = arith.constant 1 : index
    scf.for %k_tile = %3 to %2 step %4 attributes {pipeline_stages = 3 : i32} {
      %5 = cute.slice %tAgA, %k_tile {coord = #cute.tuple<(_,_,_,?)>} : !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)> -> !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>
      %6 = cute.copy_async %0, %5, %tAsA : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)>, !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>, !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)> -> !gpu.token
      %7 = cute.slice %tBgB, %k_tile {coord = #cute.tuple<(_,_,_,?)>} : !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)> -> !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>
      %8 = cute.copy_async %0, %7, %tBsB : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)>, !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>, !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)> -> !gpu.token
      %9 = thread.cp_async_commit %6, %8
      thread.cp_async_wait {pending = 0 : i32}
      gpu.barrier
      cute.gemm %1, %tCsA, %tCsB, %tCrC : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)>, !cute.tensor<f32, smem, (1,4,2):(0,4,16)>, !cute.tensor<f32, smem, (1,4,2):(0,4,16)>, !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>
      gpu.barrier
      scf.yield
    }
    %10 = arith.constant 1.0 : f32
    %11 = arith.constant 0.0 : f32
    cute.axpby %10, %tCrC, %11, %tCgC : f32, !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>, f32, !cute.tensor<f32, gmem, (1,4,4):(0,4,?)>
    return
  }
  kernel @register_operands(%A: !gpu.ptr<f32, global>, %M: index, %K: index, %ldA: index, %B: !gpu.ptr<f32, global>, %N: index, %ldB: index, %C: !gpu.ptr<f32, global>, %ldC: index) attributes {reqntid = array<i32: 16, 1, 1>, grid = ["M//16", "N//16", "1"]} {
    %bid_x = gpu.block_id x : index
    %bid_y = gpu.block_id y : index
    %tid_x = gpu.thread_id x : index
    %0 = cute.make_tiled_copy : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)>
    %A_1 = cute.make_tensor %A, %M, %K, %ldA {div = array<i64: 16, 2, 1>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %B_1 = cute.make_tensor %B, %N, %K, %ldB {div = array<i64: 16, 2, 1>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %C_1 = cute.make_tensor %C, %M, %N, %ldC {div = array<i64: 16, 16, 1>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %1 = cute.make_tiled_mma : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)>
    %sA = cute.alloc_smem : !cute.tensor<f32, smem, (16,2):(1,16)>
    %sB = cute.alloc_smem : !cute.tensor<f32, smem, (16,2):(1,16)>
    %gA = cute.local_tile %A_1, %bid_x, %bid_y {tiler = #cute.tuple<(16,16,2)>, coord = #cute.tuple<(?,?,_)>, proj = #cute.tuple<(1,X,1)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>
    %gB = cute.local_tile %B_1, %bid_x, %bid_y {tiler = #cute.tuple<(16,16,2)>, coord = #cute.tuple<(?,?,_)>, proj = #cute.tuple<(X,1,1)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>
    %gC = cute.local_tile %C_1, %bid_x, %bid_y {tiler = #cute.tuple<(16,16,2)>, coord = #cute.tuple<(?,?,_)>, proj = #cute.tuple<(1,1,X)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (16,16):(1,?)>
    %tAgA = cute.partition %gA, %0, %tid_x {operand = "S"} : !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)>
    %tAsA = cute.partition %sA, %0, %tid_x {operand = "D"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)>
    %tBgB = cute.partition %gB, %0, %tid_x {operand = "S"} : !cute.tensor<f32, gmem, (16,2,?):(1,?,?)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)>
    %tBsB = cute.partition %sB, %0, %tid_x {operand = "D"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)> -> !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)>
    %tCsA = cute.partition %sA, %1, %tid_x {operand = "A"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)> -> !cute.tensor<f32, smem, (1,4,2):(0,4,16)>
    %tCsB = cute.partition %sB, %1, %tid_x {operand = "B"} : !cute.tensor<f32, smem, (16,2):(1,16)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)> -> !cute.tensor<f32, smem, (1,4,2):(0,4,16)>
    %tCgC = cute.partition %gC, %1, %tid_x {operand = "C"} : !cute.tensor<f32, gmem, (16,16):(1,?)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)> -> !cute.tensor<f32, gmem, (1,4,4):(0,4,?)>
    %tCrA = cute.make_fragment : !cute.tensor<f32, rmem, (1,4,2):(0,1,4)>
    %tCrB = cute.make_fragment : !cute.tensor<f32, rmem, (1,4,2):(0,1,4)>
    %tCrC = cute.make_fragment : !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>
    cute.clear %tCrC : !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>
    %2 = cute.size %tAgA {mode = #cute.tuple<3>} : !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)> -> index
    %3 = arith.constant 0 : index
    %4 = arith.constant 1 : index
    scf.for %k_tile = %3 to %2 step %4 attributes {pipeline_stages = 3 : i32} {
      %5 = cute.slice %tAgA, %k_tile {coord = #cute.tuple<(_,_,_,?)>} : !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)> -> !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>
      %6 = cute.copy_async %0, %5, %tAsA : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)>, !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>, !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)> -> !gpu.token
      %7 = cute.slice %tBgB, %k_tile {coord = #cute.tuple<(_,_,_,?)>} : !cute.tensor<f32, gmem, ((1,1),1,2,?):((0,0),0,?,?)> -> !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>
      %8 = cute.copy_async %0, %7, %tBsB : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", f32, (16,1):(1,0), (16,1)>, !cute.tensor<f32, gmem, ((1,1),1,2):((0,0),0,?)>, !cute.tensor<f32, smem, ((1,1),1,2):((0,0),0,16)> -> !gpu.token
      %9 = thread.cp_async_commit %6, %8
      thread.cp_async_wait {pending = 0 : i32}
      gpu.barrier
      %10 = cute.slice %tCsA {coord = #cute.tuple<(_,_,0)>} : !cute.tensor<f32, smem, (1,4,2):(0,4,16)> -> !cute.tensor<f32, smem, (1,4):(0,4)>
      %11 = cute.slice %tCrA {coord = #cute.tuple<(_,_,0)>} : !cute.tensor<f32, rmem, (1,4,2):(0,1,4)> -> !cute.tensor<f32, rmem, (1,4):(0,1)>
      cute.copy %10, %11 : !cute.tensor<f32, smem, (1,4):(0,4)>, !cute.tensor<f32, rmem, (1,4):(0,1)>
      %12 = cute.slice %tCsB {coord = #cute.tuple<(_,_,0)>} : !cute.tensor<f32, smem, (1,4,2):(0,4,16)> -> !cute.tensor<f32, smem, (1,4):(0,4)>
      %13 = cute.slice %tCrB {coord = #cute.tuple<(_,_,0)>} : !cute.tensor<f32, rmem, (1,4,2):(0,1,4)> -> !cute.tensor<f32, rmem, (1,4):(0,1)>
      cute.copy %12, %13 : !cute.tensor<f32, smem, (1,4):(0,4)>, !cute.tensor<f32, rmem, (1,4):(0,1)>
      cute.gemm %1, %11, %13, %tCrC : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)>, !cute.tensor<f32, rmem, (1,4):(0,1)>, !cute.tensor<f32, rmem, (1,4):(0,1)>, !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>
      %14 = cute.slice %tCsA {coord = #cute.tuple<(_,_,1)>} : !cute.tensor<f32, smem, (1,4,2):(0,4,16)> -> !cute.tensor<f32, smem, (1,4):(0,4)>
      %15 = cute.slice %tCrA {coord = #cute.tuple<(_,_,1)>} : !cute.tensor<f32, rmem, (1,4,2):(0,1,4)> -> !cute.tensor<f32, rmem, (1,4):(0,1)>
      cute.copy %14, %15 : !cute.tensor<f32, smem, (1,4):(0,4)>, !cute.tensor<f32, rmem, (1,4):(0,1)>
      %16 = cute.slice %tCsB {coord = #cute.tuple<(_,_,1)>} : !cute.tensor<f32, smem, (1,4,2):(0,4,16)> -> !cute.tensor<f32, smem, (1,4):(0,4)>
      %17 = cute.slice %tCrB {coord = #cute.tuple<(_,_,1)>} : !cute.tensor<f32, rmem, (1,4,2):(0,1,4)> -> !cute.tensor<f32, rmem, (1,4):(0,1)>
      cute.copy %16, %17 : !cute.tensor<f32, smem, (1,4):(0,4)>, !cute.tensor<f32, rmem, (1,4):(0,1)>
      cute.gemm %1, %15, %17, %tCrC : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (4,4,1):(1,4,0)>, !cute.tensor<f32, rmem, (1,4):(0,1)>, !cute.tensor<f32, rmem, (1,4):(0,1)>, !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>
      gpu.barrier
      scf.yield
    }
    %18 = arith.constant 1.0 : f32
    %19 = arith.constant 0.0 : f32
    cute.axpby %18, %tCrC, %19, %tCgC : f32, !cute.tensor<f32, rmem, (1,4,4):(0,1,4)>, f32, !cute.tensor<f32, gmem, (1,4,4):(0,4,?)>
    return
  }
}
