"""The disk cache and the C launcher are data, never code (docs/runtime.md, *The
cache's threat model*).

Each test plays a finding: an entry rewritten with its checksum recomputed (the
checksum finds damage, not tampering), an object blob that is not LLVM's, a
launcher planted where cutec looks for its own, directories that group or others
may write, a CUTEC_CACHE_DIR that names a project. What is tampered with is
ignored and rebuilt; what is not the user's alone is refused with one warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cli import main
from cutec.runtime import cache
from cutec.runtime.errors import CacheWarning

EXAMPLES = Path(__file__).parents[2] / "examples"
TRANSPOSE = EXAMPLES / "transpose.cute"
POSIX = pytest.mark.skipif(not hasattr(os, "getuid"), reason="owners and modes are POSIX's")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own cache, no kernel object shared, no warning said before."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUTEC_CACHE", raising=False)
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})
    monkeypatch.setattr(cache, "_WARNED", set(), raising=False)


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new process starts without: kernel objects and warnings said."""
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})
    monkeypatch.setattr(cache, "_WARNED", set(), raising=False)


def _entry(kind: str) -> Path:
    """The one entry whose meta holds `kind` ("signature", "ptx") or whose blob is an
    "object"."""
    found = []
    for path in cache.directory().glob("*/*.json"):
        data = json.loads(path.read_text())
        if kind in data["meta"] or kind in data["blobs"]:
            found.append(path)
    (path,) = found
    return path


def _tamper(path: Path, change: Callable[[dict[str, Any], dict[str, str]], None]) -> None:
    """Rewrite entry `path` as the tester did: change its meta or blobs and recompute its
    checksum (which therefore cannot tell)."""
    data = json.loads(path.read_text())
    change(data["meta"], data["blobs"])
    body = json.dumps([data["meta"], data["blobs"]], sort_keys=True)
    data["sha256"] = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(json.dumps(data))


def _transpose(k: rt.Kernel) -> None:
    s = np.asfortranarray(np.random.default_rng(0).standard_normal((32, 64)), np.float32)
    d = np.full((64, 32), np.nan, np.float32, order="F")
    k(s, d)
    assert np.array_equal(d, s.T)


@pytest.fixture
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        yield


# ------------------------------------------------------------------ the trust boundary
def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@POSIX
def test_cache_directories_and_files_are_private_whatever_the_umask() -> None:
    old = os.umask(0)
    try:
        cache.store("c" * 64, cache.Entry({"ptx": "x"}, {}))
    finally:
        os.umask(old)
    root = cache.directory()
    assert _mode(root) == 0o700 and _mode(root / "cc") == 0o700
    assert _mode(root / "cc" / f"{'c' * 64}.json") == 0o600
    tag = (root / "CACHEDIR.TAG").read_bytes()
    assert tag.startswith(b"Signature: 8a477f597d28d172789f06886806bc55\n")
    assert cache.load("c" * 64) == cache.Entry({"ptx": "x"}, {})


@POSIX
@pytest.mark.parametrize("where", ["root", "shard", "entry"])
def test_what_others_may_write_is_refused_once(where: str) -> None:
    key = "d" * 64
    cache.store(key, cache.Entry({"ptx": "x"}, {}))
    path = {"root": cache.directory(), "shard": cache.directory() / "dd",
            "entry": cache._path(key)}[where]  # fmt: skip
    path.chmod(_mode(path) | 0o022)
    with pytest.warns(CacheWarning, match="group or others may write") as said:
        assert cache.load(key) is None
        assert cache.load(key) is None
    assert len(said) == 1  # once per directory and process
    assert str(path) in str(said[0].message)


@POSIX
def test_another_users_entry_is_refused() -> None:
    if os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")
    key = "e" * 64
    cache.store(key, cache.Entry({"ptx": "x"}, {}))
    os.chown(cache._path(key), 12345, -1)
    with pytest.warns(CacheWarning, match="owned by uid 12345"):
        assert cache.load(key) is None


@POSIX
def test_an_untrusted_cache_runs_uncached() -> None:
    """A cache directory made at umask 000 (777): the kernel still runs, writing nothing
    there, and the warning is said once."""
    root = cache.directory()
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    with pytest.warns(CacheWarning) as said:
        rt.jit(TRANSPOSE, device="cpu").signature  # noqa: B018
        rt.jit(TRANSPOSE, device="cpu", B=32).signature  # noqa: B018  (another kernel object)
    assert len(said) == 1 and list(root.iterdir()) == []


@POSIX
def test_an_entry_that_is_no_file_is_refused_without_waiting() -> None:
    """A FIFO under an entry's name: opening it must not wait for a writer."""
    key = "9" * 64
    cache.store(key, cache.Entry({}, {}))
    cache._path(key).unlink()
    os.mkfifo(cache._path(key), 0o600)
    with pytest.warns(CacheWarning, match="not a regular file"):
        assert cache.load(key) is None


def test_a_deeply_nested_entry_is_not_a_crash() -> None:
    key = "f" * 64
    cache.store(key, cache.Entry({}, {}))
    cache._path(key).write_text("[" * 100_000 + "]" * 100_000)
    assert cache.load(key) is None


# ------------------------------------------------------------------ cutec cache clear
def _project(root: Path) -> list[Path]:
    files = [root / "package.json", root / ".vscode" / "settings.json", root / "ab" / "x.json",
             root / "ab" / f"ab{'0' * 62}.json"]  # fmt: skip
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{}")
    return files


def test_clear_leaves_a_project_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """CUTEC_CACHE_DIR pointing at a project: `clear` deleted its */*.json files."""
    project = tmp_path / "project"
    files = _project(project)
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(project))
    assert main(["cache", "clear"]) == 1
    assert "not a cutec cache" in capsys.readouterr().err
    assert main(["cache", "info"]) == 0
    assert "cache:     not used: it is not a cutec cache" in capsys.readouterr().out
    assert all(f.exists() for f in files)
    with pytest.warns(CacheWarning, match="not a cutec cache"):
        rt.jit(TRANSPOSE, device="cpu").signature  # noqa: B018
    assert sorted(project.rglob("*")) == sorted({*files, *(f.parent for f in files)} - {project})


def test_clear_removes_entries_only(tmp_path: Path) -> None:
    key = "ab" + "1" * 62
    cache.store(key, cache.Entry({}, {}))
    root = cache.directory()
    kept = [root / "ab" / "notes.json", root / "ab" / f"cd{'1' * 62}.json", root / "README"]
    for f in kept:
        f.write_text("{}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / f"ef{'2' * 62}.json").write_text("{}")
    (root / "ef").symlink_to(elsewhere)  # a shard that is a link: not followed
    assert cache.clear() == 1
    assert all(f.exists() for f in kept) and (elsewhere / f"ef{'2' * 62}.json").exists()
    assert not cache._path(key).exists()


def test_an_earlier_untagged_cache_is_adopted() -> None:
    key = "12" + "3" * 62
    cache.store(key, cache.Entry({"ptx": "x"}, {}))
    tag = cache.directory() / "CACHEDIR.TAG"
    tag.unlink()
    assert cache.load(key) == cache.Entry({"ptx": "x"}, {}) and tag.exists()
    tag.unlink()
    assert cache.info()["problem"] is None and cache.clear() == 1
