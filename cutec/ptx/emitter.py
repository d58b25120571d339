"""The PTX emitter: thread-level IR → PTX text, in one printing loop over the ops.

``emit_ptx(module, target)`` takes thread-level IR that the ``legalize-ptx`` pass
(legalize.py; the driver runs it before the PTX stage) has left legal, and
writes, per kernel, the ``.entry`` with its parameters (docs/abi.md) and
performance directives, and its body: each op is looked up by class in
`RULES` (rules.py: arith, gpu, thread; control.py: scf; mbarrier.py; atomic.py;
barrier.py) and its rule prints its instructions through the `KernelEmitter` it is
given. Adding an op is adding a row to a table in tables.py or one small rule function.

*Packed pairs.* A pair of 16-bit elements (``vector<2xf16>``, ``vector<2xbf16>``,
``vector<2xi16>``) is what one ldmatrix or mma.sync fragment register holds. The
tensor-core instructions read and write it packed, in one b32 register; the other
ops read its elements, in two b16 registers. Before printing a kernel the emitter
notes which form each pair's uses read (`_Uses`), and where a pair is defined it
writes the other form too if some use reads it (one ``mov.b32``). Loops and
branches carry pairs packed. So an ldmatrix result reaches its mma.sync in the
register ldmatrix wrote: packing the halves again before every mma, as the
emitter did, left ptxas copying each A fragment into one fixed register quad
before its HMMAs (48 moves per k-tile of gemm_auto's 128x256x64 kernel).

The module's text is assembled last: the header (``.version``/``.target``/
``.address_size`` from cutec/target.py), the ``.file`` table of the source
files the ops' locations name, then the kernels, each with its register
declarations (known only once its body is printed).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from cutec.analysis.register_budget import check_register_budget
from cutec.atoms.family import Family
from cutec.diagnostics import CompileError, Location
from cutec.ir.attributes import DenseArrayAttr, IntegerAttr
from cutec.ir.core import Block, Operation, Value
from cutec.ir.dialects import scf, thread
from cutec.ir.dialects.builtin import FuncOp, KernelOp, ModuleOp
from cutec.ir.dialects.gpu import PointerType, TokenType
from cutec.ir.dialects.thread_tma import tensor_map_names
from cutec.ir.rule_table import RuleTable
from cutec.ir.traits import Terminator
from cutec.ir.types import VectorType
from cutec.ptx.atomic import ATOMIC_RULES
from cutec.ptx.barrier import BARRIER_RULES
from cutec.ptx.control import CONTROL_RULES
from cutec.ptx.mbarrier import MBARRIER_RULES
from cutec.ptx.regalloc import Registers, packs
from cutec.ptx.rules import RULES as OP_RULES
from cutec.ptx.rules import Rule
from cutec.ptx.tables import PtxType, param_type, ptx_type
from cutec.ptx.tma import TMA_RULES
from cutec.ptx.wgmma import WGMMA_RULES
from cutec.target import Feature, Target
from cutec.target import target as lookup_target

RULES: RuleTable[Rule] = RuleTable(
    {
        **OP_RULES,
        **CONTROL_RULES,
        **MBARRIER_RULES,
        **WGMMA_RULES,
        **TMA_RULES,
        **ATOMIC_RULES,
        **BARRIER_RULES,
    }
)


def _is_wgmma(op: Operation) -> bool:
    return isinstance(op, thread.AtomOp) and op.family() is Family.WGMMA


def register_rule(op_class: type[Operation], rule: Rule) -> None:
    """Teach the emitter a new op (for an op defined outside cutec's dialects)."""
    RULES[op_class] = rule


def cannot_emit(op: Operation, target: Target, why: str = "") -> CompileError:
    """The one error for an op the emitter has no instruction for."""
    ins = ", ".join(map(str, op.operand_types))
    outs = ", ".join(map(str, op.result_types))
    message = f"cannot emit '{op.name}' with operand types ({ins}) and result types ({outs})"
    message += f" for {target}" + (f": {why}" if why else "")
    return CompileError(message, op.location or op.parsed_at)


class FileTable:
    """The ``.file`` directives: one number per source file, in order of first use."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def number(self, file: str) -> int:
        return self.numbers.setdefault(file, len(self.numbers) + 1)

    def directives(self) -> list[str]:
        return [f'.file {n} "{_escape(f)}"' for f, n in self.numbers.items()]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


# Uses that read a pair packed: a tensor-core atom's operands, and the values a loop
# or branch carries (inits and yields). Every other use reads its elements.
_PACKED_USERS = (thread.AtomOp, scf.ForOp, scf.WhileOp, scf.YieldOp, scf.ConditionOp)


_READ_BEFORE_WAIT = (
    "a wgmma's accumulator is read before its batch's warpgroup_wait: its registers are "
    "written only then (an accumulator fragment the compiler could not keep in registers "
    "is stored to memory right after its gemm)"
)


class _Uses:
    """Which form (packed, elements) the uses of each pair of 16-bit elements read."""

    def __init__(self, kernel: KernelOp) -> None:
        self.packed: set[Value] = set()
        self.elements: set[Value] = set()
        for op in kernel.walk():
            for v in op.operands:
                if packs(v):
                    (self.packed if isinstance(op, _PACKED_USERS) else self.elements).add(v)


class KernelEmitter:
    """The state of one kernel's emission, and the small API the rules print through.

    Values: `reg` (an operand's register), `define` (a result's fresh registers),
    `alias` / `share` / `define_elements` (a value living in registers other
    values hold), `temp` (a scratch register). A vector value is N registers
    (regalloc.py): `reg` gives its brace list, `elements` its registers,
    `element_ptype` its element's PTX type and `width` N. Text: `emit`, `label`,
    `place`; arrays: `declare_shared`, `declare_local`, `dynamic_shared`;
    failures: `error` (one located error naming the op).
    """

    def __init__(self, kernel: KernelOp, target: Target, files: FileTable) -> None:
        self.kernel = kernel
        self.target = target
        self.files = files
        self.regs = Registers()
        self.body: list[str] = []
        self.arrays: list[str] = []  # .shared / .local declarations at the top of the body
        self._arrays = {"shared": 0, "local": 0}
        self._labels = itertools.count()
        self._loc: Location | None = None
        self._uses = _Uses(kernel)
        # Between wgmma.fence and a wait_group 0: no instruction may write a register
        # a wgmma of the batch accumulates into (ptxas would serialise the batch).
        self.in_wgmma_batch = False
        self.landing: list[Value] = []  # atom results of the batch, completed at its wait
        self.current: Operation = kernel  # the op being printed (for located errors)

    # -- what rules call ----------------------------------------------------------
    def ptype(self, value: Value, op: Operation) -> PtxType:
        """The PTX form of scalar `value`'s type; a located error naming `op` if it has none
        (a vector's is `element_ptype`)."""
        t = ptx_type(value.type)
        if t is None:
            raise cannot_emit(op, self.target, f"no PTX register holds {value.type}")
        return t

    def element_ptype(self, value: Value, op: Operation) -> PtxType:
        """The PTX form of a vector's element type (of a scalar's own type)."""
        t = value.type
        if isinstance(t, VectorType):
            if len(t.shape) != 1:
                raise cannot_emit(op, self.target, f"no PTX registers hold {t}")
            t = t.element
        p = ptx_type(t)
        if p is None:
            raise cannot_emit(op, self.target, f"no PTX register holds {value.type}")
        return p

    @staticmethod
    def width(value: Value) -> int:
        """How many registers hold `value`: a 1-D vector's length, else 1."""
        t = value.type
        return t.shape[0] if isinstance(t, VectorType) and len(t.shape) == 1 else 1

    def reg(self, value: Value) -> str:
        """The register holding operand `value`; a vector's brace list ``{%f0, %f1}``."""
        self._check_landed(value)
        return self.regs.of(value)

    def elements(self, value: Value) -> tuple[str, ...]:
        """The registers of a vector `value`, element 0 first (a scalar's one register)."""
        self._check_landed(value)
        return self.regs.elements(value)

    def _check_landed(self, value: Value) -> None:
        """A wgmma result read in another form before its batch's wait is a located error
        (its registers are not written yet; the only form it has is the packed one)."""
        if value in self.landing and not self.regs.has_elements(value):
            raise self.error(self.current, _READ_BEFORE_WAIT)

    def define(self, value: Value, op: Operation) -> str:
        """Fresh registers for result `value` of `op`: one for a scalar, one per element
        for a vector (returns its brace list), none for a token ("")."""
        if isinstance(value.type, TokenType):
            return self.regs.bind(value, "")
        if isinstance(value.type, VectorType):
            reg_class = self.element_ptype(value, op).reg
            names = [self.regs.new(reg_class) for _ in range(self.width(value))]
            return self.regs.bind_elements(value, names)
        return self.regs.bind(value, self.regs.new(self.ptype(value, op).reg))

    def define_packed(self, value: Value) -> str:
        """A fresh b32 register for pair `value` (`packs`), written packed; the emitter
        unpacks it after the op if a use reads its elements."""
        assert packs(value), value
        return self.regs.bind_packed(value, self.regs.new("b32"))

    def define_carried(self, value: Value, op: Operation) -> str:
        """Registers for a value a loop or branch carries: a pair's packed register
        (`complete` gives its elements where the region starts), else `define`'s."""
        return self.define_packed(value) if packs(value) else self.define(value, op)

    def packed(self, value: Value) -> str:
        """Pair `value` in one b32 register: its packed register, or its elements
        packed into a scratch one here."""
        name = self.regs.packed(value)
        if name is None:
            name = self.temp("b32")
            self.emit(f"mov.b32 {name}, {self.reg(value)};")
        return name

    def complete(self, value: Value) -> None:
        """Write pair `value`'s other form where a use reads it: its elements from its
        packed register, or its packed register from its elements."""
        if not packs(value):
            return
        packed = self.regs.packed(value)
        if packed is not None and not self.regs.has_elements(value):
            if value in self._uses.elements:
                halves = self.regs.bind_elements(value, [self.temp("b16"), self.temp("b16")])
                self.emit(f"mov.b32 {halves}, {packed};")
        elif packed is None and self.regs.has_elements(value) and value in self._uses.packed:
            packed = self.regs.bind_packed(value, self.temp("b32"))
            self.emit(f"mov.b32 {packed}, {self.reg(value)};")

    def define_elements(self, value: Value, registers: Sequence[str]) -> str:
        """Let vector `value` live in `registers` (one per element), which other values
        hold too (``thread.from_elements``); returns its brace list."""
        assert len(registers) == self.width(value), (value, registers)
        return self.regs.bind_elements(value, registers)

    def share(self, value: Value, other: Value) -> None:
        """Let `value` live in the register(s) of `other` (loop results, block arguments):
        a pair in `other`'s packed register (`complete` gives its own elements)."""
        if packs(value):
            self.regs.bind_packed(value, self.packed(other))
        elif isinstance(value.type, VectorType):
            self.regs.bind_elements(value, self.regs.elements(other))
        else:
            self.regs.bind(value, self.regs.of(other))

    def temp(self, reg_class: str) -> str:
        """A scratch register of `reg_class`."""
        return self.regs.new(reg_class)

    def emit(self, instruction: str) -> None:
        """One instruction line (with its ``;``)."""
        self.body.append("\t" + instruction)

    def label(self, kind: str) -> str:
        """A fresh label name (``$L_for_3``)."""
        return f"$L_{kind}_{next(self._labels)}"

    def place(self, label: str) -> None:
        self.body.append(f"{label}:")

    def error(self, op: Operation, why: str = "") -> CompileError:
        return cannot_emit(op, self.target, why)

    def declare_shared(self, nbytes: int, align: int) -> str:
        """A static ``.shared`` buffer of `nbytes`; returns its symbol."""
        name = f"{self.kernel.sym_name}_smem_{self._arrays['shared']}"
        self._arrays["shared"] += 1
        self.arrays.append(f".shared .align {align} .b8 {name}[{nbytes}];")
        return name

    def declare_local(self, nbytes: int, align: int) -> str:
        """A ``.local`` array of `nbytes` (the thread's stack frame); returns its symbol."""
        name = f"{self.kernel.sym_name}_local_{self._arrays['local']}"
        self._arrays["local"] += 1
        self.arrays.append(f".local .align {align} .b8 {name}[{nbytes}];")
        return name

    def dynamic_shared(self) -> str | None:
        """The symbol of the kernel's dynamic shared memory, None if it asks for none."""
        return dynamic_smem_symbol(self.kernel)

    def alias(self, value: Value, register: str) -> None:
        """Let scalar `value` live in `register`, which another value holds too."""
        self.regs.bind(value, register)

    def emit_block(self, block: Block) -> None:
        """Print the ops of `block` but its terminator, which the enclosing rule handles."""
        for op in block.ops:
            if op is not block.last_op or not op.has_trait(Terminator):
                self.emit_op(op)

    def emit_op(self, op: Operation) -> None:
        rule = RULES.lookup(op)
        if rule is None:
            raise self.error(op)
        self._mark(op)
        self.current = op
        rule(self, op)
        for r in op.results:  # async tokens order the program; no register holds them
            if isinstance(r.type, TokenType) and not self.regs.has(r):
                self.regs.bind(r, "")
            if self.in_wgmma_batch and _is_wgmma(op):
                self.landing.append(r)  # a wgmma's registers are read after the wait
            else:
                self.complete(r)

    def landed(self) -> None:
        """After a wait for every wgmma batch: give each result its other form (`complete`)
        now that its registers may be read."""
        for r in self.landing:
            self.complete(r)
        self.landing.clear()

    # -- the kernel -------------------------------------------------------------
    def _mark(self, op: Operation) -> None:
        """A ``.loc`` line when `op`'s source position differs from the last one."""
        loc = op.location or op.parsed_at
        if loc is None or loc == self._loc:
            return
        self._loc = loc
        self.body.append(f"\t.loc {self.files.number(loc.file)} {loc.line} {loc.col}")

    def emit_kernel(self) -> str:
        check_register_budget(self.kernel)  # setmaxnreg's rules, before any text
        self._mark(self.kernel)
        params = [self._load_param(i, arg) for i, arg in enumerate(self.kernel.args)]
        entry = [f".param .{t} {name}" for t, name in params]
        for name in tensor_map_names(self.kernel):  # by value, after the arguments
            entry.append(f".param .align 64 .b8 {self.tensor_map(name)}[128]")
        self.emit_block(self.kernel.body)
        self.emit("ret;")
        param_lines = ",\n".join(f"\t{d}" for d in entry)
        head = [f".visible .entry {self.kernel.sym_name}(", *([param_lines] if entry else []), ")"]
        head += self._directives()
        decls = [f"\t{d}" for d in (*self.regs.declarations(), *self.arrays)]
        return "\n".join([*head, "{", *decls, "", *self.body, "}", ""])

    def _sets_registers(self) -> bool:
        return any(isinstance(op, thread.SetMaxNRegOp) for op in self.kernel.walk())

    def tensor_map(self, name: str) -> str:
        """The .param of tensor map `name`: numbered after the arguments, in the order of
        the kernel's ``tensor_maps`` (the launcher packs parameters by position)."""
        index = len(self.kernel.args) + tensor_map_names(self.kernel).index(name)
        return f"{self.kernel.sym_name}_param_{index}"

    def _load_param(self, index: int, arg: Value) -> tuple[str, str]:
        """Load kernel argument `index` (docs/abi.md); returns its (param type, name)."""
        name = f"{self.kernel.sym_name}_param_{index}"
        param = param_type(arg.type)
        if param is None:
            raise CompileError(
                f"kernel argument {index} of type {arg.type} has no parameter form "
                "(docs/abi.md: pointers to global memory, integers, index and floats)",
                self.kernel.location or self.kernel.parsed_at,
            )
        if param == "u8":  # an i1: a byte, tested into a predicate
            byte = self.temp("b16")
            self.emit(f"ld.param.u8 {byte}, [{name}];")
            self.emit(f"setp.ne.u16 {self.define(arg, self.kernel)}, {byte}, 0;")
        elif isinstance(arg.type, PointerType):  # a generic address of global memory
            raw = self.temp("b64")
            self.emit(f"ld.param.u64 {raw}, [{name}];")
            self.emit(f"cvta.to.global.u64 {self.define(arg, self.kernel)}, {raw};")
        else:
            self.emit(f"ld.param.{param} {self.define(arg, self.kernel)}, [{name}];")
        return param, name

    def _directives(self) -> list[str]:
        """Performance directives from the kernel's attributes (docs/ir.md, builtin)."""
        out = []
        attrs = self.kernel.attributes
        for key in ("reqntid", "maxntid"):  # the verifier allows one of them at most
            attr = attrs.get(key)
            if isinstance(attr, DenseArrayAttr):
                out.append(f".{key} {', '.join(map(str, attr.values))}")
        for key in ("minnctapersm", "maxnreg"):
            attr = attrs.get(key)
            if isinstance(attr, IntegerAttr):
                out.append(f".{key} {attr.value}")
            elif key == "minnctapersm" and self._sets_registers():
                # ptxas gives a kernel with setmaxnreg its count at entry from the launch
                # bounds: the CTA's threads and at least one CTA per SM (C7508 otherwise)
                out.append(".minnctapersm 1")
        cluster = attrs.get("cluster_dim")
        if isinstance(cluster, DenseArrayAttr):
            if not self.target.has(Feature.CLUSTERS):
                raise CompileError(
                    f"'cluster_dim' needs thread-block clusters, which {self.target} lacks",
                    self.kernel.location or self.kernel.parsed_at,
                )
            out.append(f".reqnctapercluster {', '.join(map(str, cluster.values))}")
        return out


def dynamic_smem_symbol(kernel: KernelOp) -> str | None:
    """The extern shared array of a kernel that asks for dynamic shared memory, or None."""
    attr = kernel.attributes.get("dynamic_smem")
    if isinstance(attr, IntegerAttr) and attr.value > 0:
        return f"{kernel.sym_name}_dynamic_smem"
    return None


def _dynamic_smem(kernel: KernelOp) -> list[str]:
    """The declaration of the kernel's dynamic shared memory (docs/abi.md), if it has any."""
    name = dynamic_smem_symbol(kernel)
    if name is None:
        return []
    attr = kernel.attributes.get("dynamic_smem_align")
    align = attr.value if isinstance(attr, IntegerAttr) else 16
    return [f".extern .shared .align {align} .b8 {name}[];", ""]


def header(target: Target) -> list[str]:
    """``.version`` / ``.target`` / ``.address_size`` of `target`."""
    major, minor = target.ptx_version
    return [
        f"// Generated by cutec for {target}",
        "",
        f".version {major}.{minor}",
        f".target {target}",
        ".address_size 64",
        "",
    ]


def emit_ptx(module: ModuleOp, target: Target | str) -> str:
    """The PTX text of every kernel in `module`, for `target` (sm_80, sm_90a): thread-level
    IR after the ``legalize-ptx`` pass (`cutec.ptx.legalize`)."""
    if isinstance(target, str):
        target = lookup_target(target)
    files = FileTable()
    kernels: list[str] = []
    for op in module.body.ops:
        if isinstance(op, KernelOp):
            kernels += _dynamic_smem(op)
            kernels.append(KernelEmitter(op, target, files).emit_kernel())
        elif isinstance(op, FuncOp):
            raise cannot_emit(op, target, "device functions are inlined before emission")
        else:
            raise cannot_emit(op, target)
    directives = files.directives()
    return "\n".join([*header(target), *directives, *([""] if directives else []), *kernels])
