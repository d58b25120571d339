"""The worked examples of the seed documents (000, 003, 004), reproduced exactly."""

from __future__ import annotations

from cutec.layout import (
    Layout,
    X,
    local_partition,
    local_tile,
    local_tile_and_offset,
    make_layout,
    make_layout_tv,
    parse_layout,
    raked_product,
    tv_partition,
)
from cutec.layout.symbolic import sym
from cutec.layout.text import format_int_tuple, format_layout

ATOM_16B_X8 = Layout((1, 8), (0, 1))  # SM80_CP_ASYNC<uint128_t> on 16-bit values


def test_004_make_tiled_copy_tiler_and_tv_layout() -> None:
    tiler, tv = make_layout_tv(Layout((8, 4), (1, 8)), Layout((8,), (1,)))
    assert format_int_tuple(tiler) == "(_64,_4)"
    assert str(tv) == "(_32,_8):(_8,_1)"
    assert str(raked_product(Layout((8, 4), (1, 8)), Layout((8,), (1,)))) == (
        "((_8,_8),(_1,_4)):((_32,_1),(_0,_8))"
    )


def test_004_local_tile_with_dynamic_tiler() -> None:
    # cta_tiler = make_shape(bM, bN, bK) with run-time ints: the tile extents are dynamic.
    bm, bn, bk = sym("bM"), sym("bN"), sym("bK")
    gmem = Layout((1024, 1024), (1, 1024))
    cta, offset = local_tile_and_offset(gmem, (bm, bn, bk), (0, 0, None), (1, X, 1))
    env = {"bM": 128, "bN": 128, "bK": 32}
    assert format_layout(cta, env=env) == "(128,32,32):(_1,_1024,32768)"
    assert offset == 0


def test_004_partition_s_and_partition_d() -> None:
    tiler, tv = make_layout_tv(Layout((8, 4), (1, 8)), Layout((8,), (1,)))
    bm, bk = sym("bM"), sym("bK")
    gmem = Layout((1024, 1024), (1, 1024))
    cta = local_tile(gmem, (bm, sym("bN"), bk), (0, 0, None), (1, X, 1))
    part_s = tv_partition(cta, tiler, tv, 0, ATOM_16B_X8, ATOM_16B_X8)
    env = {"bM": 128, "bN": 128, "bK": 32}
    assert format_layout(part_s, env=env) == "((_8,_1),2,8,32):((_1,_0),_64,_4096,32768)"
    smem = Layout((128, 32), (1, 128))
    part_d = tv_partition(smem, tiler, tv, 0, ATOM_16B_X8, ATOM_16B_X8)
    assert str(part_d) == "((_8,_1),_2,_8):((_1,_0),_64,_512)"


def test_000_sgemm_1_tiles_and_thread_partitions() -> None:
    m, n, k, lda = sym("M"), sym("N"), sym("K"), sym("ldA")
    ma = Layout((m, k), (1, lda))
    tiler = (128, 128, 8)
    g_a = local_tile(ma, tiler, (sym("bx"), sym("by"), None), (1, X, 1))
    assert str(g_a) == "(_128,_8,ceil_div(K,8)):(_1,ldA,8*ldA)"
    g_c = local_tile(Layout((m, n), (1, sym("ldC"))), tiler, (0, 0, None), (1, 1, X))
    assert str(g_c) == "(_128,_128):(_1,ldC)"
    s_a = make_layout((128, 8))
    t_a = make_layout((32, 8))
    assert str(local_partition(s_a, t_a, 0)) == "(_4,_1):(_32,_0)"
    t_ga = local_partition(g_a, t_a, 0)
    assert str(t_ga) == "(_4,_1,ceil_div(K,8)):(_32,_0,8*ldA)"


def test_003_layout_right_thread_layout() -> None:
    t_a = make_layout((32, 8), "LayoutRight")
    assert str(t_a) == "(_32,_8):(_8,_1)"
    s_a = make_layout((128, 8), "LayoutRight")
    assert str(local_partition(s_a, t_a, 9)) == "(_4,_1):(_256,_0)"


def test_parse_print_round_trip() -> None:
    for text in ["(_128,M):(_1,ldA)", "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)", "((_2,_4)):((_1,_2))"]:
        assert str(parse_layout(text)) == text
    assert parse_layout("(4,8):(1,4)").to_text(static_marks=False) == "(4,8):(1,4)"
