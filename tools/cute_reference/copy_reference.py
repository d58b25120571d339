"""Print CuTe's Copy_Traits for every copy atom cutec models, as a TSV.

The expected layouts in ``tests/atoms/data/cute_copy_traits.tsv`` come from
CuTe itself, not from cutec: this script writes a host-only C++ program that
includes CuTe's headers, builds it with ``nvcc`` (no GPU is needed) and prints,
per atom, ``ThrID``, ``SrcLayout``, ``DstLayout`` and ``RefLayout`` exactly as
``cute::print`` writes them. The output is committed; rerun this script only to
regenerate it::

    python tools/cute_reference/copy_reference.py \\
        --include /path/to/cutlass_library/source/include \\
        --out tests/atoms/data/cute_copy_traits.tsv

Row names are cutec's atom names (``copy.py`` looks them up); the C++ type
printed for each row is the CuTe type that name stands for.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

# (cutec atom name, CuTe Copy_Traits argument list). TMA traits are templated
# on the box size in bits; the rows below pin two box sizes.
ATOMS: tuple[tuple[str, str], ...] = (
    ("UniversalCopy<uint8_t>", "UniversalCopy<uint8_t>"),
    ("UniversalCopy<uint16_t>", "UniversalCopy<uint16_t>"),
    ("UniversalCopy<uint32_t>", "UniversalCopy<uint32_t>"),
    ("UniversalCopy<uint64_t>", "UniversalCopy<uint64_t>"),
    ("UniversalCopy<uint128_t>", "UniversalCopy<uint128_t>"),
    ("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>"),
    ("SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>"),
    ("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>"),
    ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"),
    ("SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>", "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>"),
    ("SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint64_t>", "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint64_t>"),
    ("SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>"),
    ("SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>"),
    ("SM75_U32x1_LDSM_N", "SM75_U32x1_LDSM_N"),
    ("SM75_U32x2_LDSM_N", "SM75_U32x2_LDSM_N"),
    ("SM75_U32x4_LDSM_N", "SM75_U32x4_LDSM_N"),
    ("SM75_U16x2_LDSM_T", "SM75_U16x2_LDSM_T"),
    ("SM75_U16x4_LDSM_T", "SM75_U16x4_LDSM_T"),
    ("SM75_U16x8_LDSM_T", "SM75_U16x8_LDSM_T"),
    ("SM90_U32x1_STSM_N", "SM90_U32x1_STSM_N"),
    ("SM90_U32x2_STSM_N", "SM90_U32x2_STSM_N"),
    ("SM90_U32x4_STSM_N", "SM90_U32x4_STSM_N"),
    ("SM90_U16x2_STSM_T", "SM90_U16x2_STSM_T"),
    ("SM90_U16x4_STSM_T", "SM90_U16x4_STSM_T"),
    ("SM90_U16x8_STSM_T", "SM90_U16x8_STSM_T"),
    # The executable TMA traits (after .with(mbar)) carry one template argument,
    # the bits one TMA moves; their layouts equal those of SM90_TMA_LOAD itself.
    ("SM90_TMA_LOAD<8192>", "SM90_TMA_LOAD_OP, Int<8192>"),
    ("SM90_TMA_LOAD<65536>", "SM90_TMA_LOAD_OP, Int<65536>"),
    ("SM90_TMA_STORE<8192>", "SM90_TMA_STORE_PTR, Int<8192>"),
    ("SM90_TMA_STORE<65536>", "SM90_TMA_STORE_PTR, Int<65536>"),
)

HEADER = "name\tthr_id\tsrc_layout\tdst_layout\tref_layout"

_PROGRAM_HEAD = r"""
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>  // pulls in every Copy_Traits, TMA included

using namespace cute;

template <class Traits>
void row(char const* name) {
  printf("%s\t", name);
  print(typename Traits::ThrID{});     printf("\t");
  print(typename Traits::SrcLayout{}); printf("\t");
  print(typename Traits::DstLayout{}); printf("\t");
  print(typename Traits::RefLayout{}); printf("\n");
}

int main() {
"""


def program_source() -> str:
    """The C++ program: one `row<Copy_Traits<...>>` call per atom."""
    calls = [f'  row<Copy_Traits<{args}>>("{name}");' for name, args in ATOMS]
    return _PROGRAM_HEAD + "\n".join(calls) + "\n  return 0;\n}\n"


def build_and_run(include: Path, nvcc: str = "nvcc") -> str:
    """Compile the program with nvcc (host code only) and return its stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "copy_reference.cu"
        exe = Path(tmp) / "copy_reference"
        src.write_text(program_source())
        cmd = [nvcc, "-std=c++17", "-O0", f"-I{include}", str(src), "-o", str(exe)]
        subprocess.run(cmd, check=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True)
    return out.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--include", type=Path, required=True, help="directory holding cute/ and cutlass/ headers"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--nvcc", default="nvcc")
    args = parser.parse_args(argv)
    body = build_and_run(args.include, args.nvcc)
    args.out.write_text(HEADER + "\n" + body)
    print(f"wrote {len(body.splitlines())} atoms to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
