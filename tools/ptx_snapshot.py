"""Save, or compare against a saved copy, the PTX of every example kernel.

    python tools/ptx_snapshot.py save DIR       # before a change
    python tools/ptx_snapshot.py compare DIR    # after it: which PTX changed

The set is every .cute file under examples/ (each kernel, for sm_80 and sm_90a,
at its own defaults) and every kernel benchmarks/gemm.py times, at the
compile-time parameters it uses (sm_90a). A change that must leave the
generated code alone (a refactoring) compares equal byte for byte; `compare`
also says which files are equal once `.loc` lines are dropped and registers
renumbered, the weaker claim a commit must then name.

Run by hand before each commit of such a change; never in CI (it compiles
about 60 kernels).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from cutec import driver  # noqa: E402  (after the path set-up)
from cutec.diagnostics import CompileError  # noqa: E402

TARGETS = ("sm_80", "sm_90a")


def cases() -> list[tuple[str, Path, str | None, dict[str, str], str]]:
    """(file name, source, kernel, defines, target) for every snapshot."""
    from gemm_impls import CUTEC_KERNELS  # benchmarks/ on the path

    out = []
    for path in sorted((ROOT / "examples").glob("*.cute")):
        for target in TARGETS:
            out.append((f"{path.stem}.{target}.ptx", path, None, {}, target))
    for k in CUTEC_KERNELS:
        if not k.defines:
            continue
        tag = ",".join(f"{n}={v}" for n, v in k.defines)
        name = f"{k.example}.{k.kernel}[{tag}].sm_90a.ptx"
        out.append(
            (name, ROOT / "examples" / f"{k.example}.cute", k.kernel, dict(k.defines), "sm_90a")
        )
    return out


def compile_one(path: Path, kernel: str | None, defines: dict[str, str], target: str) -> str:
    options = driver.Options(defines=defines, kernel=kernel, target=target)
    try:
        result = driver.compile(driver.Source.from_file(path), driver.Stage.PTX, options)
    except CompileError as e:  # an example that does not build for a target is a fact too
        return f"// compile error\n{e}\n"
    except Exception as e:  # an internal error: a difference to report, not a crash
        return f"// internal error\n{type(e).__name__}: {e}\n"
    assert result.ptx is not None
    return result.ptx


_REG = re.compile(r"%(r|rd|f|fd|h|hh|p|rs)(\d+)\b")


def normalise(ptx: str) -> str:
    """PTX without `.loc` and `.file` lines (the latter name the checkout's path) and with
    registers numbered in order of appearance."""
    names: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        key = m.group(0)
        if key not in names:
            names[key] = f"%{m.group(1)}{len(names)}"
        return names[key]

    lines = [ln for ln in ptx.splitlines() if not ln.lstrip().startswith((".loc", ".file"))]
    return _REG.sub(rename, "\n".join(lines))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("action", choices=("save", "compare"))
    ap.add_argument("dir", type=Path)
    args = ap.parse_args()
    changed = 0
    if args.action == "save":
        args.dir.mkdir(parents=True, exist_ok=True)
    for name, path, kernel, defines, target in cases():
        ptx = compile_one(path, kernel, defines, target)
        saved = args.dir / name
        if args.action == "save":
            saved.write_text(ptx)
            continue
        if not saved.exists():
            print(f"new        {name}")
            changed += 1
        elif saved.read_text() == ptx:
            print(f"identical  {name}")
        elif normalise(saved.read_text()) == normalise(ptx):
            print(f"renumbered {name}")
        else:
            print(f"DIFFERENT  {name}")
            changed += 1
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
