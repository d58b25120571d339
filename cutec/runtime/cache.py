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

The checksum finds damage, not tampering: whoever may write an entry may
recompute it. The directory is the trust boundary (docs/runtime.md, *The cache's
threat model*). cutec makes its directories 0700 with a ``CACHEDIR.TAG`` and its
files 0600, whatever the umask, and uses no directory or file that another user
owns or that group or others may write (`untrusted`): it says so once per
directory and process (a `CacheWarning`) and runs without it. A directory without
the tag is taken as a cache only when it holds nothing but a cache's files (it is
then tagged); `clear` removes files named as entries, and only under the tag.
What an entry holds is data, read by the record's own reader (`load_checked`:
`KernelLaunch.from_json`, a specialisation's) or checked by `CpuObjects`; an entry
the reader refuses is not as cutec writes it (damage the checksum missed, or
tampering): it is said (a `CacheWarning`) and compiled again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from cutec.ir.json_read import RecordError
from cutec.runtime.errors import CacheWarning, NotACacheError

T = TypeVar("T")

# The entry format (a signature entry is a `KernelLaunch` record); a new format is a new key.
_VERSION = 2
_IMPORT = re.compile(r'^\s*import\s+"([^"]+)"', re.MULTILINE)
_KEY = re.compile(r"[0-9a-f]{64}")  # an entry's name: a SHA-256 (`key`)
_SHARD = re.compile(r"[0-9a-f]{2}")  # the directory of the entries of one first byte
_TEMP = re.compile(r"\.tmp-[a-z0-9_]+\.json")  # what `store` writes before renaming
_TAG_NAME = "CACHEDIR.TAG"
# The tag's first line, which backup tools and `tar --exclude-caches` look for
# (https://bford.org/cachedir/).
_TAG_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
_TAG_TEXT = _TAG_SIGNATURE + (
    b"\n# This file is a cache directory tag created by cutec.\n"
    b"# For information about cache directory tags, see https://bford.org/cachedir/\n"
)
# What a cache directory holds besides the tag and the shards: the C launcher
# (cutec.runtime.fastlaunch).
_OWN_DIRS = ("fastlaunch",)


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
        if name.startswith("cutec/"):
            continue  # cutec's own library (frontend/lib/): in `code_hash`
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


# ---------------------------------------------------------------- the trust boundary
def untrusted(st: os.stat_result) -> str | None:
    """Why a file or directory of status `st` is not this user's alone (another user owns
    it, or group or others may write to it), or None: what cutec may read and run."""
    if not hasattr(os, "getuid"):  # not POSIX: no owners and modes to go by
        return None
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & 0o022:
        return f"group or others may write to it (mode {stat.S_IMODE(st.st_mode):03o})"
    return None


_WARNED: set[Path] = set()  # the directories warned about in this process


def refuse(directory: Path, what: Path, reason: str) -> None:
    """Say that `what` (in or being `directory`) is not used, once per directory and
    process: a `CacheWarning`."""
    if directory in _WARNED:
        return
    _WARNED.add(directory)
    warnings.warn(
        f"cutec: not using {what}: {reason}; running without it (CUTEC_CACHE_DIR may name "
        "a new directory, which cutec makes 0700)",
        CacheWarning,
        stacklevel=2,
    )


def _directory_problem(path: Path) -> str | None:
    """Why `path` is no directory to trust (None: it is); OSError where it cannot be read."""
    st = os.stat(path)
    return "it is not a directory" if not stat.S_ISDIR(st.st_mode) else untrusted(st)


def _make_private(path: Path) -> None:
    """Make `path` and its missing parents 0700, whatever the umask (OSError if not)."""
    missing = []
    while not os.path.lexists(path) and path.parent != path:
        missing.append(path)
        path = path.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:  # made by a concurrent process: checked by the caller
            continue
        os.chmod(d, 0o700)  # the umask may have taken bits away


def private_dir(path: Path, warn_as: Path | None = None, create: bool = True) -> bool:
    """Whether cutec may use directory `path`, made 0700 (with its parents) when it is
    missing and `create`: False where it cannot be made or read, and with one
    warning (per `warn_as`, else per `path`) where it is not this user's alone."""
    try:
        if create:
            _make_private(path)
        problem = _directory_problem(path)
    except OSError:
        return False  # missing, or not ours to make: a cache, not an error
    if problem is not None:
        refuse(warn_as or path, path, problem)
        return False
    return True


def _file_problem(st: os.stat_result) -> str | None:
    return "it is not a regular file" if not stat.S_ISREG(st.st_mode) else untrusted(st)


def trusted_file(path: Path, warn_as: Path) -> bool:
    """Whether `path` exists and is a regular file of this user's alone (else, where it
    exists, one warning per `warn_as`)."""
    try:
        problem = _file_problem(os.stat(path))
    except OSError:
        return False
    if problem is not None:
        refuse(warn_as, path, problem)
    return problem is None


def _open(path: Path) -> BinaryIO:
    """`path` opened for reading: not through a link, and without waiting on a FIFO
    (whose open would block; it is then found not to be a regular file)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    return os.fdopen(os.open(path, flags), "rb")


def _tagged(root: Path) -> bool:
    try:
        with _open(root / _TAG_NAME) as f:
            regular = stat.S_ISREG(os.fstat(f.fileno()).st_mode)
            return regular and f.read(len(_TAG_SIGNATURE)) == _TAG_SIGNATURE
    except OSError:
        return False


def _holds_only_a_cache(root: Path) -> bool:
    """Whether untagged `root` holds nothing but what a cache holds (an earlier cutec's
    cache, or an empty directory): it may then be tagged and used."""
    try:
        return all(
            c.is_dir() and not c.is_symlink() and (_SHARD.fullmatch(c.name) or c.name in _OWN_DIRS)
            for c in root.iterdir()
        )
    except OSError:
        return False


def root_problem(root: Path) -> str | None:
    """Why `root` cannot be a cutec cache (None: it can, or it is missing and may be
    made): not this user's alone, or a directory of other files without the tag."""
    try:
        problem = _directory_problem(root)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    if problem is None and not _tagged(root) and not _holds_only_a_cache(root):
        problem = f"it is not a cutec cache (it has no {_TAG_NAME} and holds other files)"
    return problem


def usable_root(root: Path, create: bool) -> bool:
    """Whether `root` is a cache directory cutec may read and write: this user's alone
    and tagged (tagged here when it holds only a cache's files; made, 0700, when missing
    and `create`). Otherwise False, with one warning where it exists."""
    if not os.path.lexists(root) and not (create and private_dir(root)):
        return False
    problem = root_problem(root)
    if problem is not None:
        refuse(root, root, problem)
        return False
    if not _tagged(root):
        _write_atomic(root / _TAG_NAME, _TAG_TEXT)
    return True


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `path` through a temporary file (0600) renamed into place; a failure to write
    leaves nothing behind and is not an error (it is a cache)."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o600)
            f.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


# ---------------------------------------------------------------- entries
def _path(k: str) -> Path:
    return directory() / k[:2] / f"{k}.json"


def _read(k: str) -> bytes | None:
    """The bytes of entry `k` where the cache, its shard and the file are this user's
    alone; else None (with one warning per cache for what is not)."""
    root = directory()
    if not _KEY.fullmatch(k) or not usable_root(root, create=False):
        return None
    path = _path(k)
    if not private_dir(path.parent, warn_as=root, create=False):
        return None
    try:
        with _open(path) as f:  # the checks are of the file opened, not of its name
            problem = _file_problem(os.fstat(f.fileno()))
            if problem is not None:
                refuse(root, path, problem)
                return None
            return f.read()
    except OSError:
        return None


def _checksum(meta: Any, blobs: Any) -> str:
    body = json.dumps([meta, blobs], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def load(k: str) -> Entry | None:
    """The entry `k`, or None when absent, unreadable, corrupt or not trusted."""
    if not enabled():
        return None
    raw = _read(k)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            return None
        meta, blobs = data.get("meta"), data.get("blobs")
        if not isinstance(meta, dict) or not isinstance(blobs, dict):
            return None
        if data.get("sha256") != _checksum(meta, blobs):
            return None
        if not all(isinstance(v, str) for v in blobs.values()):
            return None
        return Entry(meta, {name: base64.b64decode(v, validate=True) for name, v in blobs.items()})
    except (ValueError, TypeError, RecursionError):  # not JSON, too deep, bad base64
        return None


def load_checked(k: str, read: Callable[[Entry], T]) -> T | None:
    """Entry `k` read by `read` into its record; None when absent (as `load`) or when
    `read` refuses it (a `RecordError`), which is said: a `CacheWarning` per entry."""
    entry = load(k)
    if entry is None:
        return None
    try:
        return read(entry)
    except RecordError as e:
        warnings.warn(
            f"cutec: the cache entry {_path(k)} is not as cutec writes it ({e}); compiling again",
            CacheWarning,
            stacklevel=2,
        )
        return None


def store(k: str, entry: Entry) -> None:
    """Write entry `k` atomically (a failure to write is not an error: it is a cache)."""
    root = directory()
    if not enabled() or not _KEY.fullmatch(k) or not usable_root(root, create=True):
        return
    path = _path(k)
    if not private_dir(path.parent, warn_as=root):
        return
    blobs = {name: base64.b64encode(v).decode() for name, v in entry.blobs.items()}
    data = {"meta": entry.meta, "blobs": blobs, "sha256": _checksum(entry.meta, blobs)}
    _write_atomic(path, json.dumps(data).encode())


class CpuObjects:
    """The llvmlite backend's object code in the cache (`cutec.cpu.native.ObjectCache`):
    a warm cache skips LLVM's code generation, most of a CPU kernel's compile time.

    An entry records the object's key, size and SHA-256 beside it, so an object is
    used only from the entry written for it (not one copied from another entry);
    `cutec.cpu.native` checks its structure before LLVM reads it."""

    def load(self, key: str) -> bytes | None:
        entry = load(_object_entry(key))  # the module's load
        code = None if entry is None else entry.blobs.get("object")
        if entry is None or code is None or entry.meta != _object_meta(key, code):
            return None
        return code

    def store(self, key: str, code: bytes) -> None:
        store(_object_entry(key), Entry(_object_meta(key, code), {"object": code}))


def _object_entry(object_key: str) -> str:
    return key("cpu-object", object_key)


def _object_meta(object_key: str, code: bytes) -> dict[str, Any]:
    return {"object": object_key, "bytes": len(code), "sha256": hashlib.sha256(code).hexdigest()}


# ---------------------------------------------------------------- cutec cache info|clear
def _entries(root: Path) -> Iterator[Path]:
    """The files of `root` named as entries (and `store`'s temporary files), in shards
    that are directories, not links."""
    for shard in root.iterdir():
        if not _SHARD.fullmatch(shard.name) or shard.is_symlink() or not shard.is_dir():
            continue
        for f in shard.iterdir():
            entry = f.suffix == ".json" and _KEY.fullmatch(f.stem) and f.name[:2] == shard.name
            if entry or _TEMP.fullmatch(f.name):
                yield f


def info() -> dict[str, Any]:
    """Where the cache is, how many entries it holds and their size in bytes, and why
    it is not used (`problem`, None when it is)."""
    root = directory()
    try:
        files = [f for f in _entries(root) if not f.name.startswith(".")]
    except OSError:  # missing or unreadable
        files = []
    return {
        "directory": str(root),
        "enabled": enabled(),
        "entries": len(files),
        "bytes": sum(f.lstat().st_size for f in files),
        "problem": root_problem(root),
    }


def clear() -> int:
    """Remove every entry (and stray temporary files) of a cutec cache, nothing else;
    return how many entries went. `NotACacheError` for a directory that is not one
    (no tag, and other files: a CUTEC_CACHE_DIR pointing at a project)."""
    root = directory()
    if not root.is_dir():
        return 0
    if not _tagged(root) and not _holds_only_a_cache(root):
        raise NotACacheError(
            f"{root} is not a cutec cache (it has no {_TAG_NAME} and holds other files): "
            "nothing removed"
        )
    removed = 0
    for f in list(_entries(root)):
        removed += not f.name.startswith(".")
        f.unlink(missing_ok=True)
    for d in root.iterdir():
        if _SHARD.fullmatch(d.name) and d.is_dir() and not d.is_symlink() and not any(d.iterdir()):
            d.rmdir()
    return removed
