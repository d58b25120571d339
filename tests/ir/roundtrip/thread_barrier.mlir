// Named barriers, cluster barriers, the mbarrier-init fence, elect_one and setmaxnreg.
module {
  kernel @barriers() attributes {reqntid = array<i32: 256, 1, 1>, cluster_dim = array<i32: 1, 1, 1>} {
    thread.fence_mbarrier_init
    thread.cluster_arrive {relaxed}
    thread.cluster_wait
    %leader = thread.elect_one : i1
    thread.setmaxnreg {action = "dec", count = 40 : i32}
    thread.named_barrier_arrive {count = 256 : i32, id = 1 : i32}
    thread.named_barrier_sync {count = 128 : i32, id = 15 : i32} loc("b.cute":7:3)
    thread.cluster_arrive
    thread.cluster_wait
    return
  }
}
