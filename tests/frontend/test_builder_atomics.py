# ruff: noqa: E501  (the case table keeps each message on one line)
"""The atomics and fences of the language (cutec/frontend/build_atomics.py): what each
builtin builds, and each misuse as one located diagnostic."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import gpu
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify

HEAD = (
    "kernel k(n: s32[N], w: s64[N], x: f32[M, N] : (1, ldx), d: f64[N], h: f16[N]) threads 64 {\n"
)


def build(body: str) -> KernelOp:
    module = compile_source(HEAD + body + "}\n", "a.cute")
    verify(module)
    assert print_op(parse_module(print_op(module), "again")) == print_op(module)
    k = module.lookup("k")
    assert isinstance(k, KernelOp)
    return k


def ops(k: KernelOp, cls: type) -> list:
    return [op for op in k.walk() if isinstance(op, cls)]


def words(op: object) -> dict[str, str]:
    return {k: v.value for k, v in op.attributes.items()}  # type: ignore[attr-defined]


def test_each_read_modify_write_builds_its_kind_with_the_defaults() -> None:
    body = "".join(
        f"  a{kind} = atomic_{kind}(n, thread.x, 1)\n" for kind in ("add", "max", "min", "exch")
    )
    k = build(body + "  n[0] = aadd + amax + amin + aexch\n")
    rmws = ops(k, C.AtomicRmwOp)
    assert [words(op) for op in rmws] == [
        {"kind": kind, "sem": "relaxed", "scope": "gpu"} for kind in ("add", "max", "min", "exch")
    ]
    for op in rmws:
        assert str(op.value.type) == str(op.result.type) == "i32"
        assert len(op.indices) == 1 and op.indices[0].name_hint == "tid_x"
        assert op.result.uses  # the old value is the expression's value


def test_sem_and_scope_by_keyword_or_position() -> None:
    k = build(
        '  atomic_add(x, (thread.x, block.x), 0.5, sem = "acq_rel", scope = "sys")\n'
        '  atomic_max(w, 3, 7, "acquire", "cta")\n'
        '  atomic_exch(d, 0, 2.0, scope = "cta")\n'
    )
    add, mx, ex = ops(k, C.AtomicRmwOp)
    assert words(add) == {"kind": "add", "sem": "acq_rel", "scope": "sys"}
    assert [v.name_hint for v in add.indices] == ["tid_x", "bid_x"]  # one per mode
    assert str(add.value.type) == "f32" and not add.result.uses  # the result may be ignored
    assert words(mx) == {"kind": "max", "sem": "acquire", "scope": "cta"}
    assert str(mx.value.type) == "i64"  # the literal 7 becomes the tensor's s64
    assert words(ex) == {"kind": "exch", "sem": "relaxed", "scope": "cta"}
    assert str(ex.value.type) == "f64"


def test_atomic_load_store_and_fence() -> None:
    k = build(
        "  atomic_store(n, 1, 5)\n"
        "  fence()\n"
        '  atomic_store(x, (1, 2), 1, sem = "relaxed", scope = "sys")\n'
        "  while atomic_load(n, 1) == 0 { }\n"
        '  v = atomic_load(w, 0, sem = "relaxed", scope = "cta")\n'
        '  fence(sem = "sc", scope = "sys")\n'
        "  w[1] = v\n"
    )
    s1, s2 = ops(k, C.AtomicStoreOp)
    assert words(s1) == {"sem": "release", "scope": "gpu"}
    assert words(s2) == {"sem": "relaxed", "scope": "sys"}
    assert str(s2.value.type) == "f32" and len(s2.indices) == 2  # 1 converted as x[i] = 1
    spin, v = ops(k, C.AtomicLoadOp)
    assert words(spin) == {"sem": "acquire", "scope": "gpu"}
    assert spin.parent_op.name == "scf.while"  # read again at every test of the condition
    assert words(v) == {"sem": "relaxed", "scope": "cta"} and str(v.result.type) == "i64"
    assert [words(f) for f in ops(k, gpu.FenceOp)] == [
        {"sem": "acq_rel", "scope": "gpu"},
        {"sem": "sc", "scope": "sys"},
    ]


def test_atomics_in_a_func_and_on_a_tile() -> None:
    """A tile of a global tensor is a global tensor: the atomic takes its element."""
    k = build("  g = local_tile(n, (16,), (block.x,))\n  atomic_add(g, thread.x % 16, 1)\n")
    (op,) = ops(k, C.AtomicRmwOp)
    assert op.tensor.owner.name == "cute.local_tile"


# fmt: off
CASES = [
    ("shared", "  s = smem s32[(8,)]\n  atomic_add(s, 0, 1)\n", 3, 14, "atomics on shared memory are not supported yet (atomic_add of an smem tensor)"),
    ("register", "  r = rmem s32[(8,)]\n  atomic_max(r, 0, 1)\n", 3, 14, "atomic_max needs a global tensor; a register tensor is the thread's own, which no other thread sees (read and write it with t[i])"),
    ("not_a_tensor", "  atomic_add(3, 0, 1)\n", 2, 14, "atomic_add's first argument must be a tensor, got the integer 3"),
    ("coordinate_tensor", "  c = make_identity_tensor((4, 4))\n  atomic_load(c, 0)\n", 3, 15, "atomic_load's first argument must be a tensor of data, not a coordinate tensor (its elements are computed; read them with t[i])"),
    ("unknown_sem", '  atomic_add(n, 0, 1, sem = "seq_cst")\n', 2, 29, 'unknown sem "seq_cst" for atomic_add; it takes "relaxed", "acquire", "release" or "acq_rel"'),
    ("unknown_scope", '  fence(scope = "device")\n', 2, 17, 'unknown scope "device" for fence; it takes "cta", "gpu" or "sys"'),
    ("load_cannot_release", '  v = atomic_load(n, 0, sem = "release")\n', 2, 31, 'atomic_load takes sem "relaxed" or "acquire", not "release"'),
    ("store_cannot_acquire", '  atomic_store(n, 0, 1, "acq_rel")\n', 2, 25, 'atomic_store takes sem "relaxed" or "release", not "acq_rel"'),
    ("fence_sem", '  fence("relaxed")\n', 2, 9, 'fence takes sem "acq_rel" or "sc", not "relaxed"'),
    ("sem_not_a_string", "  atomic_add(n, 0, 1, sem = 2)\n", 2, 29, 'atomic_add\'s sem is a string ("relaxed", "acquire", "release" or "acq_rel"), not the integer 2'),
    ("float_max", "  atomic_max(x, 0, 1.0)\n", 2, 14, "atomic_max takes s32, s64 elements, not f32"),
    ("f16_add", "  atomic_add(h, 0, 1.0)\n", 2, 14, "atomic_add takes s32, s64, f32, f64 elements, not f16"),
    ("f16_load", "  v = atomic_load(h, 0)\n", 2, 19, "atomic_load takes s32, s64, f32, f64 elements, not f16"),
    ("value_type", "  atomic_add(n, 0, 1.5)\n", 2, 20, "expected a i32 value, got the float 1.5"),
    ("value_runtime_type", "  atomic_exch(x, 0, thread.x)\n", 2, 21, "expected a f32 value, got a int value"),
    ("store_value_type", "  atomic_store(w, 0, thread.x)\n", 2, 22, "expected a i64 value, got a int value"),
    ("coordinate_rank", "  atomic_add(x, (0, 1, 2), 1.0)\n", 2, 17, "atomic_add's coordinate has 3 components but the tensor has 2 modes (or give one linear index)"),
    ("nested_coordinate", "  atomic_add(x, ((0, 1), 2), 1.0)\n", 2, 17, "atomic_add takes one integer per mode of the tensor, not a tuple"),
    ("index_type", "  atomic_add(n, 1.5, 1)\n", 2, 17, "expected a int value, got the float 1.5"),
    ("missing_value", "  atomic_add(n, 0)\n", 2, 3, "atomic_add is missing its argument 'v'"),
    ("arity", '  fence("sc", "gpu", 1)\n', 2, 3, "'fence' takes 0 to 2 arguments, got 3"),
    ("unknown_keyword", "  atomic_min(n, 0, 1, order = \"relaxed\")\n", 2, 3, "atomic_min has no argument 'order' (it takes t, i, v, sem, scope)"),
    ("twice", '  atomic_add(n, 0, 1, "relaxed", sem = "relaxed")\n', 2, 40, "atomic_add's argument 'sem' is given twice"),
    ("missing", "  atomic_store(n, 0, sem = \"release\")\n", 2, 3, "atomic_store is missing its argument 'v'"),
]
# fmt: on


@pytest.mark.parametrize(
    ("name", "body", "line", "col", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_one_located_diagnostic(name: str, body: str, line: int, col: int, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_source(HEAD + body + "}\n", "t.cute")
    got = [(d.location.line, d.location.col, d.message) for d in info.value.diagnostics]
    assert got == [(line, col, message)]


def test_a_diagnostic_shows_the_line_and_a_caret() -> None:
    with pytest.raises(CompileError) as info:
        compile_source(HEAD + '  atomic_add(n, 0, 1, scope = "device")\n}\n', "t.cute")
    assert info.value.render().splitlines() == [
        't.cute:2:31: error: unknown scope "device" for atomic_add; it takes "cta", "gpu" or "sys"',
        '  atomic_add(n, 0, 1, scope = "device")',
        "                              ^",
    ]
