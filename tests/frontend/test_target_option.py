"""The target a kernel is compiled for: chosen by --arch, recorded on the module, its limits."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, compile
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify

# 200 x 256 f32 = 200 KiB of shared memory: under sm_90a's 227 KiB, over sm_80's 163 KiB.
KERNEL = """kernel k(A: f32[128, 128]) grid (1) threads 128 {
  s = smem f32[(200, 256) : (256, 1)]
}
"""


def _compile(arch: str) -> str:
    return compile(Source(KERNEL, "k.cute"), options=Options(target=arch)).text


def test_the_module_records_the_target_and_round_trips() -> None:
    text = _compile("sm_90a")
    assert text.startswith('module attributes {target = "sm_90a"} {')
    module = parse_module(text)
    verify(module)
    assert module.target == "sm_90a"
    assert print_op(module) == text


def test_shared_memory_is_checked_against_the_targets_limit() -> None:
    with pytest.raises(CompileError) as err:
        _compile("sm_80")
    (diag,) = err.value.diagnostics
    assert diag.message == (
        "shared memory use reaches 204800 bytes with this 204800-byte buffer; "
        "the limit on sm_80 is 166912 (163 KiB per CTA)"
    )
    assert diag.location is not None and (diag.location.line, diag.location.col) == (2, 7)


def test_an_unknown_target_is_one_error_listing_the_known_ones() -> None:
    with pytest.raises(CompileError, match="--arch: unknown target 'sm_70'; known: sm_75, sm_80"):
        _compile("sm_70")
    module = parse_module('module attributes {target = "sm_100"} {\n}\n')
    with pytest.raises(CompileError, match="unknown target 'sm_100'; known: sm_75"):
        verify(module)


def test_threads_per_cta_come_from_the_target() -> None:
    text = KERNEL.replace("threads 128", "threads (1024, 2)")
    with pytest.raises(CompileError) as err:
        compile(Source(text, "k.cute"), options=Options(target="sm_80"))
    (diag,) = err.value.diagnostics
    assert diag.message == "2048 threads per block; at most 1024"
