"""The GPU targets cutec knows: one record per target, and the memory address spaces.

A target is what PTX's ``.target`` names: an SM version, plus the ``a`` suffix
for the architecture-specific instructions that exist on that SM alone (sm_90a's
wgmma and setmaxnreg). cutec compiles for `COMPILE_TARGETS` (sm_80, sm_90a);
sm_75 and sm_90 are here as the lowest targets of atoms (ldmatrix and Volta's
m8n8k4 assemble for sm_75; stmatrix and TMA need sm_90 but not its ``a``).

Limits are per CTA (CUDA C Programming Guide, "Compute capabilities" table):
shared memory per CTA is the per-SM capacity less the 1 KiB the system keeps,
and at most 48 KiB of it may be static ``.shared``; the rest is dynamic.
The PTX ISA version emitted is never above `MAX_PTX_VERSION`, what the GPU
machine's CUDA 13.0 driver accepts.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

KIB = 1024

# The newest PTX ISA the CUDA 13.0 driver JIT-compiles (and ptxas 13.0 reads).
MAX_PTX_VERSION = (9, 0)


class Feature(enum.Enum):
    """An instruction family a target may have, named by its PTX mnemonic."""

    MMA_SYNC = "mma.sync"
    LDMATRIX = "ldmatrix"
    CP_ASYNC = "cp.async"
    STMATRIX = "stmatrix"
    WGMMA = "wgmma"
    TMA = "cp.async.bulk.tensor"
    MBARRIER = "mbarrier"
    CLUSTERS = "clusters"
    ELECT = "elect.sync"
    SETMAXNREG = "setmaxnreg"


class AddressSpace(enum.StrEnum):
    """Where memory lives; the value is PTX's state-space spelling (``ld.<value>``).

    The cute dialect's tensor types spell the four a kernel names as
    ``gmem``/``smem``/``dsmem``/``rmem`` (`memory`; ``dsmem``: another CTA's shared
    memory, map_shared_rank's); pointer types and PTX use the value.
    """

    GLOBAL = "global"
    SHARED = "shared"  # shared::cta, the CTA's own window
    SHARED_CLUSTER = "shared::cluster"
    REGISTER = "reg"
    LOCAL = "local"
    PARAM = "param"
    GENERIC = "generic"  # a generic address: global, shared or local, known at run time

    def aliases(self, other: AddressSpace) -> bool:
        """Whether accesses to the two spaces may touch the same bytes.

        shared::cta is a window of shared::cluster, so they alias each other; a
        generic address may point into any memory space (not the registers).
        """
        if self is other:
            return True
        if AddressSpace.GENERIC in (self, other):
            return AddressSpace.REGISTER not in (self, other)
        shared = {AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER}
        return self in shared and other in shared

    @property
    def memory(self) -> str:
        """The tensor-type spelling: ``gmem``, ``smem``, ``dsmem`` or ``rmem``."""
        if self not in _MEMORY:
            raise ValueError(f"{self.value} memory has no tensor-type spelling")
        return _MEMORY[self]

    @property
    def memory_or_none(self) -> str | None:
        """`memory`, or None for a space no tensor type names."""
        return _MEMORY.get(self)

    @classmethod
    def from_memory(cls, name: str) -> AddressSpace:
        """The space a tensor type's ``gmem``/``smem``/``rmem`` names."""
        for space, memory in _MEMORY.items():
            if memory == name:
                return space
        raise ValueError(f"unknown memory {name!r}; known: {', '.join(_MEMORY.values())}")


_MEMORY = {
    AddressSpace.GLOBAL: "gmem",
    AddressSpace.SHARED: "smem",
    AddressSpace.SHARED_CLUSTER: "dsmem",  # another CTA's shared memory (map_shared_rank)
    AddressSpace.REGISTER: "rmem",
}
MEMORIES: tuple[str, ...] = tuple(_MEMORY.values())


class UnknownTargetError(ValueError):
    """A target name cutec does not know; the message lists the known ones.

    Callers that know where the name was written raise it again as a located
    CompileError with the same message.
    """


@dataclass(frozen=True)
class Target:
    """One ``.target``: its SM, features, PTX ISA versions and per-CTA limits."""

    sm: int  # 80 for sm_80
    arch_specific: bool  # the "a" suffix: instructions that exist on this SM only
    min_ptx: tuple[int, int]  # the first PTX ISA version that knows the target
    ptx_version: tuple[int, int]  # the version cutec emits: covers every atom it has there
    features: frozenset[Feature]
    smem_per_cta: int  # bytes of shared memory one CTA may use (static + dynamic)
    static_smem_per_cta: int = 48 * KIB  # of which static .shared at most
    regs_per_thread: int = 255
    regs_per_cta: int = 65536
    threads_per_cta: int = 1024

    def __post_init__(self) -> None:
        assert self.min_ptx <= self.ptx_version <= MAX_PTX_VERSION, self

    @property
    def name(self) -> str:
        """The ``.target`` / ``ptxas -arch`` spelling, e.g. ``sm_90a``."""
        return f"sm_{self.sm}{'a' if self.arch_specific else ''}"

    def __str__(self) -> str:
        return self.name

    def has(self, feature: Feature) -> bool:
        return feature in self.features

    def runs(self, lowest: Target) -> bool:
        """Whether code built for `lowest` assembles for this target.

        Newer SMs take older code; an ``a`` target's code runs on that SM's ``a``
        target only.
        """
        if lowest.arch_specific:
            return self.sm == lowest.sm and self.arch_specific
        return self.sm >= lowest.sm

    def ptx_version_for(self, min_ptx: tuple[int, int]) -> tuple[int, int]:
        """The lowest PTX ISA version both this target and an instruction needing `min_ptx` take."""
        version = max(min_ptx, self.min_ptx)
        if version > MAX_PTX_VERSION:
            raise ValueError(f"PTX ISA {version} is above the {MAX_PTX_VERSION} the driver takes")
        return version


_AMPERE = frozenset({Feature.MMA_SYNC, Feature.LDMATRIX, Feature.CP_ASYNC})
_HOPPER = _AMPERE | {
    Feature.STMATRIX,
    Feature.TMA,
    Feature.MBARRIER,
    Feature.CLUSTERS,
    Feature.ELECT,
}

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            75,
            False,
            min_ptx=(6, 3),
            ptx_version=(7, 0),  # Volta's m8n8k4 needs 6.4, ldmatrix 6.5
            features=frozenset({Feature.MMA_SYNC, Feature.LDMATRIX}),
            smem_per_cta=64 * KIB,
        ),
        Target(
            80,
            False,
            min_ptx=(7, 0),
            ptx_version=(7, 4),  # cp.async's .L2::128B hint needs 7.4
            features=_AMPERE,
            smem_per_cta=163 * KIB,
        ),
        Target(
            90,
            False,
            min_ptx=(7, 8),
            ptx_version=(8, 0),  # TMA (cp.async.bulk.tensor) needs 8.0
            features=_HOPPER,
            smem_per_cta=227 * KIB,
        ),
        Target(
            90,
            True,
            min_ptx=(8, 0),
            ptx_version=(8, 0),  # wgmma needs 8.0
            features=_HOPPER | {Feature.WGMMA, Feature.SETMAXNREG},
            smem_per_cta=227 * KIB,
        ),
    )
}

# The targets `cutec compile --arch` takes; the first is the default.
COMPILE_TARGETS: tuple[str, ...] = ("sm_90a", "sm_80")
DEFAULT_TARGET = COMPILE_TARGETS[0]


def target(name: str) -> Target:
    """The target called `name` (``sm_80``, ``sm_90a`` ...)."""
    found = TARGETS.get(name)
    if found is None:
        raise UnknownTargetError(f"unknown target {name!r}; known: {', '.join(TARGETS)}")
    return found
