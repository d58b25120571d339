// Distributed shared memory: a shared tensor in another CTA of the cluster
// (cute.map_shared_rank) and the pointer it lowers to (thread.mapa).
module {
  kernel @dsmem(%out: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 64, 1, 1>, cluster_dim = array<i32: 2, 1, 1>} {
    %rank = gpu.cluster_block_rank : index
    %s = cute.alloc_smem : !cute.tensor<f32, smem, 64:1>
    %r = cute.map_shared_rank %s, %rank : !cute.tensor<f32, smem, 64:1> -> !cute.tensor<f32, dsmem, 64:1>
    %tile = cute.local_tile %r {tiler = #cute.tuple<(16)>, coord = #cute.tuple<(1)>} : !cute.tensor<f32, dsmem, 64:1> -> !cute.tensor<f32, dsmem, ((16)):((1))>
    %p = thread.alloc_shared {bytes = 256 : i64, align = 128 : i64} : !gpu.ptr<f32, shared>
    %q = thread.mapa %p, %rank : !gpu.ptr<f32, shared>, index -> !gpu.ptr<f32, shared::cluster>
    %v = thread.load %q : !gpu.ptr<f32, shared::cluster> -> f32
    thread.store %v, %q : f32, !gpu.ptr<f32, shared::cluster>
    return
  }
}
