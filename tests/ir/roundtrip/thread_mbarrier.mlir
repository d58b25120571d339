// The mbarrier family: init, arrive, expect_tx, arrive.expect_tx, wait (parity), cp.async's
// arrival.
module {
  kernel @mbarriers(%g: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 64, 1, 1>} {
    %bars = thread.alloc_shared {bytes = 16 : i64, align = 8 : i64} : !gpu.ptr<i64, shared>
    %data = thread.alloc_shared {bytes = 256 : i64, align = 16 : i64} : !gpu.ptr<f32, shared>
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c0 = arith.constant 0 : i32
    thread.mbarrier_init %bars, %c64 : !gpu.ptr<i64, shared>, i32
    %full = thread.ptr_add %bars, %c1 : !gpu.ptr<i64, shared>, i32
    thread.mbarrier_expect_tx %full, %c64 : !gpu.ptr<i64, shared>, i32
    thread.mbarrier_arrive_expect_tx %full, %c64 : !gpu.ptr<i64, shared>, i32
    %tok = thread.cp_async %data, %g {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    thread.cp_async_mbarrier_arrive %full : !gpu.ptr<i64, shared>
    thread.mbarrier_arrive %bars : !gpu.ptr<i64, shared> loc("m.cute":3:5)
    thread.mbarrier_wait %bars, %c0 : !gpu.ptr<i64, shared>, i32
    return
  }
}
