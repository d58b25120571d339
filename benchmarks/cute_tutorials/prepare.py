"""Fetch CuTe's sources from the nvidia-cutlass wheel, for benchmarks/gemm.py.

    python benchmarks/cute_tutorials/prepare.py              # on the development machine
    python benchmarks/cute_tutorials/prepare.py --wheel W.whl   # from a wheel already here

Downloads the wheel with pip (``pip download --no-deps nvidia-cutlass==4.2.0.0``)
and extracts only what the tutorial GEMMs need into ``.bench/cutlass/`` (ignored
by git): CuTe's and CUTLASS's headers (``include/cute``, ``include/cutlass``),
the three ``cutlass/util`` headers the tutorials include, and the tutorial
``.cu`` files. The folder is small enough to carry to the GPU machine, where
gemm.py builds the tutorials with nvcc (the GPU machine has no internet).
Nothing of CuTe is copied into the repository.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DEST = ROOT / ".bench" / "cutlass"
WHEEL = "nvidia-cutlass==4.2.0.0"
PREFIX = "cutlass_library/source/"
# Paths under the wheel's cutlass_library/source/ that are extracted.
WANTED = (
    "include/cute/",
    "include/cutlass/",
    "tools/util/include/cutlass/util/print_error.hpp",
    "tools/util/include/cutlass/util/GPU_Clock.hpp",
    "tools/util/include/cutlass/util/helper_cuda.hpp",
    "examples/cute/tutorial/sgemm_1.cu",
    "examples/cute/tutorial/sgemm_2.cu",
    "examples/cute/tutorial/sgemm_sm80.cu",
    "examples/cute/tutorial/hopper/wgmma_sm90.cu",
    "examples/cute/tutorial/hopper/wgmma_tma_sm90.cu",
)
STAMP = "SOURCE.txt"


def download(dest_dir: Path) -> Path:
    """The wheel, downloaded by pip into dest_dir."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", WHEEL, "-d", str(dest_dir)]
    subprocess.run(cmd, check=True)
    (wheel,) = dest_dir.glob("nvidia_cutlass-*.whl")
    return wheel


def extract(wheel: Path, dest: Path) -> int:
    """Extract the WANTED paths of `wheel` into `dest`; returns the bytes written."""
    total = 0
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if not info.filename.startswith(PREFIX) or info.is_dir():
                continue
            rel = info.filename[len(PREFIX) :]
            if not any(rel == w or (w.endswith("/") and rel.startswith(w)) for w in WANTED):
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            total += info.file_size
    missing = [w for w in WANTED if not (dest / w).exists()]
    if missing:
        raise RuntimeError(f"{wheel.name} lacks {', '.join(missing)}")
    (dest / STAMP).write_text(f"{WHEEL} ({wheel.name}): {PREFIX}{{{','.join(WANTED)}}}\n")
    return total


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="use this wheel instead of downloading")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download(Path(tmp))
        written = extract(wheel, args.dest)
    print(f"{args.dest}: {written / 2**20:.1f} MiB extracted from {wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
