"""``cutec.jit``: compile a `.cute` kernel on first use and launch it like a function.

    k = cutec.jit("examples/sgemm_2.cute", kernel="sgemm_nt", BM=128)
    k(A, B, C, 1.0, 0.0)                 # torch / CuPy / DLPack / cutec.DeviceArray
    k(A, B, C, 1.0, 0.0, stream=s)       # default: torch's current stream

A `Kernel` compiles through the one compile driver (`cutec.driver.compile`),
so the JIT and ``cutec compile`` cannot drift. Its first call reads the
kernel's launch signature (from the frontend alone, or from the disk cache)
and writes the launch function (`cutec.runtime.launcher`). Each call then
checks and packs the arguments and picks a specialisation by what it sees of
them (extents and strides divisible by 16, 16-byte aligned pointers, unless
``specialize=False``); a specialisation is compiled once per process, loaded
from the disk cache across processes, and assembled by ptxas for the GPU
present (an sm_80 kernel on a Hopper GPU is assembled for sm_90a). ptxas's performance
warnings about it (wgmma serialised, setmaxnreg ignored) are issued, located in the
source, as a `PerformanceWarning` when the specialisation is first built in a process,
whether compiled or read from the disk cache.

``device="cpu"`` runs the lowered kernel on numpy arrays without a GPU: compiled
by the llvmlite backend (`cutec.cpu.native`), or, when the kernel uses an op that
backend does not run yet, in the reference interpreter (slowly);
``k.cpu_backend`` and the ``cutec.runtime`` debug log say which.
"""

from __future__ import annotations

import io
import json
import logging
import os
import warnings
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from cutec.diagnostics import CompileError
from cutec.driver import ALL_PASSES, Options, Result, Source, Stage, compile
from cutec.ir import json_read
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.signature import (
    KernelLaunch,
    KernelSignature,
    LaunchInfo,
    TensorMapParam,
    TensorParam,
    launch_of,
    names_resident_ctas,
)
from cutec.passes.manager import Instrumentation
from cutec.ptx.ptxas import ResourceUsage, find_ptxas
from cutec.ptx.ptxas_warnings import PerformanceWarning
from cutec.ptx.sass import disassemble
from cutec.runtime import cache, cuda
from cutec.runtime.errors import ArgumentTypeError, ArgumentValueError
from cutec.runtime.launcher import (
    Variant,
    build_launcher,
    fast_call,
    host_scalar,
)
from cutec.runtime.workspace import Workspace
from cutec.target import DEFAULT_TARGET

_log = logging.getLogger("cutec.runtime")

# Dynamic shared memory above this needs cuFuncSetAttribute before a launch.
_DEFAULT_DYNAMIC_SMEM = 48 * 1024
# `resident_ctas` on the CPU, where CTAs run one after another: a small number, so
# that a persistent kernel's CTAs each loop over several tiles there too.
CPU_RESIDENT_CTAS = 4


def jit(
    source: str | Path,
    kernel: str | None = None,
    *,
    arch: str | None = None,
    device: str | int | None = None,
    specialize: bool | list[str] | tuple[str, ...] = True,
    bounds_check: bool = True,
    check_shared: bool = True,
    **static_params: Any,
) -> Kernel:
    """A launchable kernel of a `.cute` file (a path) or of `.cute` source text.

    `kernel` names the kernel when the file has several; `static_params` set
    compile-time parameters (``BM=64``, ``T="f16"``); `arch` the target (by
    default the present GPU's: sm_90a on Hopper, sm_80 on Ampere);
    `device` a GPU ordinal or ``"cpu"``; `specialize` False (or the names not
    to specialise on, as Triton's ``do_not_specialize``) turns specialisation off.
    On the CPU, `bounds_check` (global and shared accesses) and `check_shared`
    (shared-memory races, uninitialised shared loads, cp.async destinations read
    before their wait) may be turned off for speed (docs/cpu-backend.md).
    """
    src = _source(source)
    spec = tuple(specialize) if isinstance(specialize, list | tuple) else specialize
    checks = (bounds_check, check_shared)
    key = (src, kernel, repr(sorted(static_params.items())), arch, device, spec, checks)
    found = _KERNELS.get(key)
    if found is None:
        found = Kernel(src, kernel, static_params, arch, device, specialize)
        found.bounds_check, found.check_shared = checks
        _KERNELS[key] = found
    return found


# Kernel objects by everything jit() was given (the source by its text): a second jit()
# of the same kernel shares the first's compiled specialisations and loaded modules.
_KERNELS: dict[tuple[Any, ...], Kernel] = {}


def _source(source: str | Path) -> Source:
    """A path (``.cute``, or ``.mlir`` IR), or source text: IR if it holds a ``kernel @``."""
    if isinstance(source, Path) or ("\n" not in source and source.endswith((".cute", ".mlir"))):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"cutec.jit: no such file: {path}")
        return Source.from_file(path)
    return Source(source, "<jit>", "mlir" if "kernel @" in source else "cute")


@dataclass
class _Compiled:
    """One specialisation's compile products."""

    ptx: str
    cubin: bytes | None
    resources: dict[str, Any] = field(default_factory=dict)
    # Its own launch record: the signature (.params: tensor maps or none) and launch
    # facts (block, grid, cluster, dynamic shared memory) its plan chose, and its tail's.
    record: KernelLaunch | None = None
    warnings: list[str] = field(default_factory=list)  # ptxas's, rendered (located)

    @property
    def launch(self) -> LaunchInfo | None:
        return None if self.record is None else self.record.launch

    @property
    def then_launch(self) -> LaunchInfo | None:  # the launch facts of the kernel's tail
        then = None if self.record is None else self.record.then
        return None if then is None else then[1]


@dataclass
class _CpuVariant:
    """One kernel of a specialisation for device="cpu": its thread-level IR and how it
    runs."""

    module: Any
    signature: KernelSignature  # the kernel's (a stream-K gemm's tail has its own)
    runner: Any = None  # a native.NativeKernel, "reference", or None until the first run


class Kernel:
    """A `.cute` kernel, compiled on first use; calling it launches it."""

    def __init__(
        self,
        source: Source,
        kernel: str | None,
        static_params: dict[str, Any],
        arch: str | None,
        device: str | int | None,
        specialize: bool | list[str] | tuple[str, ...],
    ) -> None:
        self.source = source
        self.static_params = dict(static_params)
        self.arch = arch
        self.cpu = device == "cpu"
        self.device_ordinal = None if device in (None, "cpu") else int(device)  # type: ignore[arg-type]
        self._specialize_opt = specialize
        self._name = kernel
        self._signature: KernelSignature | None = None
        self._launch_info: LaunchInfo | None = None
        # A stream-K gemm's tail (the kernel launched after this one): its signature and
        # launch facts.
        self._then: tuple[KernelSignature, LaunchInfo] | None = None
        # The unspecialised launch record (those three) and the target it was read for.
        self._record: KernelLaunch | None = None
        self._record_target = DEFAULT_TARGET
        self._launcher: Any = None
        self._key_facts: list[tuple[str, str, int]] = []
        # The launch record the launch function is written for (`_launch_form`, as JSON
        # text), each other record's own launch function, and the loaded variants.
        self._primary = ""
        self._launchers: dict[str, Any] = {}
        self._loaded: dict[tuple[int, int | None], Variant] = {}
        self._compiled: dict[tuple[int, str, str], _Compiled] = {}
        self._last: _Compiled | None = None
        # The key of the CPU's variant loaded last: its PTX is compiled only if inspected.
        self._last_key = 0
        # On the CPU: "native", or "reference (<what the backend cannot run>)".
        self.cpu_backend: str | None = None
        self.bounds_check = True  # the CPU backend's checks (jit's arguments)
        self.check_shared = True

    # ------------------------------------------------------------------ launch
    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """The first call: write the launch function, then launch through it.

        The launch function becomes this object's ``__call__`` (a class of its own
        per kernel object): a call then costs one Python call, not two and the
        forwarding of ``*args`` (about 1.5 us, a third of the host's launch cost).
        Where it can, the C launcher (`cutec.runtime.launcher.fast_call`) becomes ``__call__``
        instead: torch tensors with shapes seen before then never enter Python.
        """
        if self._launcher is None:
            self._prepare()
            # The C launcher launches on a GPU: never built for the CPU's runs.
            fast = None if self.cpu else fast_call(self, self._launcher)
            call = self._launcher if fast is None else fast
            self.__class__ = type(type(self).__name__, (type(self),), {"__call__": call})
            if fast is not None:  # a C object, not a function: called without `self`
                return fast(*args, **kwargs)
        return self._launcher(self, *args, **kwargs)

    @property
    def name(self) -> str:
        return self.signature.kernel

    @property
    def signature(self) -> KernelSignature:
        if self._signature is None:
            self._read_signature()
        assert self._signature is not None
        return self._signature

    def _prepare(self) -> None:
        """Write the launch function. Each specialisation has its own launch record (a
        whole-tensor gemm's plan, which the facts change, chooses the block, the grid and
        the tensor maps), so the function is written for the record of the key whose facts
        all hold, the common case, and hands a call whose variant's record differs to that
        record's own launch function (`build_launcher`'s `delegate`)."""
        signature = self.signature
        base = self._record
        assert base is not None
        tensors = [p.name for p in signature.params if isinstance(p, TensorParam)]
        runtime_names = [n for n, kind in signature.abi if kind == "index"]
        opt = self._specialize_opt
        if opt is True:
            allowed = frozenset(tensors + runtime_names)
        elif opt is False:
            allowed = frozenset()
        else:
            allowed = frozenset(tensors + runtime_names) - frozenset(opt)
        self._allowed = allowed
        form = self._launch_form(base)
        launcher, self._key_facts = self._write_launcher(form, delegate=True)
        # IR input: the frontend takes no facts (specialize-args applies them in the
        # pipeline), so every key's record is the base's, which may come from the cache alone
        # (a .mlir kernel has no map recipe: the GPU's record gives its tensor maps).
        if self._key_facts and self.source.lang == "cute":
            every = self._facts((1 << len(self._key_facts)) - 1)
            usual = self._launch_form(self._frontend_record(self._record_target, every))
            if _form_text(usual) != _form_text(form):
                form = usual
                launcher, key_facts = self._write_launcher(form, delegate=True)
                assert key_facts == self._key_facts, "one key for every launch record"
        self._primary = _form_text(form)
        self._launcher = launcher

    def _write_launcher(self, form: KernelLaunch, delegate: bool) -> tuple[Any, Any]:
        """The launch function of launch record `form` (`_launch_form`) and its key's facts."""
        info = form.launch
        return build_launcher(
            form.signature,
            info.block,
            info.grid,
            # The lowering's default (docs/abi.md): offsets are 32-bit, so the launch
            # function checks each tensor's largest offset against 2^31.
            32,
            self._allowed,
            self._variant,
            self._run_cpu,
            _stream_of,
            cpu=self.cpu,
            then=form.then,
            max_block=info.max_block,
            cluster=info.cluster,
            delegate=delegate,
        )

    def _launch_form(self, record: KernelLaunch) -> KernelLaunch:
        """A variant's launch record as the launch function reads it: the caller's
        promises (the kernel's own facts, its tensors' declared alignment: the key checks
        the specialisation's), no shared-memory size (each variant's own); a record whose
        arguments are not the kernel's is not this kernel's (`json_read.RecordError`)."""
        base = self._record
        assert base is not None
        declared = _declared(record.signature, base.signature)
        then = None
        if record.then is not None:
            tail = base.then[0] if base.then is not None else None
            then = (_declared(record.then[0], tail), _launchable(record.then[1]))
        return KernelLaunch(declared, _launchable(record.launch), then)

    def _own_launcher(self, record: KernelLaunch) -> Any:
        """The launch function of a variant whose record is not the one the kernel's launch
        function was written for; None where it is. IR input: always None, every variant
        launches by the base record (its block and grid may come from the cache alone: a
        .mlir kernel's compile need not declare them)."""
        if self.source.lang != "cute":
            return None
        form = self._launch_form(record)
        text = _form_text(form)
        if text == self._primary or not self._primary:
            return None
        found = self._launchers.get(text)
        if found is None:
            found, key_facts = self._write_launcher(form, delegate=False)
            assert key_facts == self._key_facts, "one key for every launch record"
            self._launchers[text] = found
        return found

    # ------------------------------------------------------------------ compile
    def _options(
        self, target: str, facts: tuple[tuple[str, int], ...] = (), assemble_for: str | None = None
    ) -> Options:
        kernel = self._name if self.source.lang == "cute" else None  # IR: every kernel
        return Options(
            defines=self.static_params,
            kernel=kernel,
            target=target,
            divisors={n: d for n, d in facts if not n.startswith("@")},
            alignments={n[1:]: a for n, a in facts if n.startswith("@")},
            assemble_for=assemble_for,
        )

    def _compile(self, stage: Stage, options: Options) -> Result:
        try:
            return compile(self.source, stage, options)
        except CompileError as e:
            # Python shows str(e): make it the whole located report, as the CLI prints it.
            e.args = (e.render(),)
            raise

    def _key(self, *parts: Any) -> str:
        imports = cache.imported_texts(
            self.source.text, Path(self.source.file) if self.source.file != "<jit>" else None
        )
        return cache.key(
            self.source.text, imports, self._name, sorted(self.static_params.items()), *parts
        )

    def _read_signature(self) -> None:
        """The launch signature, from the disk cache or the frontend (no lowering)."""
        # The launch depends on the target: the whole-tensor gemm's Hopper body runs
        # another block and takes tensor maps.
        target = self._target(self._gpu_arch())
        record = self._frontend_record(target, ())
        self._record, self._record_target = record, target
        self._signature, self._launch_info, self._then = (
            record.signature,
            record.launch,
            record.then,
        )

    def _frontend_record(self, target: str, facts: tuple[tuple[str, int], ...]) -> KernelLaunch:
        """The launch record of the specialisation of `facts` for `target`, from the disk
        cache or the frontend (no lowering)."""
        k = self._key("signature", target, *((facts,) if facts else ()))
        record = cache.load_checked(k, lambda entry: KernelLaunch.from_json(entry.meta))
        if record is None:
            record = self._launch_record(target, facts)
            cache.store(k, cache.Entry(record.to_json(), {}))
        return record

    def _launch_record(self, target: str, facts: tuple[tuple[str, int], ...] = ()) -> KernelLaunch:
        """The kernel's launch record for `target` and `facts`, from the frontend's IR."""
        frontend_only = replace(self._options(target, facts), pipeline="")
        result = self._compile(Stage.CUTE, frontend_only)
        assert result.module is not None
        ops = {k.sym_name: k for k in result.module.walk_type(KernelOp)}
        # A stream-K gemm's tail is launched with its kernel, never by itself.
        tails = {launch_of(op).then for op in ops.values()}
        kernels = [n for n in result.signatures if n not in tails]
        if self._name is None and len(kernels) != 1:
            raise CompileError(
                f"{self.source.file} defines the kernels {', '.join(kernels)}: "
                "name one (kernel=... in Python, --kernel on the command line)"
            )
        name = self._name or kernels[0]
        launch = launch_of(ops[name])
        then = None
        if launch.then is not None:
            then = (result.signatures[launch.then], launch_of(ops[launch.then]))
        return KernelLaunch(result.signatures[name], launch, then)

    def _target(self, gpu_arch: str | None) -> str:
        if self.arch is not None:
            return self.arch
        if gpu_arch is None:
            return DEFAULT_TARGET
        return "sm_90a" if gpu_arch == "sm_90a" else "sm_80"

    def _facts(self, key: int) -> tuple[tuple[str, int], ...]:
        """The facts of specialisation `key` ('@A' for pointer A's alignment)."""
        out: dict[str, int] = {}
        for i, (kind, name, value) in enumerate(self._key_facts):
            if key >> i & 1:  # a name's 16 elements imply its 16 bytes' worth: the largest
                fact = f"@{name}" if kind == "align" else name
                out[fact] = max(out.get(fact, 1), value)
        return tuple(out.items())

    def _build(self, key: int, gpu_arch: str | None) -> _Compiled:
        """Specialisation `key` for a GPU of `gpu_arch` (None: no GPU), compiled or cached."""
        target = self._target(gpu_arch)
        assemble_for = gpu_arch if gpu_arch is not None and find_ptxas() else None
        found = self._compiled.get((key, target, str(assemble_for)))
        if found is not None:
            return found
        facts = self._facts(key)
        k = self._key("variant", facts, target, assemble_for, _ptxas_identity())
        compiled = cache.load_checked(k, lambda entry: self._checked(_variant_entry(entry)))
        if compiled is None:
            # To a cubin where ptxas is at hand, else to PTX (the CUDA driver's JIT loads it).
            stage = Stage.PTX if assemble_for is None else Stage.CUBIN
            result = self._compile(stage, self._options(target, facts, assemble_for))
            assert result.ptx is not None
            record = self._result_record(result)
            cubin = result.cubin
            resources = {n: vars(r) for n, r in result.resources.items()}
            said = [w.render() for w in result.warnings]
            compiled = _Compiled(result.ptx, cubin, resources, record, said)
            blobs = {"cubin": cubin} if cubin is not None else {}
            meta = {"ptx": result.ptx, "resources": resources, "record": record.to_json()}
            meta["warnings"] = said
            cache.store(k, cache.Entry(meta, blobs))
        for text in compiled.warnings:  # a cached cubin's too: ptxas said it once
            warnings.warn(text, PerformanceWarning, stacklevel=2)
        self._compiled[(key, target, str(assemble_for))] = compiled
        self._last = compiled
        return compiled

    def _result_record(self, result: Result) -> KernelLaunch:
        """A specialisation's own launch record, from its compile: the frontend's signature,
        the lowered kernel's launch facts, and its tail's. IR input: the base record's
        signatures (the facts do not reach its frontend, and the record may carry tensor
        maps that a .mlir kernel has no recipe for), with the compile's launch facts."""
        launch = result.launches[self.name]
        signatures = dict(result.signatures)
        if self.source.lang != "cute":
            base = self._record
            assert base is not None
            signatures[self.name] = base.signature
            if base.then is not None:
                signatures[base.then[0].kernel] = base.then[0]
        then = None
        if launch.then is not None:
            then = (signatures[launch.then], result.launches[launch.then])
        return self._checked_record(KernelLaunch(signatures[self.name], launch, then))

    def _checked(self, compiled: _Compiled) -> _Compiled:
        """A specialisation's entry read back, its record checked against the kernel's."""
        assert compiled.record is not None
        self._checked_record(compiled.record)
        return compiled

    def _checked_record(self, record: KernelLaunch) -> KernelLaunch:
        """`record`, if it is a launch record of this kernel: its name, and the arguments a
        caller passes (`_launch_form`); else `json_read.RecordError`."""
        if record.signature.kernel != self.name:
            raise json_read.RecordError(
                f"entry: a record of kernel {record.signature.kernel}, not {self.name}"
            )
        self._launch_form(record)
        return record

    def _variant(self, key: int, ordinal: int | None) -> Variant:
        """The loaded specialisation `key` for GPU `ordinal` (the launch functions cache
        it, and so does the kernel: each launch record's function may ask for it)."""
        found = self._loaded.get((key, ordinal))
        if found is None:
            found = self._loaded[(key, ordinal)] = self._load_variant(key, ordinal)
        return found

    def _load_variant(self, key: int, ordinal: int | None) -> Variant:
        if self.cpu:
            # The CPU runs the thread-level IR: no PTX, no ptxas (`ptx` compiles this key's).
            self._last, self._last_key = None, key
            target = self._target(None)
            result = self._compile(Stage.THREAD, self._options(target, self._facts(key)))
            record = self._result_record(result)
            variant = Variant(
                _CpuVariant(result.module, record.signature), record.launch.dynamic_smem,
                resident_ctas=CPU_RESIDENT_CTAS,
            )  # fmt: skip
            if record.then is not None:
                tail, smem = record.then[0], record.then[1].dynamic_smem
                variant.then = Variant(
                    _CpuVariant(result.module, tail), smem, resident_ctas=CPU_RESIDENT_CTAS
                )
                variant.then.workspace = Workspace.of(tail, CPU_RESIDENT_CTAS, None)
            variant.launch = self._own_launcher(record)
            return variant
        if self.device_ordinal is not None and ordinal not in (None, self.device_ordinal):
            raise ArgumentValueError(
                f"{self.name}: the arrays are on GPU {ordinal}, but the kernel was made for "
                f"GPU {self.device_ordinal} (cutec.jit(..., device={self.device_ordinal}))"
            )
        dev = cuda.device(self.device_ordinal if ordinal is None else ordinal)
        if self.arch == "sm_90a" and dev.arch != "sm_90a":
            raise cuda.CudaError(
                f"kernel '{self.name}' is compiled for sm_90a; GPU {dev.ordinal} ({dev.name}) "
                f"is {dev.arch}"
            )
        compiled = self._build(key, dev.arch)
        record = compiled.record
        assert record is not None
        if compiled.cubin is not None:
            fn = cuda.load_function(dev, compiled.cubin, self.name, ptx=False)
        else:
            fn = cuda.load_function(dev, compiled.ptx.encode(), self.name, ptx=True)
        variant = _loaded(fn, record.launch, bool(record.signature.implicit))
        if record.then is not None:
            tail_signature, tail_launch = record.then
            tail = fn.sibling(tail_signature.kernel)
            variant.then = _loaded(tail, tail_launch, True)
            variant.then.workspace = Workspace.of(
                tail_signature, variant.then.resident_ctas, dev.ordinal
            )
        variant.launch = self._own_launcher(record)
        return variant

    def _run_cpu(self, variant: Variant, grid: Any, block: Any, smem: int, values: Any,
                 arrays: Any) -> None:  # fmt: skip
        """Run on the CPU: the lowered kernel compiled by the llvmlite backend, or in the
        reference interpreter when it uses an op the backend does not run yet."""
        from cutec.cpu import native  # the CPU path only (llvmlite)
        from cutec.cpu.reference import run_kernel  # the fallback, for ops native lacks
        from cutec.cpu.tma import TensorMapArgument  # the CPU path only, as the above

        compiled: _CpuVariant = variant.fn
        name = compiled.signature.kernel
        (op,) = [k for k in compiled.module.walk_type(KernelOp) if k.sym_name == name]
        # A map's value is its description, over the memory of the tensor it maps.
        mapped = {p.name: p.tensor for p in compiled.signature.params
                  if isinstance(p, TensorMapParam)}  # fmt: skip
        args = []
        for (name, kind), value in zip(compiled.signature.abi, values, strict=True):
            if kind == "tensor_map":
                args.append(TensorMapArgument(value, mapped[name]))
            else:
                args.append(arrays[name] if kind == "ptr" else host_scalar(kind, value))
        if compiled.runner is None:
            try:
                compiled.runner = native.compile_kernel(
                    op, self.bounds_check, self.check_shared, objects=cache.CpuObjects()
                )
                self.cpu_backend = "native"
            except native.Unsupported as e:
                compiled.runner = "reference"
                self.cpu_backend = f"reference ({e})"
            _log.debug("kernel %s on the CPU: %s", op.sym_name, self.cpu_backend)
        if isinstance(compiled.runner, native.NativeKernel):
            native.run_kernel(op, grid, args, block=block, native=compiled.runner)
        else:
            run_kernel(op, grid, args, block=block, check_shared=self.check_shared)

    # ------------------------------------------------------------------ inspect
    @property
    def ptx(self) -> str:
        """The PTX of the specialisation used last (the unspecialised one before a launch)."""
        return self._inspect().ptx

    @property
    def resources(self) -> ResourceUsage | None:
        """Registers, shared memory and spills, as ptxas reported them (None without ptxas)."""
        compiled = self._inspect()
        found = compiled.resources.get(self.name)
        return ResourceUsage(**found) if found else None

    @property
    def sass(self) -> str:
        """The SASS of the cubin used last (nvdisasm: cutec.ptx.sass)."""
        compiled = self._inspect()
        if compiled.cubin is None:
            raise RuntimeError("k.sass needs a cubin: ptxas was not found, so none was made")
        return disassemble(compiled.cubin)

    def ir(self, stage: str = "cute") -> str:
        """The IR after a stage (``"ast"``, ``"cute"``, ``"thread"``, ``"ptx"``) or after
        one pass of the pipeline (``"partition"``, ``"vectorize"`` ...), unspecialised."""
        target = self._target(self._gpu_arch())
        if stage in ("ast", "cute", "thread", "ptx"):
            return self._compile(Stage.named(stage), self._options(target)).text
        if stage not in ALL_PASSES:
            known = ", ".join(ALL_PASSES)
            raise ValueError(f"no stage or pass '{stage}'; stages: ast, cute, thread, ptx; "
                             f"passes: {known}")  # fmt: skip
        out = io.StringIO()
        options = replace(
            self._options(target),
            instrumentation=Instrumentation(verify_each=False, print_after={stage}, stream=out),
        )
        self._compile(Stage.PTX, options)  # every pass up to PTX legalisation
        text = out.getvalue()
        if not text:
            raise ValueError(f"the pass '{stage}' is not in this kernel's pipeline")
        return text

    def _gpu_arch(self) -> str | None:
        if self.cpu:
            return None
        try:
            return cuda.device(self.device_ordinal or 0).arch
        except cuda.NoDriverError:
            return None

    def _inspect(self) -> _Compiled:
        if self._last is not None:
            return self._last
        self.signature  # noqa: B018  (resolves the kernel's name)
        return self._build(self._last_key, self._gpu_arch())

    def __repr__(self) -> str:
        name = self._signature.kernel if self._signature else self._name or "?"
        return f"<cutec kernel {name} of {self.source.file}>"


def _variant_entry(entry: cache.Entry) -> _Compiled:
    """A specialisation's entry (`Kernel._build` writes it), checked (json_read.RecordError
    where it is not as cutec writes it); `Kernel._checked` then checks that its launch
    record is the kernel's."""
    meta = entry.meta
    return _Compiled(
        json_read.text(json_read.field(meta, "ptx", "entry"), "entry.ptx"),
        entry.blobs.get("cubin"),
        _resources(json_read.field(meta, "resources", "entry")),
        KernelLaunch.from_json(json_read.field(meta, "record", "entry"), "entry.record"),
        _warnings(json_read.field(meta, "warnings", "entry")),
    )


def _declared(signature: KernelSignature, base: KernelSignature | None) -> KernelSignature:
    """`signature` (a specialisation's) with the caller's promises of `base` (the
    unspecialised one's): its facts and its tensor parameters, which must be the same
    tensors (`json_read.RecordError` where they are not). No `base`: no facts."""
    if base is None:
        return replace(signature, facts=())
    tensors = {p.name: p for p in base.params if isinstance(p, TensorParam)}

    def passed(sig: KernelSignature) -> list[tuple[str, str]]:
        return [(p.name, p.kind) for p in sig.params if p.passed]

    if passed(signature) != passed(base):
        raise json_read.RecordError(f"entry: {signature.kernel}'s arguments are not the kernel's")
    params = []
    for p in signature.params:
        own = tensors.get(p.name) if isinstance(p, TensorParam) else None
        if own is not None:
            if (p.element, p.shape, p.stride) != (own.element, own.shape, own.stride):
                raise json_read.RecordError(f"entry: {p.name} is not the kernel's tensor")
            p = own
        params.append(p)
    return replace(signature, params=tuple(params), facts=base.facts)


def _launchable(launch: LaunchInfo) -> LaunchInfo:
    """What a launch function reads of launch facts: not the shared memory (the variant's)
    nor the offsets' width (it checks 32-bit offsets)."""
    return replace(launch, dynamic_smem=0, offset_bits=32)


def _form_text(form: KernelLaunch) -> str:
    """A launch record as text, to compare and to key launch functions by."""
    return json.dumps(form.to_json(), sort_keys=True)


def _warnings(value: Any) -> list[str]:
    """ptxas's warnings, rendered, as `Kernel._build` stores them."""
    texts = json_read.items(value, "entry.warnings")
    return [json_read.text(t, f"entry.warnings[{i}]") for i, t in enumerate(texts)]


# ptxas's report of one kernel (`ResourceUsage`): each field's type.
_RESOURCE_TYPES = {f.name: str if f.name in ("kernel", "arch") else int
                   for f in fields(ResourceUsage)}  # fmt: skip


def _resources(value: Any) -> dict[str, Any]:
    """ptxas's reports by kernel, as `Kernel._build` stores them."""
    for report in value.values() if isinstance(value, dict) else [None]:
        if not isinstance(report, dict) or report.keys() != _RESOURCE_TYPES.keys() or any(
            type(v) is not _RESOURCE_TYPES[n] for n, v in report.items()
        ):  # fmt: skip
            raise json_read.RecordError(f"entry.resources: not ptxas's report: {value!r:.80}")
    return value  # type: ignore[no-any-return]


def _loaded(fn: cuda.Function, launch: LaunchInfo, needs_resident: bool) -> Variant:
    """A loaded kernel, its dynamic shared memory allowed, and its resident CTAs counted
    where its grid names them or `needs_resident` (a stream-K gemm's wave)."""
    smem = launch.dynamic_smem
    if smem > _DEFAULT_DYNAMIC_SMEM:
        fn.allow_dynamic_smem(smem)
    resident = 0
    grid, block = launch.grid, launch.block
    if needs_resident or (grid is not None and any(names_resident_ctas(e) for e in grid)):
        if block is None:
            raise ArgumentValueError(
                f"{fn.name}: the grid names resident_ctas, which needs the block size "
                "at compile time (a 'threads' clause)"
            )
        resident = fn.resident_ctas(block[0] * block[1] * block[2], smem)
    return Variant(fn, smem, fn.handle, int(fn.handle), resident)


def _ptxas_identity() -> tuple[str, int, int] | None:
    """The ptxas a cubin came from, for the cache key: its path, size and modification
    time (a stat, where asking its version costs a process: about 40 ms)."""
    path = find_ptxas()
    if path is None:
        return None
    st = os.stat(path)
    return (path, st.st_size, st.st_mtime_ns)


def _stream_of(stream: Any) -> int:
    """The CUstream handle of a `stream=` argument: a torch or CuPy stream, a CUstream,
    or an int (None, the default, is resolved by the launch function)."""
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    try:
        return int(stream)  # a cuda.bindings CUstream
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            f"stream: expected a torch/CuPy stream, a CUstream or an int, got {stream!r}"
        ) from None


def synchronize(device: int = 0) -> None:
    """Wait for the GPU; a kernel fault surfaces here, naming the kernels that may be at fault."""
    cuda.device(device).synchronize()


__all__ = ["Kernel", "jit", "synchronize"]
