"""TiledMMA / TiledCopy: CuTe's own printed layouts and partitions, reproduced exactly.

``data/tiled_reference.txt`` is the output of ``tools/cute_reference/tiled_reference.py``
(a host-only program against CuTe's headers). Every configuration in it is rebuilt here
from its JSON spec. Run-time values are symbols: each plain-integer leaf of a tensor
layout, and the thread index (``sym("tid", max_value=threads-1)``, as in a kernel), so
every partition is computed symbolically and printed under the recorded values.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cutec.atoms.copy import copy_atom
from cutec.atoms.tiled import (
    TiledCopy,
    TiledMMA,
    make_copy_atom,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_tv,
    make_tiled_mma,
    tiled_copy_svg,
    tiled_mma_svg,
)
from cutec.layout import Layout, LayoutError, size
from cutec.layout.symbolic import evaluate, sym
from cutec.layout.text import format_int_tuple, format_layout, format_leaf, parse_value

DATA = Path(__file__).parent / "data" / "tiled_reference.txt"


def _records() -> dict[str, list[tuple[str, str]]]:
    """config -> [(query, CuTe's text)], in file order (the first query is 'spec')."""
    out: dict[str, list[tuple[str, str]]] = {}
    current: list[str] | None = None
    for line in DATA.read_text().splitlines():
        if line.startswith("#") and current is None:
            continue
        if line.startswith("@@ "):
            name, query = line[3:].split(" ", 1)
            current = []
            out.setdefault(name, []).append((query, current))  # type: ignore[arg-type]
        elif current is not None:
            current.append(line)
    return {n: [(q, "\n".join(lines)) for q, lines in recs] for n, recs in out.items()}


RECORDS = _records()
SPECS = {name: json.loads(recs[0][1]) for name, recs in RECORDS.items()}


def _reader(env: dict[str, int]) -> Callable[[str], Any]:
    """A layout reader making every plain-integer leaf a fresh symbol recorded in env."""

    def leaf(token: str) -> Any:
        if re.fullmatch(r"\d+", token):
            name = f"d{len(env)}"
            env[name] = int(token)
            return sym(name)
        return int(token.lstrip("_"))

    def read(text: str) -> Any:
        value = parse_value(text, leaf=leaf)
        return value if isinstance(value, Layout) else Layout(value)

    return read


@functools.cache
def _mma(name: str) -> TiledMMA:
    spec = SPECS[name]
    perm = spec.get("perm")
    return make_tiled_mma(
        spec["atom"], parse_value(spec["atom_layout"]), None if perm is None else parse_value(perm)
    )


@functools.cache
def _copy(name: str) -> TiledCopy:
    spec = SPECS[name]
    atom = make_copy_atom(spec["atom"], spec["bits"])
    if "mma" in spec:
        make = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}
        return make[spec["operand"]](atom, _mma(spec["mma"]))
    if "layout_tv" in spec:
        return make_tiled_copy_tv(atom, parse_value(spec["layout_tv"]), parse_value(spec["tiler"]))
    return make_tiled_copy(atom, parse_value(spec["thr"]), parse_value(spec["val"]))


def _part(layout: Layout, offset: Any, env: dict[str, int]) -> str:
    return f"{format_leaf(offset, env=env)} o {format_layout(layout, env=env)}"


def _mma_answers(name: str) -> Callable[[str], str]:
    spec, mma = SPECS[name], _mma(name)
    env: dict[str, int] = {}
    read = _reader(env)
    tensors = {op: read(spec[op]) for op in "ABC"}
    tid = sym("tid", min_value=0, max_value=int(mma.num_threads) - 1)

    def answer(query: str) -> str:
        what, _, arg = query.partition(" ")
        if what == "print":
            return str(mma)
        if what == "thr_layout_vmnk":
            return str(mma.thr_layout_vmnk)
        if what == "tile_shape":
            return format_int_tuple(mma.tile_size_mnk)
        if what == "size":
            return format_leaf(mma.num_threads)
        if what.startswith("layout"):
            return str(mma.get_layout_TV(what[6]))
        if what.startswith("thrfrg_"):
            return format_layout(mma.thrfrg(what[-1], tensors[what[-1]]), env=env)
        if what == "partition_shape_C":
            return format_int_tuple(mma.partition_shape("C", tensors["C"].shape), env=env)
        env["tid"] = int(arg)
        thr = mma.get_slice(tid)
        if what == "thr_print":
            return thr.to_text(env)
        op = what[-1]
        if what.startswith("partition_fragment_"):
            return format_layout(thr.partition_fragment(op, tensors[op]), env=env)
        return _part(*thr.partition_and_offset(op, tensors[op]), env)

    return answer


def _copy_answers(name: str) -> Callable[[str], str]:
    spec, tc = SPECS[name], _copy(name)
    env: dict[str, int] = {}
    read = _reader(env)
    src, dst = read(spec["S"]), read(spec["D"])
    tid = sym("tid", min_value=0, max_value=int(tc.num_threads) - 1)

    def answer(query: str) -> str:
        what, _, arg = query.partition(" ")
        simple: dict[str, Callable[[], Any]] = {
            "print": lambda: tc,
            "tiler_mn": lambda: format_int_tuple(tc.tiler_mn),
            "layout_tv": lambda: tc.layout_tv,
            "size": lambda: format_leaf(tc.num_threads),
            "layoutS_TV": tc.get_layoutS_TV,
            "layoutD_TV": tc.get_layoutD_TV,
            "tidfrg_S": lambda: format_layout(tc.tidfrg_S(src), env=env),
            "tidfrg_D": lambda: format_layout(tc.tidfrg_D(dst), env=env),
            "retile_S": lambda: _part(*tc.retile_and_offset(read(spec["retile"])), env),
            "retile_D": lambda: _part(*tc.retile_and_offset(read(spec["retile"])), env),
        }
        if what in simple:
            return str(simple[what]())
        env["tid"] = int(arg)
        thr = tc.get_slice(tid)
        if what == "thr_print":
            return thr.to_text(env)
        if what == "partition_S":
            return _part(*thr.partition_S_and_offset(src), env)
        return _part(*thr.partition_D_and_offset(dst), env)

    return answer


@pytest.mark.parametrize("name", list(RECORDS))
def test_matches_cute(name: str) -> None:
    answer = (_mma_answers if SPECS[name]["kind"] == "mma" else _copy_answers)(name)
    mismatches = []
    for query, expected in RECORDS[name][1:]:
        got = answer(query)
        if got != expected:
            mismatches.append(f"{query}:\n  cute:  {expected!r}\n  cutec: {got!r}")
    assert not mismatches, f"{len(mismatches)} differ:\n" + "\n".join(mismatches)


def test_int_thread_index_prints_as_cute() -> None:
    # A plain int thread index prints as CuTe's run-time int does (static only in size-1 modes).
    checked = 0
    for name, recs in RECORDS.items():
        tiled: Any = _mma(name) if SPECS[name]["kind"] == "mma" else _copy(name)
        for query, expected in recs:
            if query.startswith("thr_print "):
                assert str(tiled.get_slice(int(query.split()[1]))) == expected, (name, query)
                checked += 1
    assert checked >= 60


def test_reference_covers_the_brief() -> None:
    kinds = Counter(spec["kind"] for spec in SPECS.values())
    assert kinds["mma"] >= 10 and kinds["copy"] >= 10
    assert {"seed_cp_async", "fma_16x16", "sm80_2x2_perm", "ldsm_A"} <= set(SPECS)


# -- the seeds, written out ---------------------------------------------------------------


def test_seed_004_tiled_copy_prints_as_cute() -> None:
    tc = make_tiled_copy(
        make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", 16),
        Layout((8, 4), (1, 8)),
        Layout((8,), (1,)),
    )
    assert str(tc) == (
        "TiledCopy\n"
        "  Tiler_MN:       (_64,_4)\n"
        "  TiledLayout_TV: (_32,_8):(_8,_1)\n"
        "Copy_Atom\n"
        "  ThrID:        _1:_0\n"
        "  ValLayoutSrc: (_1,_8):(_0,_1)\n"
        "  ValLayoutDst: (_1,_8):(_0,_1)\n"
        "  ValLayoutRef: (_1,_8):(_0,_1)\n"
        "  ValueType:    16b"
    )
    thr = tc.get_slice(0)
    assert str(thr).startswith("ThrCopy\n  ThrIdx: 0\nTiledCopy\n")
    bm, bk = sym("bM"), sym("bK")
    gmem_cta = Layout((bm, bk, 32), (1, 1024, 32 * 1024))
    env = {"bM": 128, "bK": 32}
    assert format_layout(thr.partition_S(gmem_cta), env=env) == (
        "((_8,_1),2,8,_32):((_1,_0),_64,_4096,_32768)"
    )
    assert str(thr.partition_D(Layout((128, 32), (1, 128)))) == "((_8,_1),_2,_8):((_1,_0),_64,_512)"


def test_sgemm_2_tiled_mma_partitions() -> None:
    mma = make_tiled_mma("UniversalFMA_F32F32F32F32", Layout((16, 16, 1)))
    assert mma.num_threads == 256 and mma.tile_size_mnk == (16, 16, 1)
    s_a = Layout((128, 8), (1, 129))  # padded m-major smem
    ld_c = sym("ldC")
    thr = mma.get_slice(17)  # (m,n) thread (1,1)
    assert thr.thr_vmnk == (0, 1, 1, 0)
    a, a_off = thr.partition_and_offset("A", s_a)
    assert (str(a), a_off) == ("(_1,_8,_8):(_0,_16,_129)", 1)
    c, c_off = thr.partition_and_offset("C", Layout((128, 128), (1, ld_c)))
    assert str(c) == "(_1,_8,_8):(_0,_16,16*ldC)" and c_off == 1 + ld_c
    assert str(thr.partition_fragment_C(Layout((128, 128), (1, ld_c)))) == "(_1,_8,_8):(_0,_1,_8)"


def test_sm80_2x2_fragment_shapes() -> None:
    mma = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", Layout((2, 2, 1)))
    assert str(mma.thr_layout_vmnk) == "(_32,_2,_2,_1):(_1,_32,_64,_0)"
    assert mma.tile_size_mnk == (32, 16, 16)
    thr = mma.get_slice(sym("tid", min_value=0, max_value=127))
    assert str(thr.partition_fragment_A(Layout((128, 32)))) == (
        "((_2,_2,_2),_4,_2):((_1,_2,_4),_8,_32)"
    )
    assert format_int_tuple(thr.partition_fragment_B(Layout((128, 32))).shape) == "((_2,_2),_8,_2)"
    assert format_int_tuple(thr.partition_fragment_C(Layout((128, 128))).shape) == (
        "((_2,_2),_4,_8)"
    )


def test_ldmatrix_copy_matches_mma_a() -> None:
    # sgemm_sm80: the LDSM copy of A has the MMA's own A partitioning (32x16 tile).
    mma = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", Layout((2, 2)), (32, 32, 16))
    s2r = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", 16), mma)
    assert s2r.tiler_mn == (32, 16) and s2r.num_threads == 128
    assert s2r.layout_tv == mma.get_layoutA_TV()
    t_crA = mma.get_slice(0).partition_fragment_A(Layout((128, 64), (64, 1)))
    assert str(s2r.get_slice(0).retile_D(t_crA)) == "((_8,_1),_4,_4):((_1,_0),_32,_8)"


def test_symbolic_thread_offsets_evaluate_to_each_thread() -> None:
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", 32), Layout((32, 8)), (4, 1))
    s_a = Layout((128, 8), (1, 128))
    tid = sym("tid", min_value=0, max_value=255)
    layout, offset = tc.get_slice(tid).partition_D_and_offset(s_a)
    for t in (0, 1, 31, 32, 200, 255):
        concrete, concrete_off = tc.get_slice(t).partition_D_and_offset(s_a)
        assert layout == concrete and evaluate(offset, {"tid": t}) == concrete_off


# -- properties -------------------------------------------------------------------------


def _copies_for_property() -> list[TiledCopy]:
    u128 = make_copy_atom("UniversalCopy<uint128_t>", 32)
    sm80 = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", Layout((2, 2)), (32, 32, 16))
    return [
        make_tiled_copy(u128, Layout((32, 8)), Layout((4, 1))),
        make_tiled_copy(u128, Layout((16, 16), (16, 1)), Layout((1, 4))),
        make_tiled_copy(make_copy_atom("UniversalCopy<uint64_t>", 16), Layout((4, 8)), (2, 2)),
        make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", 16), sm80),
        make_tiled_copy_C(make_copy_atom("UniversalCopy<uint32_t>", 32), sm80),
    ]


# Threads owning each element: make_tiled_copy_A's layout broadcasts A over the 2 N-threads.
OWNERS = (1, 1, 1, 2, 1)


@pytest.mark.parametrize("index", range(5))
def test_partitions_cover_each_element_once(index: int) -> None:
    tc = _copies_for_property()[index]
    rng = random.Random(index)
    tm, tn = (int(t) for t in tc.tiler_mn)
    rows, cols = tm * rng.choice((1, 2)), tn * rng.choice((1, 3))
    # A row-major tensor, so that the partition's image is checked through a real stride.
    tensor = Layout((rows, cols), (cols, 1))
    for side in ("S", "D"):
        seen: Counter[int] = Counter()
        for t in range(int(tc.num_threads)):
            part, off = getattr(tc.get_slice(t), f"partition_{side}_and_offset")(tensor)
            seen.update(int(off) + int(part(i)) for i in range(int(size(part))))
        assert set(seen) == set(range(rows * cols)), side
        assert set(seen.values()) == {OWNERS[index]}, side
    # Source and destination partitions of a thread hold the same number of values, and
    # the same layout where the atom's source and destination layouts agree (not ldmatrix).
    t = rng.randrange(int(tc.num_threads))
    ps, pd = tc.get_slice(t).partition_S(tensor), tc.get_slice(t).partition_D(tensor)
    assert size(ps) == size(pd)
    if tc.atom.val_layout_src == tc.atom.val_layout_dst:
        assert ps == pd


def test_broadcast_free_copies_own_each_element_exactly_once() -> None:
    for tc in _copies_for_property()[:3]:
        tm, tn = (int(t) for t in tc.tiler_mn)
        tile = Layout((tm, tn))
        owners = Counter(
            int(tc.layout_tv(t, v))
            for t in range(int(tc.num_threads))
            for v in range(int(tc.num_values))
        )
        assert owners == Counter(range(int(size(tile))))


# -- errors and drawing -------------------------------------------------------------------


def test_errors_name_the_problem() -> None:
    with pytest.raises(LayoutError, match="value type"):
        make_tiled_copy(copy_atom("UniversalCopy<uint32_t>"), Layout(32))  # type: ignore[arg-type]
    with pytest.raises(LayoutError, match="too few vals"):
        make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", 32), Layout(32), Layout(2))
    with pytest.raises(LayoutError, match="rank"):
        make_tiled_mma("UniversalFMA_F32F32F32F32", Layout((2, 2, 2, 2)))


def test_svgs_draw_every_thread_value() -> None:
    mma = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", Layout((2, 2, 1)))
    svg = tiled_mma_svg(mma)
    assert svg.count("<svg") == 4 and "T127V" in svg and ">A<" in svg and ">C<" in svg
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", 32), Layout((32, 8)), (4, 1))
    svg = tiled_copy_svg(tc)
    assert "T255V3" in svg and ">S<" in svg and ">D<" in svg


def test_tiled_copy_with_an_empty_value_layout_is_an_error() -> None:
    from cutec.atoms.tiled import make_copy_atom, make_tiled_copy
    from cutec.layout import Layout, LayoutError

    atom = make_copy_atom("UniversalCopy<uint32_t>", 32)
    with pytest.raises(LayoutError, match="TiledCopy with no vals"):
        make_tiled_copy(atom, Layout((32, 4), (4, 1)), Layout((0, 1)))
