# ruff: noqa: E501  (the case table keeps each message on one line)
"""Semantic errors of the builder: each program gives exactly one located diagnostic.

Every case is a kernel body under one header; the test asserts the message and its
line:column (line 1 is the header). Several independent mistakes in one file are all
reported (the last tests).
"""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.printer import print_op

HEAD = (
    "kernel k[BM: int = 128](A: f32[M, K] : (1, ldA), C: f32[M, N] : (1, ldC), alpha: f32)"
    " threads 256 {\n"
)

CASES = [
    (
        "compile_time_tuple_changed_at_run_time",
        "  t = (2, 3)\n  for k in range(M) {\n    t = (4, 5)\n  }\n",
        3,
        3,
        "'t' is rebound inside a loop or branch that runs at run time; only scalars may "
        "change there (a tuple)",
    ),
    (
        "step_marker_as_coordinate",
        "  g = local_tile(A, (32, 8), (block.x, _))\n  x = g[_, X, 0]\n",
        3,
        12,
        "'X' marks a projected mode in a step; it is not a coordinate",
    ),
    (
        "swizzle_first_argument",
        "  a = tile_to_shape(swizzle(2, 3, 3), (8, 32))\n",
        2,
        21,
        "the first argument of 'tile_to_shape' must be a layout, got the swizzle Sw<2,3,3>",
    ),
    (
        # Found by fuzzing sgemm_sm80 with BP = 0 (then a ZeroDivisionError, an ICE).
        "tile_to_shape_zero_extent",
        "  a = tile_to_shape(composition(swizzle(3, 3, 3), (8, 64) : (64, 1)), (128, 64, 0))\n",
        2,
        7,
        "tile_to_shape: the target shape (128,64,0) has a zero extent",
    ),
    (
        "algebra_arity",
        "  a = composition((2, 3) : (1, 2), (4, 4) : (1, 4), 3)\n",
        2,
        7,
        "'composition' takes 2 arguments, got 3",
    ),
    (
        "algebra_needs_layout",
        "  b = tiled_divide(0, (4, 4))\n",
        2,
        20,
        "the first argument of 'tiled_divide' must be a layout, got the integer 0",
    ),
    ("undefined_name", "  x = y + 1\n", 2, 7, "undefined name 'y'"),
    (
        "undefined_function",
        "  local_tiles(A, (BM, 8), (block.x, _))\n",
        2,
        3,
        "undefined name 'local_tiles'",
    ),
    (
        "layout_not_tensor",
        "  t = local_tile((4, 8) : (1, 4), (2, 2), (0, 0))\n",
        2,
        18,
        "local_tile's first argument must be a tensor, got the layout (_4,_8):(_1,_4)",
    ),
    (
        "tensor_not_layout",
        "  t = local_partition(A, A, thread.x)\n",
        2,
        26,
        "the thread layout must be a layout, got a gmem tensor (M,K):(_1,ldA)",
    ),
    (
        "tiler_coord_rank",
        "  t = local_tile(A, (BM, 8), (block.x, block.y, _))\n",
        2,
        7,
        "the tiler (128,8) has 2 modes but the coordinate has 3",
    ),
    (
        "step_rank",
        "  t = local_tile(A, (BM, 8, 8), (block.x, block.y, _), step = (1, X))\n",
        2,
        7,
        "step (1,X) has 2 modes but the tiler (128,8,8) has 3",
    ),
    (
        "tiler_too_big",
        "  t = local_tile(A, (BM, 8, 8), (block.x, block.y, _))\n",
        2,
        7,
        "a tiler of 3 modes cannot tile a rank-2 tensor (M,K):(_1,ldA)",
    ),
    (
        "thr_rank",
        "  s = smem f32[(BM, 8)]\n  t = local_partition(s, (32, 8, 2), thread.x)\n",
        3,
        7,
        "a rank-3 thread layout (_32,_8,_2):(_1,_32,_256) cannot partition a rank-2 tensor (_128,_8):(_1,_128)",
    ),
    (
        "copy_size",
        "  s = smem f32[(BM, 8)]\n  r = rmem f32[(4, 4)]\n  copy(s, r)\n",
        4,
        3,
        "copy: the source has 1024 elements (128,8) but the destination has 16 (4,4)",
    ),
    (
        "copy_dtype",
        "  s = smem f32[(16,)]\n  r = rmem f16[(16,)]\n  copy(s, r)\n",
        4,
        3,
        "copy from f32 to f16: the element types differ",
    ),
    (
        "copy_gmem_gmem",
        "  copy(A, C)\n",
        2,
        3,
        "copy from global memory to global memory: stage it through registers or shared memory",
    ),
    (
        "gemm_shapes",
        "  a = smem f32[(8, 4)]\n  b = smem f32[(8, 2)]\n  c = rmem f32[(8, 8)]\n  gemm(a, b, c)\n",
        5,
        3,
        "gemm: K of A is 4 but K of B is 2 (A (8,4), B (8,2), C (8,8))",
    ),
    (
        "gemm_gmem_c",
        "  a = smem f32[(8, 4)]\n  gemm(a, a, C)\n",
        3,
        14,
        "gemm accumulates into registers (or shared memory), not a gmem tensor; make a fragment with make_tensor_like",
    ),
    (
        "static_assert",
        '  static_assert(BM % 3 == 0, "BM divides by 3")\n',
        2,
        3,
        "static assertion failed: BM divides by 3",
    ),
    (
        "static_assert_runtime",
        "  static_assert(alpha > 0.0)\n",
        2,
        17,
        "static_assert needs a compile-time condition, got a run-time bool",
    ),
    (
        "runtime_where_static",
        "  s = smem f32[(M, 8)]\n",
        2,
        16,
        "smem needs a compile-time layout, but its shape holds a run-time value",
    ),
    (
        "const_reassign",
        "  const n = 4\n  n = 5\n",
        3,
        3,
        "'n' is a compile-time constant and cannot be reassigned",
    ),
    (
        "smem_limit",
        "  s = smem f32[(256, 256)]\n",
        2,
        7,
        "shared memory use reaches 262144 bytes with this 262144-byte buffer; "
        "the limit on sm_90a is 232448 (227 KiB per CTA)",
    ),
    (
        "layout_too_big",
        "  l = make_layout((65536, 65536, 2))\n",
        2,
        7,
        "layout (_65536,_65536,_2):(_1,_65536,_4294967296) has 8589934592 elements; at most 2**31 are supported",
    ),
    (
        "unroll_limit",
        "  for i in range(5000) unroll { sync() }\n",
        2,
        24,
        "unrolling 5000 iterations fully; at most 1024",
    ),
    (
        "unroll_dynamic",
        "  for i in range(M) unroll { sync() }\n",
        2,
        21,
        "a fully unrolled loop needs compile-time bounds; give a factor (unroll(4)) or drop 'unroll'",
    ),
    (
        "noncongruent",
        "  l = (4, 8) : (1, (4, 2))\n",
        2,
        7,
        "shape (4,8) and stride (1,(4,2)) are not congruent (they must have the same nesting)",
    ),
    (
        "unknown_atom_width",
        "  c = tiled_copy(UniversalCopy[u256], thr = (32, 8))\n",
        2,
        32,
        "undefined name 'u256'",
    ),
    (
        "mma_unknown",
        "  m = tiled_mma(UniversalFMA[bf16])\n",
        2,
        30,
        "no UniversalFMA for bf16 (f32, f64, f16, s32)",
    ),
    (
        "copy_bits",
        "  c = tiled_copy(UniversalCopy[u128], thr = (32, 8), val = (2, 1))\n  s = smem f32[(64, 8)]\n  t = c.slice(thread.x).partition_D(s)\n",
        4,
        7,
        "tiled_copy: TiledCopy uses too few vals for UniversalCopy<uint128_t>: size<1>((_256,_2):(_2,_1)) = 2 is not a multiple of 4",
    ),
    ("thread_member", "  t = thread.w\n", 2, 14, "'thread' has members x, y and z, not 'w'"),
    (
        "slice_rank",
        "  s = smem f32[(8, 8)]\n  t = s[_, _, 0]\n",
        3,
        7,
        "slicing a rank-2 tensor needs 2 coordinates, got 3",
    ),
    ("div_zero", "  n = BM / 0\n", 2, 7, "division by zero in 128 / 0"),
    ("shift_range", "  n = 1 << 70\n", 2, 7, "shift by 70 is out of range (0..63)"),
    ("unpack", "  (a, b) = (1, 2, 3)\n", 2, 3, "cannot unpack 3 value(s) into 2 names"),
    ("return_in_kernel", "  return\n", 2, 3, "'return' is only allowed in a func"),
    (
        "fill_type",
        "  r = rmem f32[(4,)]\n  fill(r, alpha > 0.0)\n",
        3,
        11,
        "expected a f32 value, got a bool value",
    ),
    (
        "axpby_size",
        "  r = rmem f32[(4,)]\n  q = rmem f32[(8,)]\n  axpby(alpha, r, alpha, q)\n",
        4,
        3,
        "axpby: x has 4 elements (4) but y has 8 (8)",
    ),
    (
        "cp_async_wait_rt",
        "  cp_async_wait(M)\n",
        2,
        17,
        "the number of pending cp.async groups must be known at compile time, but it is a run-time value",
    ),
    ("swizzle_bad", "  s = swizzle(3, 4, 2)\n", 2, 7, "swizzle: Sw<3,4,2>: |S| must be at least B"),
    (
        "neg_extent",
        "  l = make_layout((4, -2))\n",
        2,
        23,
        "a layout's shape must not be negative, got -2",
    ),
    ("not_callable", "  x = BM(3)\n", 2, 7, "the integer 128 is not callable"),
    ("index_int", "  x = BM[0]\n", 2, 7, "the integer 128 cannot be indexed"),
    (
        "partition_wrong_method",
        "  m = tiled_mma(UniversalFMA[f32], atoms = (16, 16, 1))\n  s = smem f32[(128, 8)]\n  t = m.slice(thread.x).partition_S(s)\n",
        4,
        25,
        "a thread slice of a tiled MMA has no method 'partition_S' (it has partition_A, partition_B, partition_C, make_fragment_A, make_fragment_B, make_fragment_C, partition_fragment_A, partition_fragment_B, partition_fragment_C)",
    ),
    (
        "mma_dtype",
        "  m = tiled_mma(UniversalFMA[f32], atoms = (16, 16, 1))\n  s = smem f16[(128, 8)]\n  t = m.slice(thread.x).partition_A(s)\n",
        4,
        7,
        "partition_A: the MMA takes f32 for A but the tensor holds f16",
    ),
    (
        "tiled_copy_A_not_mma",
        "  c = tiled_copy_A(UniversalCopy[u32], 3)\n",
        2,
        40,
        "tiled_copy_A needs a tiled MMA, got the integer 3",
    ),
    (
        "make_fragment_unpartitioned",
        "  m = tiled_mma(UniversalFMA[f32], atoms = (16, 16, 1))\n  s = smem f32[(128, 8)]\n  t = m.slice(thread.x).make_fragment_A(s)\n",
        4,
        7,
        "make_fragment_A takes a partitioned tensor (MMA, MMA_M, MMA_K, ...) whose first mode has the atom's 1 values; got (_128,_8):(_1,_128) (partition it with partition_A first)",
    ),
    (
        "auto_mma_types",
        "  m = tiled_mma(auto, atoms = (2, 2, 1))\n  s = smem f16[(128, 16)]\n  a = m.slice(thread.x).partition_A(s)\n  c = m.slice(thread.x).partition_C(C)\n  h = smem f16[(128, 16)]\n  b = m.slice(thread.x).partition_B(h)\n  r = m.slice(thread.x).partition_C(rmem f16[(16, 16)])\n",
        8,
        7,
        "this auto MMA was given f32 for C at its first use (line 4); here C holds f16",
    ),
    (
        "identity_nested",
        "  c = make_identity_tensor(((4, 2), 8))\n",
        2,
        28,
        "make_identity_tensor takes a flat shape, got ((4,2),8)",
    ),
    (
        "coord_copy",
        "  c = make_identity_tensor((4, 8))\n  r = rmem f32[(4, 8)]\n  copy(c, r)\n",
        4,
        8,
        "the copy's source must be a tensor of data, not a coordinate tensor (its elements are computed; read them with t[i])",
    ),
    (
        "pred_not_bool",
        "  r = rmem f32[(4,)]\n  s = smem f32[(4,)]\n  copy(s, r, pred = r)\n",
        4,
        21,
        "the predicate must be a bool register tensor (make_fragment_like(t, dtype = bool)), not a rmem tensor (_4):(_1) of f32",
    ),
    (
        "warpgroup_wait_range",
        "  warpgroup_wait(9)\n",
        2,
        18,
        "warpgroup_wait takes a count between 0 and 7 (wgmma.wait_group), got 9",
    ),
    (
        "gmma_member",
        "  l = GMMA.Layout_MN_SW256_Atom[f16]\n",
        2,
        12,
        "GMMA has no member 'Layout_MN_SW256_Atom' (it has the smem layout atoms Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom)",
    ),
    (
        "divide_dynamic_tiler",
        "  t = tiled_divide(A, (M, 8))\n",
        2,
        23,
        "the tiler (M,8) must be known at compile time",
    ),
    (
        "while_forever",
        "  while true { sync() }\n",
        2,
        9,
        "this 'while' condition is true at compile time and the loop does not change it: the loop would never end",
    ),
    (
        "while_static_condition_on_a_layout",
        "  L = 8 : 1\n  while size(L) == 8 { L = 4 : 1 }\n",
        3,
        9,
        "this 'while' condition is known at compile time although the loop assigns to its names; only scalars (numbers, bools) defined before the loop change from one iteration to the next",
    ),
    (
        "while_not_bool",
        "  while M { sync() }\n",
        2,
        9,
        "the condition of 'while' must be a bool (a comparison, 'and', 'or', 'not'), got a run-time int",
    ),
    (
        "while_carried_type_changes",
        "  n = 0\n  while n < M { n = alpha }\n",
        3,
        17,
        "'n' holds a index value; cannot assign a f32 value",
    ),
    (
        "while_rebinds_tensor",
        "  s = smem f32[(8,)]\n  n = 0\n  while n < M {\n    s = smem f32[(8,)]\n    n += 1\n  }\n",
        4,
        3,
        "'s' is rebound inside a loop or branch that runs at run time; only scalars may change there (a smem tensor (_8):(_1))",
    ),
    (
        "if_not_bool",
        "  if M { sync() }\n",
        2,
        6,
        "the condition of 'if' must be a bool (a comparison, 'and', 'or', 'not'), got a run-time int",
    ),
    (
        "copy_async_pred_not_bool",
        "  c = tiled_copy(SM80_CP_ASYNC_CACHEALWAYS_ZFILL[u128], thr = (32, 8), val = (4, 1))\n"
        "  g = local_tile(A, (128, 8), (block.x, 0))\n  s = smem f32[(128, 8)]\n"
        "  t = c.slice(thread.x)\n  tg = t.partition_S(g)\n  ts = t.partition_D(s)\n"
        "  copy(c, tg, ts, pred = make_fragment_like(ts))\n",
        8,
        26,
        "the predicate must be a bool register tensor (make_fragment_like(t, dtype = bool)), not a rmem tensor ((_4,_1),_1,_1):((_1,_0),_0,_0) of f32",
    ),
    (
        "tensor_rebind_loop",
        "  s = smem f32[(8,)]\n  for i in range(M) { s = smem f32[(8,)] }\n",
        3,
        3,
        "'s' is rebound inside a loop or branch that runs at run time; only scalars may change there (a smem tensor (_8):(_1))",
    ),
]


def diagnostics(body: str) -> list[tuple[int, int, str]]:
    with pytest.raises(CompileError) as info:
        compile_source(HEAD + body + "}\n", "t.cute")
    return [(d.location.line, d.location.col, d.message) for d in info.value.diagnostics]


@pytest.mark.parametrize(
    ("name", "body", "line", "col", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_one_located_diagnostic(name: str, body: str, line: int, col: int, message: str) -> None:
    assert diagnostics(body) == [(line, col, message)]


def test_independent_errors_are_all_reported_and_do_not_cascade() -> None:
    body = "  x = y + 1\n  z = x * 2\n  n = BM / 0\n  w = q\n"
    # z uses x, whose statement failed: no second message about it.
    assert diagnostics(body) == [
        (2, 7, "undefined name 'y'"),
        (4, 7, "division by zero in 128 / 0"),
        (5, 7, "undefined name 'q'"),
    ]


def test_define_must_name_a_parameter() -> None:
    with pytest.raises(CompileError, match="no kernel has a compile-time parameter 'BX'"):
        compile_source(HEAD + "}\n", "t.cute", {"BX": "4"})


def test_define_kind_is_checked() -> None:
    with pytest.raises(CompileError) as info:
        compile_source(HEAD + "}\n", "t.cute", {"BM": "f16"})
    d = info.value.diagnostics[0]
    assert (d.location.line, d.location.col) == (1, 10)
    assert d.message == "compile-time parameter 'BM' is declared int but its value is the type f16"


def test_unknown_kernel() -> None:
    with pytest.raises(CompileError, match=r"no kernel named .q. in t.cute \(kernels: k\)"):
        compile_source(HEAD + "}\n", "t.cute", kernel="q")


def test_missing_threads_clause() -> None:
    with pytest.raises(CompileError) as info:
        compile_source("kernel k(A: f32[M] : (1)) { }\n", "t.cute")
    assert [d.message for d in info.value.diagnostics] == [
        "kernel 'k' needs a 'threads' clause (the block size)"
    ]


def test_blocks_per_sm_sets_minnctapersm() -> None:
    """CUDA's __launch_bounds__ minimum: the kernel's .minnctapersm, a positive int."""
    module = compile_source("kernel k(A: f32[M] : (1)) threads 32 blocks_per_sm 2 { }\n", "t.cute")
    assert "minnctapersm = 2 : i32" in print_op(module)
    with pytest.raises(CompileError) as info:
        compile_source("kernel k(A: f32[M] : (1)) threads 32 blocks_per_sm 0 { }\n", "t.cute")
    d = info.value.diagnostics[0]
    assert (d.location.col, d.message) == (52, "'blocks_per_sm' must be positive, got 0")


def test_bad_assumption() -> None:
    with pytest.raises(CompileError) as info:
        compile_source("kernel k(A: f32[M] : (1)) assume M > 4 threads 32 { }\n", "t.cute")
    d = info.value.diagnostics[0]
    assert (d.location.col, d.message) == (
        34,
        "an assumption must read 'NAME % N == 0' (a divisibility fact)",
    )


@pytest.mark.parametrize(
    ("align", "col", "message"),
    [
        (
            "2",
            26,
            "align 2 is less than one f32 element (4 bytes); a pointer is always aligned to its element",
        ),
        ("12", 26, "align 12 is not a power of two"),
        ("512", 26, "align 512 is more than any access needs (at most 256)"),
    ],
)
def test_pointer_alignment_is_checked(align: str, col: int, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_source(f"kernel k(A: f32[M] align {align}) threads 32 {{ }}\n", "t.cute")
    [d] = info.value.diagnostics
    assert ((d.location.line, d.location.col), d.message) == ((1, col), message)


def test_pointer_alignment_reaches_the_ir() -> None:
    module = compile_source("kernel k(A: f32[M] align 16, B: f32[M]) threads 32 { }\n", "t.cute")
    tensors = [op for op in module.walk() if op.name == "cute.make_tensor"]
    assert [t.alignment for t in tensors] == [16, 4]
    assert "{align = 16 : i64}" in print_op(module)


def test_compile_time_parameters_are_recorded_on_the_kernel() -> None:
    module = compile_source(HEAD + "}\n", "t.cute", {"BM": "64"})
    [k] = [op for op in module.walk() if op.name == "builtin.kernel"]
    assert str(k.attributes["params"]) == "{BM = 64 : i64}"
    # The default when no -D is given: every specialisation is named in the IR.
    module = compile_source(HEAD + "}\n", "t.cute")
    assert "params = {BM = 128 : i64}" in print_op(module)


@pytest.mark.parametrize(
    "params",
    ["A: f32[M] : (1), A: f32", "A: f32, A: f32[M] : (1)", "A: f32[M] : (1), A: f32[M] : (1)"],
)
def test_a_parameter_declared_twice_is_one_error_with_a_note(params: str) -> None:
    """Found by the value-mutation fuzzer: a scalar and a tensor of one name made the
    second bind the first's argument (an internal compiler error). The diagnostic is
    an error with a note at the first declaration (its notes were passed where the
    severity goes, so it printed as the severity)."""
    text = f"kernel k({params})\n  grid (1) threads 32\n{{\n}}\n"
    with pytest.raises(CompileError) as info:
        compile_source(text, "k.cute")
    (d,) = info.value.diagnostics
    assert (d.message, d.severity) == ("parameter 'A' is declared twice", "error")
    assert d.location is not None and d.location.col == params.index(", A") + 12
    (note,) = d.notes
    assert note.message == "first declared here" and note.location is not None
    assert note.location.col == 10
