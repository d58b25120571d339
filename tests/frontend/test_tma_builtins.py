# ruff: noqa: E501  (the case tables keep each message on one line)
"""The TMA builtins (cutec/frontend/build_tma.py) and the copy's lowering
(cutec/passes/lower_tma.py): one located error per misuse, at the user's line."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile

KERNEL = """kernel k(A: f16[M, K] : {stride} align 16, D: f16[M, K])
  grid (ceil_div(M, 64), ceil_div(K, 64)) threads 128
{{
  s_layout = {smem}
  tma = make_tma_atom(SM90_TMA_LOAD, {tensor}, s_layout, (64, 64))
  sA = smem f16[{dst}]
  bar = smem s64[1]
  mA = tma.get_tma_tensor({shape})
  gA = local_tile(mA, (64, 64), (block.x, block.y))
  (tAgA, tAsA) = tma_partition(tma, 0, make_layout({cta}), group_modes(sA, 0, 2), group_modes(gA, 0, 2))
  if thread.x == 0 {{
    mbarrier_init(bar[0], 1)
    mbarrier_init_fence()
  }}
  sync()
  if thread.x == 0 {{
    mbarrier_arrive_and_expect_tx(bar[0], 8192)
    copy({tma}, {src}, tAsA)
  }}
  mbarrier_wait(bar[0], 0)
}}
"""
K_SW128 = "tile_to_shape(GMMA.Layout_K_SW128_Atom[f16], (64, 64))"
DEFAULTS = dict(
    stride="(ldA, 1)",
    smem=K_SW128,
    tensor="A",
    dst="s_layout",
    cta="1",
    src="tAgA",
    shape="shape(A)",
    tma="tma.with(bar[0])",
)


def _compile(arch: str = "sm_90a", **kw: str) -> str:
    text = KERNEL.format(**{**DEFAULTS, **kw})
    return compile(Source(text, "t.cute"), Stage.PTX, Options(target=arch)).ptx or ""


def test_the_template_compiles() -> None:
    assert "cp.async.bulk.tensor.2d" in _compile()


@pytest.mark.parametrize(
    ("kw", "line", "message"),
    [
        (dict(arch="sm_80"), 5, "TMA copies need sm_90"),
        (
            dict(stride="(1, ldA)"),
            5,
            "the box's innermost dimension walks mode 1 of the tensor, whose stride is ldA",
        ),
        (
            dict(tensor="local_tile(A, (64, 64), (0, 0))"),
            5,
            "a TMA atom maps a tensor parameter of the kernel",
        ),
        (
            dict(
                smem="make_layout((64, 64), (64, 1))",
                stride="(1, ldA)",
                dst="make_layout((64, 64), (64, 1))",
            ),
            5,
            "the box's innermost dimension walks mode 1 of the tensor, whose stride is ldA",
        ),
        (
            dict(smem="tile_to_shape(GMMA.Layout_K_SW128_Atom[f16], (32, 64))"),
            5,
            "no TMA writes this shared tile: the shared layout holds 2048 elements but the tile (64, 64) has 4096",
        ),
        (
            dict(cta="2"),
            10,
            "multicast TMA (a CTA layout of more than one CTA) is not supported yet",
        ),
        (
            dict(shape="(K, M)"),
            8,
            "the TMA tensor's shape is the mapped tensor's, (M,K), whose extents the map "
            "holds; not (K,M)",
        ),
        (
            dict(dst="make_layout((64, 64))"),
            18,
            "the TMA atom moves 128-byte swizzled tiles, but the shared tile is not swizzled",
        ),
        (
            dict(dst="tile_to_shape(GMMA.Layout_K_SW64_Atom[f16], (64, 64))"),
            18,
            "the shared tile's swizzle Sw<2,3,3> is not the TMA atom's B128",
        ),
        (
            dict(src="tAgA", tma="tma"),
            18,
            "a TMA load completes on an mbarrier: copy(tma.with(bars[i]), coords, smem)",
        ),
        (
            dict(src="tma.get_tma_tensor(shape(A))"),
            18,
            "the coordinates' box values are not the box's coordinates in order",
        ),
    ],
)
def test_misuse_is_one_located_error(kw: dict, line: int, message: str) -> None:
    arch = kw.pop("arch", "sm_90a")
    with pytest.raises(CompileError) as e:
        _compile(arch, **kw)
    d = e.value.diagnostics[0]  # (sm_80 refuses the mbarrier's expect_tx too)
    assert message in d.message
    assert (d.location.file, d.location.line) == ("t.cute", line)
