"""Coordinates whose components hold `a % b` (a - b*(a//b)): the residue predicates'
identity coordinates decompose them (cute_coord's coordinate_component), and the
kernel computes the right values. This used to be an internal compiler error."""

from __future__ import annotations

import numpy as np

import cutec.runtime as rt
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.cute_coord import COORD_RADIX, coordinate_component
from cutec.layout.symbolic import sym

# A kernel copying A to C tile by tile, its CTA's tile (tm, tn) computed by `{tile}`.
TILE_COPY = """
kernel k(A: f32[M, N] : (1, ldA), C: f32[M, N] : (1, ldC))
  grid (ceil_div(M, 32), ceil_div(N, 32)) threads 32
{{
  pid = block.x + block.y * grid_dim.x
{tile}
  gA = local_tile(A, (32, 32), (tm, tn))
  gC = local_tile(C, (32, 32), (tm, tn))
  tA = local_partition(gA, make_layout((32, 1)), thread.x)
  tC = local_partition(gC, make_layout((32, 1)), thread.x)
  r = make_fragment_like(tA)
  copy(tA, r)
  copy(r, tC)
}}
"""

# The CTA's tile from a linear block id, as a grouped (Triton-style) order computes it.
MODULO_TILE = TILE_COPY.format(
    tile="""\
  tm = pid % grid_dim.x
  tn = pid / grid_dim.x"""
)


def test_components_keep_negative_and_mixed_sign_terms() -> None:
    x, n = sym("x", min_value=0), sym("n", min_value=1)
    r = COORD_RADIX
    mode0 = 32 * (x - n * (x // n))  # 32 * (x % n): a negative term
    mode1 = 5 + x  # x in both modes, with opposite signs of its terms' sums
    encoded = mode0 + r * mode1 - x
    assert coordinate_component(encoded, 0) == mode0 - x
    assert coordinate_component(encoded, 1) == mode1
    assert coordinate_component(-7 + 3 * r, 0) == -7
    assert coordinate_component(-7 + 3 * r, 1) == 3


def test_a_modulo_tile_coordinate_lowers_and_copies_right() -> None:
    result = compile(Source(MODULO_TILE, "modulo.cute"), Stage.PTX, Options())
    assert result.ptx is not None
    k = rt.jit(MODULO_TILE, device="cpu")
    rng = np.random.default_rng(0)
    m, n = 70, 45  # residue tiles in both modes: the copies are predicated
    a = np.asfortranarray(rng.standard_normal((m, n), dtype=np.float32))
    c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
    k(a, c)
    np.testing.assert_array_equal(c, a)


# Triton's grouped launch order: tiles walk 4 rows of M before moving along N.
GROUPED_TILE = TILE_COPY.format(
    tile="""\
  per_group = 4 * grid_dim.y
  first_m = (pid / per_group) * 4
  rows = min(grid_dim.x - first_m, 4)
  tm = first_m + (pid % per_group) % rows
  tn = (pid % per_group) / rows"""
)


def test_a_division_by_a_run_time_value_is_computed_once() -> None:
    """The coordinates divide by run-time values; each division is a value of its own
    (an opaque symbol of the layout analysis), not replayed into every address and
    predicate: the PTX divides as often as the source does (it had 30 divisions)."""
    result = compile(Source(GROUPED_TILE, "grouped.cute"), Stage.PTX, Options())
    assert result.ptx is not None
    divisions = [
        line for line in result.ptx.splitlines() if line.strip().startswith(("div.", "rem."))
    ]
    assert len(divisions) <= 4, "\n".join(divisions)
    k = rt.jit(GROUPED_TILE, device="cpu")
    rng = np.random.default_rng(1)
    m, n = 200, 70  # 7 x 3 tiles: the last group has 3 rows; residues in both modes
    a = np.asfortranarray(rng.standard_normal((m, n), dtype=np.float32))
    c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
    k(a, c)
    np.testing.assert_array_equal(c, a)
