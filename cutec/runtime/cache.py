"""The disk cache of compiled kernels: ``~/.cache/cutec`` (or ``$CUTEC_CACHE_DIR``).

An entry is one JSON file named by the SHA-256 of everything the compile read:
the kernel's source and every ``.cute`` file it imports, the kernel's name,
its static parameters and specialisation facts, the target and the GPU's
architecture, a hash of cutec's own code (not its version string: an edited
checkout must not load stale code) and the ptxas binary (path, size, mtime). So an entry never
needs invalidating; a changed input is a different file.

Entries are written to a temporary file in the same directory and renamed
into place (`os.replace` is atomic), so concurrent processes and a process
killed mid-write never leave a half-written entry under an entry's name. An
entry that does not parse, or whose checksum does not match, is ignored and
rebuilt. ``CUTEC_CACHE=0`` turns the cache off; ``cutec cache clear`` empties it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

_VERSION = 1  # the entry format; a new format is a new key
_IMPORT = re.compile(r'^\s*import\s+"([^"]+)"', re.MULTILINE)


def enabled() -> bool:
    return os.environ.get("CUTEC_CACHE", "1") not in ("0", "", "false", "off")


def directory() -> Path:
    override = os.environ.get("CUTEC_CACHE_DIR")
    return Path(override) if override else user_directory()


def user_directory() -> Path:
    """The user's cutec cache, ``~/.cache/cutec`` (``$XDG_CACHE_HOME/cutec``), whatever
    ``CUTEC_CACHE_DIR`` says: the home of what belongs to the installation rather than
    to a set of kernels (fastlaunch.py's compiled extension)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cutec"


# What a compile reads of cutec itself: its code, the grammar, and the .cute library
# the frontend inlines (the whole-tensor gemm's body, lib/gemm_tiled.cute).
_CODE_SUFFIXES = (".py", ".lark", ".cute")


def code_files() -> list[Path]:
    """cutec's own files that a compile's output depends on, in a fixed order."""
    root = Path(__file__).resolve().parent.parent  # the cutec package
    return [
        path
        for path in sorted(root.rglob("*"))
        if path.suffix in _CODE_SUFFIXES and "__pycache__" not in path.parts
    ]


@cache
def code_hash() -> str:
    """A hash of cutec's own source files (`code_files`)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in code_files():
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def imported_texts(text: str, path: Path | None, depth: int = 0) -> list[str]:
    """The texts of the .cute files `text` imports, transitively (for the key only:
    a file that cannot be read is keyed by its path; the compile reports it)."""
    if path is None or depth > 32:
        return []
    out = []
    for name in _IMPORT.findall(text):
        target = (path.parent / name).resolve()
        try:
            imported = target.read_text()
        except OSError:
            out.append(f"<unreadable {target}>")
            continue
        out += [f"{target}\n{imported}", *imported_texts(imported, target, depth + 1)]
    return out


def key(*parts: Any) -> str:
    """The entry name of a compile whose inputs are `parts` (JSON-serialisable)."""
    text = json.dumps([_VERSION, code_hash(), *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Entry:
    """What a compile left: JSON-able metadata and binary blobs (a cubin)."""

    meta: dict[str, Any]
    blobs: dict[str, bytes]


def _path(k: str) -> Path:
    return directory() / k[:2] / f"{k}.json"


def load(k: str) -> Entry | None:
    """The entry `k`, or None when absent, unreadable or corrupt."""
    if not enabled():
        return None
    try:
        data = json.loads(_path(k).read_text())
        body = json.dumps([data["meta"], data["blobs"]], sort_keys=True)
        if data["sha256"] != hashlib.sha256(body.encode()).hexdigest():
            return None
        blobs = {name: base64.b64decode(v) for name, v in data["blobs"].items()}
        return Entry(data["meta"], blobs)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(k: str, entry: Entry) -> None:
    """Write entry `k` atomically (a failure to write is not an error: it is a cache)."""
    if not enabled():
        return
    blobs = {name: base64.b64encode(v).decode() for name, v in entry.blobs.items()}
    body = json.dumps([entry.meta, blobs], sort_keys=True)
    data = {"meta": entry.meta, "blobs": blobs,
            "sha256": hashlib.sha256(body.encode()).hexdigest()}  # fmt: skip
    path = _path(k)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def info() -> dict[str, Any]:
    """Where the cache is, how many entries it holds and their size in bytes."""
    root = directory()
    files = list(root.glob("*/*.json")) if root.is_dir() else []
    return {
        "directory": str(root),
        "enabled": enabled(),
        "entries": len(files),
        "bytes": sum(f.stat().st_size for f in files),
    }


def clear() -> int:
    """Remove every entry (and stray temporary files); return how many entries went."""
    root = directory()
    if not root.is_dir():
        return 0
    removed = 0
    for f in root.glob("*/*"):
        if f.is_file() and (f.suffix == ".json" or f.name.startswith(".tmp-")):
            removed += not f.name.startswith(".tmp-")
            f.unlink(missing_ok=True)
    for d in root.iterdir():
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
    return removed
