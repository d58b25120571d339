"""Atomics and fences in PTX (cutec/ptx/atomic.py): every kind, element type, memory
order and scope the IR takes is emitted as the PTX ISA spells it and assembled by
ptxas for every target; an unused old value is a ``red`` where PTX has one."""

from __future__ import annotations

import itertools

import pytest

from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.memory_order import (
    FENCE_SEMANTICS,
    LOAD_SEMANTICS,
    RMW_KINDS,
    RMW_SEMANTICS,
    SCOPES,
    STORE_SEMANTICS,
    atomic_elements,
)
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx.ptxas import assemble, find_ptxas
from cutec.target import COMPILE_TARGETS
from tests.cpu.test_atomics import HANDOFF
from tests.ptx.legal import ptx_of

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

# The PTX type suffix of each kind and element type (PTX ISA, atom: add takes .u32/.u64
# and .f32/.f64, max and min .s32/.s64, exch .b32/.b64).
SUFFIX = {
    ("add", "i32"): "u32", ("add", "i64"): "u64", ("add", "f32"): "f32", ("add", "f64"): "f64",
    ("max", "i32"): "s32", ("max", "i64"): "s64", ("min", "i32"): "s32", ("min", "i64"): "s64",
    ("exch", "i32"): "b32", ("exch", "i64"): "b64", ("exch", "f32"): "b32", ("exch", "f64"): "b64",
}  # fmt: skip
MEM = {"i32": "s32", "i64": "s64", "f32": "f32", "f64": "f64"}
TYPES = ("i32", "i64", "f32", "f64")


def _every_form() -> tuple[str, list[str]]:
    """A kernel with every atomic form (each read-modify-write once with its old value
    stored, once with it unused) and the PTX lines expected of it."""
    args = ", ".join(f"%p{t}: !gpu.ptr<{t}, global>, %v{t}: {t}" for t in TYPES)
    body, want = [], []
    n = 0
    for kind, sem, scope in itertools.product(RMW_KINDS, RMW_SEMANTICS, SCOPES):
        for t in map(str, atomic_elements(kind)):
            ptr = f"%p{t}, %v{t} : !gpu.ptr<{t}, global>, {t}"
            body.append(f"    %r{n} = thread.atomic_rmw {kind} {sem} {scope} {ptr}")
            body.append(f"    thread.store %r{n}, %p{t} : {t}, !gpu.ptr<{t}, global>")
            body.append(f"    %u{n} = thread.atomic_rmw {kind} {sem} {scope} {ptr}")
            n += 1
            form = f"{sem}.{scope}.global.{kind}.{SUFFIX[kind, t]}"
            want.append(f"atom.{form} ")
            red = kind != "exch" and sem in ("relaxed", "release")
            want.append(f"red.{form} [" if red else f"atom.{form} ")
    for sem, scope, t in itertools.product(LOAD_SEMANTICS, SCOPES, TYPES):
        body.append(f"    %l{n} = thread.atomic_load {sem} {scope} %p{t} : !gpu.ptr<{t}, global>")
        body.append(f"    thread.store %l{n}, %p{t} : {t}, !gpu.ptr<{t}, global>")
        n += 1
        want.append(f"ld.{sem}.{scope}.global.{MEM[t]} ")
    for sem, scope, t in itertools.product(STORE_SEMANTICS, SCOPES, TYPES):
        body.append(
            f"    thread.atomic_store {sem} {scope} %v{t}, %p{t} : {t}, !gpu.ptr<{t}, global>"
        )
        want.append(f"st.{sem}.{scope}.global.{MEM[t]} [")
    for sem, scope in itertools.product(FENCE_SEMANTICS, SCOPES):
        body.append(f"    gpu.fence {sem} {scope}")
        want.append(f"fence.{sem}.{scope};")
    text = (
        "module {\n  kernel @every(" + args + ") {\n" + "\n".join(body) + "\n    return\n  }\n}\n"
    )
    return text, want


def _atomic_lines(ptx: str) -> list[str]:
    starts = ("atom.", "red.", "ld.relaxed", "ld.acquire", "st.relaxed", "st.release", "fence.")
    return [line.strip() for line in ptx.splitlines() if line.strip().startswith(starts)]


@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_every_form_is_spelled_as_the_ptx_isa_does(target: str) -> None:
    text, want = _every_form()
    module = parse_module(text, "every.mlir")
    verify(module)
    lines = _atomic_lines(ptx_of(module, target))
    assert len(lines) == len(want)
    for line, prefix in zip(lines, want, strict=True):
        assert line.startswith(prefix), (line, prefix)
    # the result is the old value's register, stored after; red has no destination
    assert "atom.relaxed.gpu.global.add.u32 %r" in "\n".join(lines)
    assert any(line.startswith("red.relaxed.gpu.global.add.f32 [%rd") for line in lines)


@needs_ptxas
@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_ptxas_assembles_every_form(target: str) -> None:
    text, _ = _every_form()
    module = parse_module(text, "every.mlir")
    verify(module)
    result = assemble(ptx_of(module, target), target)
    assert result.ok, result.stderr


@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_the_flag_handoff_compiles_to_a_spin_loop(target: str) -> None:
    """From .cute: the producer's fence and release store, the consumer's acquire load
    re-read at the head of its loop (docs/language.md, *Atomics and fences*)."""
    ptx = compile(Source(HANDOFF, "h.cute"), Stage.PTX, Options(target=target)).ptx
    lines = [line.strip() for line in ptx.splitlines() if not line.strip().startswith(".loc")]
    fence = lines.index("fence.acq_rel.gpu;")
    stores = [line for line in lines if line.startswith("st.")]
    after = [line for line in lines[fence:] if line.startswith("st.")]
    assert stores[0].startswith("st.global.f32 [")  # the data, before the fence
    assert after[0].startswith("st.release.gpu.global.s32 [")  # then the flag
    (load,) = [i for i, line in enumerate(lines) if line.startswith("ld.acquire.gpu.global.s32")]
    head = lines[load - 1].rstrip(":")
    assert head.startswith("$L_while")
    assert any(line == f"bra {head};" for line in lines[load:])  # back to the load
    if find_ptxas() is not None:
        result = assemble(ptx, target)
        assert result.ok, result.stderr
