// The warpgroup-MMA family: proxy fence, matrix descriptor, batch fence / commit / wait.
module attributes {target = "sm_90a"} {
  kernel @k(%p: !gpu.ptr<f16, shared>) attributes {reqntid = array<i32: 128, 1, 1>} {
    thread.fence_proxy_async
    %d = thread.gmma_desc %p {lbo = 1024 : i32, sbo = 64 : i32, swizzle = "128B"} : !gpu.ptr<f16, shared>
    thread.wgmma_fence
    thread.wgmma_commit
    thread.wgmma_wait {pending = 1 : i32}
    return
  }
}
