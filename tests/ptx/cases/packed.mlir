// Eight 16-bit elements in one 16-byte access: four 32-bit words of pairs
// (ld/st .v4.b32), plain and under a predicate (load_if keeps its default where
// the predicate is false), f16 in global memory and bf16 in shared memory.
module {
  kernel @packed(%h: !gpu.ptr<f16, global>, %n: index) attributes {reqntid = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x : index
    %c8 = arith.constant 8 : index
    %off = arith.muli %tid, %c8 : index
    %p = thread.ptr_add %h, %off : !gpu.ptr<f16, global>, index
    %v = thread.load %p : !gpu.ptr<f16, global> -> vector<8xf16>
    %in = arith.cmpi slt, %off, %n : index
    %u = thread.load_if %in, %p, %v : !gpu.ptr<f16, global> -> vector<8xf16>
    thread.store_if %in, %u, %p : vector<8xf16>, !gpu.ptr<f16, global>
    %s = thread.alloc_shared {bytes = 2048 : i64, align = 16 : i64} : !gpu.ptr<bf16, shared>
    %q = thread.ptr_add %s, %off : !gpu.ptr<bf16, shared>, index
    %w = thread.load %q : !gpu.ptr<bf16, shared> -> vector<8xbf16>
    thread.store %w, %q : vector<8xbf16>, !gpu.ptr<bf16, shared>
    return
  }
}
