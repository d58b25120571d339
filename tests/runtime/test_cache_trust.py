"""The disk cache and the C launcher are data, never code (docs/runtime.md, *The
cache's threat model*).

Each test plays a finding: an entry rewritten with its checksum recomputed (the
checksum finds damage, not tampering), an object blob that is not LLVM's, a
launcher planted where cutec looks for its own, directories that group or others
may write, a CUTEC_CACHE_DIR that names a project. What is tampered with is
ignored and rebuilt; what is not the user's alone is refused with one warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cutec.runtime as rt
from cutec.cli import main
from cutec.runtime import cache, fastlaunch
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
    "object"; of the launch records ("signature"), transpose's unspecialised one (the JIT
    reads the record of the key whose facts all hold too)."""
    if kind == "signature":
        k = rt.jit(TRANSPOSE, device="cpu")
        return cache._path(k._key("signature", k._target(None)))
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


# ------------------------------------------------------------------ launch facts are data
# What a refused entry says (a CacheWarning) before it is compiled again.
NOT_CUTECS = "is not as cutec writes it"


def test_a_launch_fact_read_back_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block size rewritten to Python in the entry: the launcher pasted it into the
    code it generated, which ran it at the next call. Now the entry is refused as not
    cutec's (said once), the signature read again and the entry rewritten."""
    _transpose(rt.jit(TRANSPOSE, device="cpu"))
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch() or 256"
    _tamper(_entry("signature"), lambda meta, _: meta["launch"]["block"].__setitem__(0, code))
    _new_process(monkeypatch)
    with pytest.warns(CacheWarning, match=f"{NOT_CUTECS} .launch.block") as said:
        _transpose(rt.jit(TRANSPOSE, device="cpu"))
    assert len(said) == 1
    assert not marker.exists()
    assert json.loads(_entry("signature").read_text())["meta"]["launch"]["block"] == [256, 1, 1]


def _drop(key: str) -> Callable[[dict[str, Any], dict[str, str]], None]:
    return lambda meta, _: meta.pop(key)


def _set(path: str, value: Any) -> Callable[[dict[str, Any], dict[str, str]], None]:
    """Set meta[a][b][c] for path "a.b.c" (digits index lists)."""

    def change(meta: dict[str, Any], _: dict[str, str]) -> None:
        *inner, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        target: Any = meta
        for p in inner:
            target = target[p]
        target[last] = value

    return change


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(_drop("signature"), id="no-signature"),  # was a raw KeyError
        pytest.param(_set("launch", "x"), id="launch-not-an-object"),
        pytest.param(_set("signature.params.0.shape.0", "M.__class__"), id="shape-expression"),
        pytest.param(_set("signature.params.0.tensor", "S); import os; (S"), id="param-name"),
        pytest.param(_set("signature.abi.0.1", "nonsense"), id="abi-type"),
        pytest.param(_set("launch.grid.0", "__import__('os')"), id="grid-call"),
        pytest.param(_set("then", {"signature": {}, "launch": {}}), id="a-tail"),
    ],
)
def test_a_tampered_signature_entry_is_rebuilt(
    change: Callable[[dict[str, Any], dict[str, str]], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    k = rt.jit(TRANSPOSE, device="cpu")
    good = k.signature
    path = _entry("signature")
    written = json.loads(path.read_text())
    _tamper(path, change)
    _new_process(monkeypatch)
    again = rt.jit(TRANSPOSE, device="cpu")
    with pytest.warns(CacheWarning, match=f"{path.name} {NOT_CUTECS}"):
        assert again.signature == good
    again._prepare()  # writes the launch function from what was read
    assert json.loads(path.read_text()) == written


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(_drop("ptx"), id="no-ptx"),
        pytest.param(_set("record.launch.dynamic_smem", -1), id="launch-smem"),
        pytest.param(_set("record.launch.grid", ["1", "1"]), id="launch-grid"),
        pytest.param(_set("record.launch", None), id="no-launch"),
        pytest.param(_set("record.signature.kernel", "other"), id="another-kernel"),
        pytest.param(_set("record.signature.params.0.element", "f16"), id="another-tensor"),
    ],
)
def test_a_tampered_variant_entry_is_rebuilt(
    change: Callable[[dict[str, Any], dict[str, str]], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A specialisation's entry whose PTX or launch record is not cutec's: said once,
    compiled again and rewritten."""
    ptx = rt.jit(TRANSPOSE, device="cpu").ptx
    path = _entry("ptx")
    written = json.loads(path.read_text())
    _tamper(path, change)
    _new_process(monkeypatch)
    with pytest.warns(CacheWarning, match=f"{path.name} {NOT_CUTECS}") as said:
        assert rt.jit(TRANSPOSE, device="cpu").ptx == ptx
    assert len(said) == 1
    assert json.loads(path.read_text()) == written


def test_an_entry_cutec_wrote_is_read_without_a_word(
    monkeypatch: pytest.MonkeyPatch, no_warnings: None
) -> None:
    ptx = rt.jit(TRANSPOSE, device="cpu").ptx
    _new_process(monkeypatch)
    compiles = []
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "compile", compiles.append)
    k = rt.jit(TRANSPOSE, device="cpu")
    assert k.ptx == ptx and k.signature.kernel == "transpose" and compiles == []


def test_variant_entries_are_checked() -> None:
    from cutec.ir.json_read import RecordError
    from cutec.runtime.jit import _variant_entry

    launch = {"block": [32, 1, 1], "max_block": None, "grid": ["1", "1", "1"], "cluster": None,
              "dynamic_smem": 0, "offset_bits": 32, "then": None}  # fmt: skip
    signature = {"kernel": "k", "params": [], "abi": [], "facts": [], "implicit": []}
    record = {"signature": signature, "launch": launch, "then": None}
    report = {"kernel": "k", "arch": "sm_90a", "registers": 32, "shared_bytes": 0,
              "stack_frame": 0, "spill_stores": 0, "spill_loads": 0, "barriers": 1}  # fmt: skip
    said = ["k.cute:3:1: warning: kernel 'k': ptxas (C7511) Potential Performance Loss: ..."]
    good = {"ptx": ".entry k", "resources": {"k": report}, "record": record, "warnings": said}
    read = _variant_entry(cache.Entry(good, {}))
    assert (read.ptx, read.warnings) == (".entry k", said)
    for bad in (
        {**good, "ptx": 7},
        {**good, "resources": {"k": {**report, "registers": "32"}}},
        {**good, "resources": {"k": {**report, "extra": 1}}},
        {**good, "record": {**record, "launch": {**launch, "dynamic_smem": -1}}},
        {**good, "record": {**record, "launch": {**launch, "then": "k__tail"}}},  # no tail
        {**good, "warnings": "k.cute:3:1: warning: ..."},
        {**good, "warnings": [7]},
        {key: value for key, value in good.items() if key != "warnings"},
    ):
        with pytest.raises(RecordError):
            _variant_entry(cache.Entry(bad, {}))


# ------------------------------------------------------------------ records read back
def _transpose_records() -> tuple[dict[str, Any], dict[str, Any]]:
    from cutec.driver import Options, Source, Stage, compile
    from cutec.ir.dialects.builtin import KernelOp
    from cutec.ir.signature import launch_of

    result = compile(Source.from_file(TRANSPOSE), Stage.CUTE, Options())
    (op,) = result.module.walk_type(KernelOp)
    return result.signatures["transpose"].to_json(), launch_of(op).to_json()


_SIGNATURE, _LAUNCH = _transpose_records()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("block", ["__import__('os').system('x')", 1, 1], "expected an integer"),
        ("block", [True, 1, 1], "expected an integer"),
        ("block", [2048, 1, 1], r"\[1, 1024\]"),
        ("block", [64, 64, 1], "more than 1024 threads"),
        ("grid", ["M.__class__", "1", "1"], "unexpected character"),
        ("grid", ["M//32"], "expected 3 elements"),
        ("dynamic_smem", 1.5, "expected an integer"),
        ("offset_bits", 16, "expected 32 or 64"),
        ("then", "tail; import os", "expected a name"),
    ],
)
def test_launch_facts_are_checked(field: str, value: Any, message: str) -> None:
    from cutec.ir.json_read import RecordError
    from cutec.ir.signature import LaunchInfo

    with pytest.raises(RecordError, match=message):
        LaunchInfo.from_json({**_LAUNCH, field: value})


def _implicit_w(signature: dict[str, Any]) -> None:
    """An implicit argument the runtime does not know."""
    signature["implicit"].append({"scalar": "W", "type": "index"})
    signature["abi"].append(["W", "index"])


def _workspace(extent: Any, flags: bool = True) -> Callable[[dict[str, Any]], None]:
    """A stream-K workspace of `extent` elements per CTA (and its flags)."""

    def change(signature: dict[str, Any]) -> None:
        signature["implicit"].append({"tensor": "stream_k_workspace", "element": "f32",
                                      "shape": [extent, "stream_k_ctas"],
                                      "stride": [1, 16], "align": 16,
                                      "access": "write"})  # fmt: skip
        signature["abi"] += [["stream_k_workspace", "ptr"], ["stream_k_ctas", "index"]]
        if flags:
            flags_param = {"tensor": "stream_k_flags", "element": "s32",
                           "shape": "stream_k_ctas", "stride": 1, "align": 4,
                           "access": "atomic"}  # fmt: skip
            signature["implicit"].append(flags_param)
            signature["abi"].append(["stream_k_flags", "ptr"])

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.update(kernel="k()"), "expected a name"),
        (lambda s: s["params"][0].update(tensor="S\nimport os"), "expected a name"),
        (lambda s: s["params"][0].update(element="f99"), "no element type"),
        (lambda s: s["params"][0].update(shape=["M", "N", "K"]), "differ in nesting"),
        (lambda s: s["params"][0].update(shape=["M", "open('x')"]), "unexpected character"),
        (lambda s: s["params"][0].update(stride=[1, "Q*2"]), "which no argument gives"),
        (lambda s: s["params"][0].update(align=3), "not a power of 2"),
        (lambda s: s["abi"].append(["Z", "index"]), "is no parameter's"),
        (lambda s: s["abi"].pop(0), "no .param for"),
        (lambda s: s["abi"][1].__setitem__(1, "ptr"), "is no parameter's"),
        (lambda s: s["facts"].append(["M", 0]), "expected an integer"),
        (_implicit_w, "runtime's"),
        (_workspace(16, flags=False), "a workspace without flags"),
        (_workspace("M"), "the layout of stream_k_workspace is not the runtime's"),
    ],
)
def test_signatures_are_checked(change: Callable[[dict[str, Any]], None], message: str) -> None:
    from cutec.ir.json_read import RecordError
    from cutec.ir.signature import KernelSignature

    data = json.loads(json.dumps(_SIGNATURE))
    change(data)
    with pytest.raises(RecordError, match=message):
        KernelSignature.from_json(data)


def test_a_parameter_kind_is_one_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new kind of parameter (as the Hopper path's tensor maps are) is one record
    class with its own reading and checks: the signature's reader and `_check_abi` take
    it without a change. Kinds not registered, or two kinds in one record, are refused."""
    from dataclasses import dataclass

    from cutec.ir import json_read as jr
    from cutec.ir.json_read import RecordError
    from cutec.ir.signature import PARAM_KINDS, KernelSignature, Param

    @dataclass(frozen=True)
    class Box(Param):  # a run-time value passed as a .param of type index
        kind = "box"
        name: str
        size: int

        def to_json(self) -> dict[str, Any]:
            return {"box": self.name, "size": self.size}

        @classmethod
        def read(cls, data: dict[str, Any], where: str) -> Box:
            size = jr.integer(jr.field(data, "size", where), f"{where}.size", 1, 256)
            return cls(jr.name(data["box"], f"{where}.box"), size)

        def binds(self) -> set[str]:
            return {self.name}

        def supplies(self, arg: str, abi_kind: str) -> bool:
            return arg == self.name and abi_kind == "index"

    data = json.loads(json.dumps(_SIGNATURE))
    data["params"].append({"box": "W", "size": 8})
    data["abi"].append(["W", "index"])
    kinds = r"\['scalar', 'tensor', 'tensor_map'\]"
    with pytest.raises(RecordError, match=f"not one parameter kind of {kinds}"):
        KernelSignature.from_json(data)
    monkeypatch.setitem(PARAM_KINDS, "box", Box)
    read = KernelSignature.from_json(data)
    assert read.params[-1] == Box("W", 8)
    assert json.loads(json.dumps(read.to_json())) == data
    for bad, message in (
        ({"box": "W", "size": 1000}, r"params\[2\]\.size: expected an integer in \[1, 256\]"),
        ({"box": "W", "size": 8, "scalar": "W", "type": "index"}, "not one parameter kind"),
    ):
        data["params"][-1] = bad
        with pytest.raises(RecordError, match=message):
            KernelSignature.from_json(data)
    data["params"][-1] = {"box": "W", "size": 8}
    data["abi"][-1] = ["W", "f32"]  # not what a Box supplies
    with pytest.raises(RecordError, match=r"\.param W \(f32\) is no parameter's"):
        KernelSignature.from_json(data)


def _any_json() -> st.SearchStrategy[Any]:
    """Any JSON value: what a field may be rewritten to."""
    names = st.sampled_from(["M", "ptr", "index", "f32", "resident_ctas", "M//0"])
    leaves = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                       st.text(max_size=12), names)  # fmt: skip

    def nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)

    return st.recursive(leaves, nested, max_leaves=8)


_ANY_JSON = _any_json()


def _paths(x: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(x, dict):
        return [at, *[p for k, v in x.items() for p in _paths(v, (*at, k))]]
    if isinstance(x, list):
        return [at, *[p for i, v in enumerate(x) for p in _paths(v, (*at, i))]]
    return [at]


@given(st.data())
def test_a_record_read_back_is_read_or_refused(data: st.DataObject) -> None:
    """Any value anywhere in a signature or launch record: read, or a RecordError,
    never another exception (a KeyError, a TypeError) on the way to the launcher."""
    from cutec.ir.json_read import RecordError
    from cutec.ir.signature import KernelSignature, LaunchInfo, check_launch

    signature, launch = json.loads(json.dumps([_SIGNATURE, _LAUNCH]))
    for record in (signature, launch):
        path = data.draw(st.sampled_from(_paths(record)[1:]))
        target = record
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = data.draw(_ANY_JSON)
    with contextlib.suppress(RecordError):
        check_launch(KernelSignature.from_json(signature), LaunchInfo.from_json(launch))


@pytest.mark.parametrize(
    ("file", "defines"),
    [
        ("sgemm_2.cute", {}),
        ("elementwise.cute", {}),
        ("gemm_auto.cute", {"STREAM_K": True}),
        ("ir/saxpy.mlir", {}),
    ],
)
def test_what_cutec_writes_it_reads_back(file: str, defines: dict[str, Any]) -> None:
    """The checks refuse no record cutec writes (a refused one would never be cached)."""
    from cutec.driver import Options, Source, Stage, compile
    from cutec.ir.dialects.builtin import KernelOp
    from cutec.ir.signature import KernelSignature, LaunchInfo, check_launch, launch_of

    result = compile(Source.from_file(EXAMPLES / file), Stage.CUTE, Options(defines=defines))
    ops = {op.sym_name: op for op in result.module.walk_type(KernelOp)}
    tails = {launch_of(op).then for op in ops.values()}
    for name in set(ops) - tails:
        signature, launch = result.signatures[name], launch_of(ops[name])
        then = None
        if launch.then is not None:
            then = (result.signatures[launch.then], launch_of(ops[launch.then]))
        read = json.loads(json.dumps([signature.to_json(), launch.to_json()]))
        assert KernelSignature.from_json(read[0]) == signature
        assert LaunchInfo.from_json(read[1]) == launch
        check_launch(signature, launch, then)


# ------------------------------------------------------------------ the CPU's object code
_RUN_CACHED = """
import numpy as np, cutec.runtime as rt
k = rt.jit({path!r}, device="cpu")
s = np.asfortranarray(np.random.default_rng(0).standard_normal((32, 64)), np.float32)
d = np.full((64, 32), np.nan, np.float32, order="F")
k(s, d)
assert np.array_equal(d, s.T) and k.cpu_backend == "native"
print("ok")
"""


def test_an_object_blob_that_is_not_llvms_is_compiled_again(tmp_path: Path) -> None:
    """A cpu-object blob replaced by bytes LLVM cannot read, its record and checksum
    recomputed: LLVM aborted the process (SIGABRT, 'Invalid ELF class'). Now the
    object is checked before LLVM reads it; the kernel compiles and runs (in a process
    of its own, which would die before the fix)."""
    _transpose(rt.jit(TRANSPOSE, device="cpu"))
    garbage = b"\x7fELF" + bytes(range(256)) * 8

    def replace(meta: dict[str, Any], blobs: dict[str, str]) -> None:
        import base64

        blobs["object"] = base64.b64encode(garbage).decode()
        meta.update(bytes=len(garbage), sha256=hashlib.sha256(garbage).hexdigest())

    _tamper(_entry("object"), replace)
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_CACHED.format(path=str(TRANSPOSE))],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_an_object_is_used_only_under_its_own_entry() -> None:
    """The record beside the blob ties it to its key, size and digest: a blob from
    another entry (or one whose record was not rewritten with it) is not loaded."""
    objects = cache.CpuObjects()
    first, second = "a" * 64, "b" * 64
    objects.store(first, b"first object")
    objects.store(second, b"second object")
    assert objects.load(first) == b"first object"
    cache._path(cache._object_entry(first)).write_bytes(
        cache._path(cache._object_entry(second)).read_bytes()
    )  # a whole entry copied over another: its checksum holds
    assert objects.load(first) is None

    def swap(meta: dict[str, Any], blobs: dict[str, str]) -> None:
        import base64

        blobs["object"] = base64.b64encode(b"other bytes").decode()

    _tamper(cache._path(cache._object_entry(second)), swap)
    assert objects.load(second) is None


def test_the_object_check_reads_what_llvms_linker_reads() -> None:
    from cutec.cpu import elf, native

    if native._host_arch() != "x86_64":
        pytest.skip("the object check knows x86-64 hosts only")
    result = _thread_transpose()
    stored: dict[str, bytes] = {}

    class Keep:
        def load(self, key: str) -> None:
            return None

        def store(self, key: str, code: bytes) -> None:
            stored["code"] = code

    native.compile_kernel(result, objects=Keep())
    code = stored["code"]
    assert elf.problem(code, "x86_64") is None
    assert elf.problem(code[: len(code) // 2], "x86_64") == "a section table outside the object"
    assert elf.problem(b"\x7fELF" + bytes(60), "x86_64") == "not a 64-bit little-endian ELF object"
    assert elf.problem(code, "riscv64") == "no object check for riscv64 hosts"
    machine = bytearray(code)
    machine[18] = 183  # e_machine: EM_AARCH64
    assert elf.problem(bytes(machine), "x86_64") == "not a relocatable object for machine 62"


def _thread_transpose() -> Any:
    from cutec.driver import Options, Source, Stage, compile
    from cutec.ir.dialects.builtin import KernelOp

    result = compile(Source.from_file(TRANSPOSE), Stage.THREAD, Options())
    (op,) = result.module.walk_type(KernelOp)
    return op


# ------------------------------------------------------------------ the C launcher
@POSIX
def test_a_planted_launcher_is_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library of the launcher's name in a kernel cache others may write: it was
    loaded (found by its name) where the user's own copy was missing."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CUTEC_EXT_DIR", raising=False)
    shared = tmp_path / "shared"
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(shared))
    (shared / "fastlaunch").mkdir(parents=True)
    for d in (shared, shared / "fastlaunch"):
        d.chmod(0o777)
    planted = next(p for p in fastlaunch._library_paths() if shared in p.parents)
    planted.write_bytes(b"not cutec's")
    loaded: list[Path] = []
    monkeypatch.setattr(fastlaunch, "_build", lambda target: False)
    monkeypatch.setattr(fastlaunch.importlib.util, "spec_from_file_location",
                        lambda name, path: loaded.append(Path(path)))  # fmt: skip
    fastlaunch.extension.cache_clear()
    try:
        with pytest.warns(CacheWarning, match="group or others may write"):
            assert fastlaunch.extension() is None
    finally:
        fastlaunch.extension.cache_clear()
    assert loaded == []


@POSIX
def test_the_launcher_is_built_private_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CUTEC_EXT_DIR", raising=False)
    fastlaunch.extension.cache_clear()
    old = os.umask(0)
    try:
        assert fastlaunch.extension() is not None
    finally:
        os.umask(old)
        fastlaunch.extension.cache_clear()
    library = fastlaunch._library_paths()[0]
    assert [_mode(p) for p in (library.parent.parent, library.parent, library)] == [0o700] * 3


def test_a_cpu_run_builds_no_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """device="cpu" launches nothing on a GPU: the C launcher is not built for it."""
    asked: list[str] = []
    monkeypatch.setattr(fastlaunch, "load", lambda: asked.append("load"))
    monkeypatch.setattr(fastlaunch, "extension", lambda: asked.append("extension"))
    _transpose(rt.jit(TRANSPOSE, device="cpu"))
    assert asked == []
