"""cutec's verdicts on the table of tensor-map descriptions (tests/atoms/tma_map_table.py)
that tests/gpu/test_tma_driver_rules_gpu.py holds against the driver's: each valid one
is accepted, each other is rejected naming its rule, and every rule the table claims to
cover has a rejecting row."""

from __future__ import annotations

import pytest

from tests.atoms.tma_map_table import CASES, MapCase

BASE = 0x7F0000000000  # a 256-byte aligned device address, as an allocation's


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cutecs_verdict_is_the_tables(case: MapCase) -> None:
    got = case.verdict(BASE)
    if case.rejects is None:
        assert got is None, got
    else:
        assert got is not None and case.rejects in got, got


def test_the_table_breaks_every_rule() -> None:
    """One rejecting row per rule of cutec/atoms/tma.py (a fragment of its message)."""
    rules = ["rank must be 1..5", "box_dims[", "inner box dimension is", "spans",
             "global_strides[", "below 2^40", "global_dims[", "element_strides[",
             "NaN out-of-bounds fill", "interleaved TMA needs rank",
             "multiple of 32", "16-byte aligned", "32-byte aligned"]  # fmt: skip
    messages = [c.verdict(BASE) or "" for c in CASES]
    assert all(any(rule in m for m in messages) for rule in rules)
    assert len({c.name for c in CASES}) == len(CASES)
    assert sum(c.rejects is None for c in CASES) >= 10  # and valid ones, as many
