"""vectorize: access widths from layouts, alignment and facts, checked by values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_compute import CopyOp
from cutec.ir.layout_of import LayoutAnalysis
from cutec.passes.vectorize import Vectorize, vector_width
from tests.ir.test_address_of import addresses

SGEMM_2 = (Path(__file__).parents[2] / "examples" / "sgemm_2.cute").read_text()


def module(text: str = SGEMM_2) -> ModuleOp:
    return compile_source(text, "sgemm_2.cute")


def copies(m: ModuleOp, kernel: str) -> list[CopyOp]:
    (k,) = [k for k in m.walk_type(KernelOp) if k.sym_name == kernel]
    return list(k.walk_type(CopyOp))


def test_sgemm_2_nt_moves_128_bits_and_tn_one_element() -> None:
    m = module()
    la = LayoutAnalysis()
    assert {vector_width(la, c.src, c.dst).elements for c in copies(m, "sgemm_nt")} == {4}
    tn = vector_width(la, copies(m, "sgemm_tn")[0].src, copies(m, "sgemm_tn")[0].dst)
    assert tn.elements == 1
    assert tn.limits[0].startswith("128-bit accesses not used: 4 consecutive elements of")
    Vectorize().run(m)
    # The register -> shared copies have no atom: the pass writes their width.
    plain = [c for c in copies(m, "sgemm_nt") if c.tiled is None]
    assert plain and all(c.attributes["vector"].value == 4 for c in plain)


def test_without_the_assumption_128_bit_loads_are_refused() -> None:
    text = SGEMM_2.replace("ldA % 4 == 0, ", "")
    la = LayoutAnalysis()
    c = copies(module(text), "sgemm_nt")[0]
    width = vector_width(la, c.src, c.dst)
    assert width.elements == 1
    assert "is not known to be a multiple of 4" in width.limits[0] and "ldA" in width.limits[0]
    with pytest.raises(CompileError) as e:
        Vectorize().run(module(text))
    d = e.value.diagnostics[0]
    assert d.message.startswith("UniversalCopy<uint128_t> moves 4 elements at once, but this copy")
    assert (d.location.line, d.location.col) == (39, 3)


def test_without_align_the_base_limits_the_width() -> None:
    text = SGEMM_2.replace("(1, ldA) align 16,", "(1, ldA),", 1)
    c = copies(module(text), "sgemm_nt")[0]
    width = vector_width(LayoutAnalysis(), c.src, c.dst)
    assert width.elements == 1
    assert width.limits[0] == (
        "128-bit accesses not used: the base is aligned to 4 bytes only (declare `align 16`)"
    )


def test_every_chosen_vector_is_contiguous_and_aligned_for_every_thread() -> None:
    # Soundness by values: for extents that satisfy the facts, each thread's vectors
    # are p consecutive elements starting at a multiple of p.
    m = module()
    la = LayoutAnalysis()
    rng = np.random.default_rng(0)
    for c in copies(m, "sgemm_nt"):
        p = vector_width(la, c.src, c.dst).elements
        for side in (c.src, c.dst):
            a = la.address_of(side)
            for _ in range(3):
                env = {s: 4 * int(rng.integers(64, 512)) for s in ("M", "N", "K", "ldA", "ldB")}
                env |= {"bid_x": int(rng.integers(0, 8)), "bid_y": int(rng.integers(0, 8))}
                for tid in range(0, 256, 37):
                    env |= {"tid_x": tid, "k_tile_next": 1}
                    addr = addresses(a, env).reshape(-1, p)
                    assert (addr[:, 0] % p == 0).all()
                    assert (np.diff(addr, axis=1) == 1).all()
