# ruff: noqa: E501  (the case table keeps each message on one line)
"""warpgroup_reg_alloc / warpgroup_reg_dealloc (PTX setmaxnreg, sm_90a) and the register
budget cutec checks before writing PTX (cutec/analysis/register_budget.py): role
branches on the warpgroup index, dec not above and inc not below the count a warpgroup
holds (168 at entry for 384 threads: ptxas's, from .reqntid and .minnctapersm 1), the
pool's 65,536 registers. ptxas assembles the kernel with one USETMAXREG per site and no
"setmaxnreg ignored"; both CPU backends run it (setmaxnreg changes nothing there)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cutec.analysis.register_budget import entry_count
from cutec.cpu import native, reference
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from tests.ptx.sass_check import assert_sass, needs_disassembler

ROLES = """kernel roles(out: f32[N]) grid 1 threads {threads} {{
  wg = warpgroup_idx()
  if {producer} {{
    warpgroup_reg_dealloc({low})
    out[thread.x] = 1.0
  }} else {{
    warpgroup_reg_alloc({high})
    out[thread.x] = 2.0
  }}
}}
"""
DEFAULTS = dict(threads="384", producer="wg == 0", low="40", high="232")


def _compile(stage: Stage = Stage.PTX, arch: str = "sm_90a", **kw: str) -> Any:
    text = ROLES.format(**{**DEFAULTS, **kw})
    return compile(Source(text, "r.cute"), stage, Options(target=arch))


def test_the_entry_count_is_the_pool_shared_out() -> None:
    assert entry_count(384, 1) == 168 and entry_count(256, 1) == 248
    assert entry_count(384, 2) == 80


def test_roles_assemble_with_their_directives() -> None:
    result = _compile(Stage.CUBIN)
    ptx = result.ptx
    assert ".reqntid 384, 1, 1" in ptx and ".minnctapersm 1" in ptx
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in ptx
    assert result.warnings == []  # no "setmaxnreg ignored" (C7508)


@needs_disassembler
def test_one_usetmaxreg_per_site() -> None:
    result = _compile(Stage.CUBIN)
    ops = assert_sass(result.cubin, contains={"USETMAXREG"}, absent=set(), kernel="roles")
    assert ops["USETMAXREG"] == 2


@pytest.mark.parametrize("backend", [reference, native], ids=["interpreter", "native"])
def test_the_cpu_runs_the_roles(backend: Any) -> None:
    module = _compile(Stage.THREAD).module
    kernel = next(iter(module.walk_type(KernelOp)))
    out = np.zeros(384, np.float32)
    backend.run_kernel(kernel, 1, {"out": out, "N": 384})
    np.testing.assert_array_equal(out, [1.0] * 128 + [2.0] * 256)


@pytest.mark.parametrize(
    ("kw", "line", "message"),
    [
        (
            dict(threads="320"),
            4,
            "setmaxnreg sets a warpgroup's registers, and the kernel's 320 threads are not whole warpgroups of 128",
        ),
        (
            dict(producer="thread.x < 64"),
            4,
            "setmaxnreg under a branch that the threads of warpgroup 0 take differently: all 128 run it, or none",
        ),
        (
            dict(producer="block.x == 0"),
            4,
            "setmaxnreg under a branch whose condition is not the warpgroup's alone",
        ),
        (
            dict(low="200"),
            4,
            "setmaxnreg.dec to 200 in warpgroup 0, which holds 168 registers per thread: dec can only lower the count",
        ),
        (
            dict(high="160"),
            7,
            "setmaxnreg.inc to 160 in warpgroup 1, which holds 168 registers per thread: inc can only raise the count",
        ),
        (
            dict(producer="wg == 7"),
            7,
            "the warpgroups end holding 128 x 232 + 128 x 232 + 128 x 232 = 89088 registers, more than the 65536 of the pool",
        ),
        (
            dict(high="230"),
            7,
            "warpgroup_reg_alloc takes a compile-time register count, a multiple of 8 in 24..256, not the integer 230",
        ),
        (dict(arch="sm_80"), 4, "warpgroup_reg_dealloc (setmaxnreg) needs"),
    ],
)
def test_each_broken_rule_is_one_located_error(kw: dict, line: int, message: str) -> None:
    arch = kw.pop("arch", "sm_90a")
    with pytest.raises(CompileError) as info:
        _compile(arch=arch, **kw)
    d = info.value.diagnostics[0]
    assert message in d.message, d.message
    assert (d.location.file, d.location.line) == ("r.cute", line)


def test_a_setmaxnreg_in_a_loop_is_refused() -> None:
    text = ROLES.format(**DEFAULTS).replace(
        "    warpgroup_reg_alloc(232)\n",
        "    for i in range(2) {\n      warpgroup_reg_alloc(232)\n    }\n",
    )
    with pytest.raises(CompileError) as info:
        compile(Source(text, "r.cute"), Stage.PTX, Options(target="sm_90a"))
    (d,) = info.value.diagnostics
    assert d.location.line == 8 and "setmaxnreg inside a loop" in d.message
