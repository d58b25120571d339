"""PTX that ptxas 13.0 assembles with a performance warning, for the tests of
cutec.ptx.ptxas_warnings and its plumbing (driver, CLI, JIT).

cutec does not emit wgmma or setmaxnreg yet, so these kernels are written by hand
with the ``.file`` / ``.loc`` lines the emitter writes (the kernel's position
first in its body). ptxas's messages about each, as 13.0.88 prints them:

    serialised(k):  (C7519) warpgroup.arrive is injected in around line <MOV+1> by
                    compiler to allow use of registers in GMMA in function 'k'
                    (C7511) Potential Performance Loss: wgmma.mma_async instructions
                    are serialized due to insufficient register resources for the
                    wgmma pipeline in the function 'k'
    setmaxnreg(k):  (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable
                    to determine register count at entry.
    injected(k):    (C7519) warpgroup.arrive is injected in around line <ADD+1> ...
                    (and no performance loss)
    called(k):      (C7520) Potential Performance Loss: wgmma.mma_async instructions
                    are serialized due to program dependence on compiler-inserted WG.AR
                    in divergent path in the function 'k'
"""

from __future__ import annotations

HEADER = """.version 8.0
.target sm_90a
.address_size 64

.file 1 "{file}"
"""

# Where each kernel's parts are in the .cute file the .loc lines name (line, column).
DECLARED = (9, 1)
MOVED = (23, 3)  # the mov into an accumulator between two wgmma of one batch
SETMAXNREG = (27, 5)

WGMMA = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"
_ZEROS = "\n".join(f"\tmov.f32 %f{i}, 0f00000000;" for i in range(8))


def _two_wgmma(kernel: str, between: str, second: str, after: str) -> str:
    """Two m64n8k16 wgmma of one batch, `between` them an instruction (at MOVED), the
    second accumulating into `second`; `after` the wait, before the store."""
    return f""".visible .entry {kernel}(
\t.param .u64 {kernel}_param_0
)
{{
\t.reg .pred %p<2>;
\t.reg .f32 %f<8>;
\t.reg .b64 %rd<4>;
\t.shared .align 1024 .b8 {kernel}_smem[4096];

\t.loc 1 {DECLARED[0]} {DECLARED[1]}
\tld.param.u64 %rd2, [{kernel}_param_0];
\tmov.u64 %rd0, {kernel}_smem;
{_ZEROS}
\tsetp.ne.b32 %p0, 1, 0;
\twgmma.fence.sync.aligned;
\t{WGMMA} {{%f0, %f1, %f2, %f3}}, %rd0, %rd0, %p0, 1, 1, 0, 0;
\t.loc 1 {MOVED[0]} {MOVED[1]}
\t{between}
\t{WGMMA} {second}, %rd0, %rd0, %p0, 1, 1, 0, 0;
\twgmma.commit_group.sync.aligned;
\twgmma.wait_group.sync.aligned 0;
\t{after}
\tst.global.v4.f32 [%rd2], {{%f0, %f1, %f2, %f3}};
\tret;
}}
"""


def serialised(kernel: str) -> str:
    """A mov into the accumulator of a wgmma batch, between two wgmma: serialised."""
    acc = "{%f0, %f1, %f2, %f3}"
    return _two_wgmma(kernel, "mov.f32 %f1, 0f3F800000;", acc, "")


def injected(kernel: str) -> str:
    """An add to the accumulator of the batch's second wgmma, before it: ptxas adds a
    warpgroup.arrive there, and does not serialise."""
    after = "add.f32 %f0, %f0, %f4;"
    return _two_wgmma(kernel, "add.f32 %f4, %f4, 0f3F800000;", "{%f4, %f5, %f6, %f7}", after)


def setmaxnreg(kernel: str) -> str:
    """setmaxnreg in a kernel with no register count at entry: ptxas ignores it."""
    return f""".visible .entry {kernel}(
\t.param .u64 {kernel}_param_0
)
{{
\t.reg .b32 %r<2>;
\t.reg .pred %p<2>;

\t.loc 1 {DECLARED[0]} {DECLARED[1]}
\tmov.u32 %r0, %tid.x;
\tsetp.lt.u32 %p0, %r0, 128;
\t@%p0 bra $L_{kernel}_1;
\t.loc 1 {SETMAXNREG[0]} {SETMAXNREG[1]}
\tsetmaxnreg.dec.sync.aligned.u32 40;
\tbra $L_{kernel}_2;
$L_{kernel}_1:
\tsetmaxnreg.inc.sync.aligned.u32 232;
$L_{kernel}_2:
\tret;
}}
"""


def called(kernel: str) -> str:
    """A wgmma in a function the kernel calls through a pointer, inside its batch."""
    return f""".func {kernel}_mma(.param .b64 {kernel}_a)
{{
\t.reg .pred %p<2>;
\t.reg .f32 %f<4>;
\t.reg .b64 %rd<2>;
\tld.param.b64 %rd0, [{kernel}_a];
\tsetp.ne.b32 %p0, 1, 0;
\t{WGMMA} {{%f0, %f1, %f2, %f3}}, %rd0, %rd0, %p0, 1, 1, 0, 0;
\tret;
}}

.visible .entry {kernel}()
{{
\t.reg .b64 %rd<2>;
\t.shared .align 1024 .b8 {kernel}_smem[4096];

\t.loc 1 {DECLARED[0]} {DECLARED[1]}
\tmov.u64 %rd0, {kernel}_smem;
\tmov.u64 %rd1, {kernel}_mma;
\twgmma.fence.sync.aligned;
\t{{
\t.param .b64 a;
\tst.param.b64 [a], %rd0;
\tprototype: .callprototype _ (.param .b64 _);
\tcall.uni %rd1, (a), prototype;
\t}}
\twgmma.commit_group.sync.aligned;
\twgmma.wait_group.sync.aligned 0;
\tret;
}}
"""


def module(file: str, *kernels: str) -> str:
    """A PTX module of `kernels` (their texts) whose .loc lines name `file`."""
    return HEADER.format(file=file) + "\n".join(kernels)


def line_of(ptx: str, text: str) -> int:
    """The 1-based line of `ptx` that holds `text` (the first)."""
    return next(n for n, line in enumerate(ptx.splitlines(), 1) if text in line)
