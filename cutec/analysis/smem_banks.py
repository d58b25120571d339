"""The shared-memory bank model: how many wavefronts one warp request takes.

Shared memory is 32 banks of 4-byte words; word ``w`` (bytes ``4w .. 4w+3``
of the CTA's shared window) lives in bank ``w % 32``. Each cycle, a bank
delivers one word to any number of lanes, so one *wavefront* serves at most
one distinct word per bank and at most 128 bytes.

A warp's request (one ``ld.shared``/``st.shared``/``cp.async``/``ldmatrix``
instruction) is split into *phases* of at most 128 bytes, as the hardware
does:

* accesses of 1, 2 or 4 bytes per lane: the whole warp is one phase;
* 8 bytes: two phases, lanes 0-15 and 16-31;
* 16 bytes: four phases of eight consecutive lanes each;
* ``ldmatrix`` / ``stmatrix``: one phase per 8x8 matrix (lanes ``8m .. 8m+7``
  give the 16-byte rows of matrix ``m``), the 16-byte rule above.

Within a phase, the wavefront count is the maximum over banks of the number of
distinct words the phase's lanes touch in that bank: lanes reading the same
word share it (broadcast), a second word in one bank costs a wavefront more.
A request takes the sum over its phases; the ideal is one wavefront per phase
that has an active lane (``bytes / 128`` for a full warp of 8- and 16-byte
accesses). For 16-byte loads whose lane pairs read the same address, Volta and
later may merge quarter-warps (NVIDIA's forum answer on LDS.128 "uniform
pairs"); the model does not: its count is an upper bound there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

BANKS = 32
BANK_BYTES = 4
WARP_SIZE = 32
PHASE_BYTES = 128  # what one wavefront can deliver: one word from each bank


@dataclass(frozen=True)
class Request:
    """The wavefronts one warp request takes, and the fewest it could."""

    wavefronts: int
    ideal: int

    @property
    def conflicted(self) -> bool:
        return self.wavefronts > self.ideal


def lanes_per_phase(width: int) -> int:
    """How many consecutive lanes form one phase of a `width`-byte access."""
    if width not in (1, 2, 4, 8, 16):
        raise ValueError(f"a shared access moves 1, 2, 4, 8 or 16 bytes per lane, not {width}")
    return WARP_SIZE if width <= BANK_BYTES else PHASE_BYTES // width


def phase_wavefronts(addresses: Iterable[int], width: int) -> int:
    """Wavefronts of one phase: the most distinct words any bank must deliver.

    `addresses` are the byte addresses of the phase's active lanes, each
    aligned to `width`; an access touches the words ``addr // 4 ..
    (addr + width - 1) // 4``.
    """
    words_of_bank: dict[int, set[int]] = defaultdict(set)
    for address in addresses:
        if address % width:
            raise ValueError(f"address {address} is not aligned to its {width}-byte access")
        first, last = address // BANK_BYTES, (address + width - 1) // BANK_BYTES
        for word in range(first, last + 1):
            words_of_bank[word % BANKS].add(word)
    return max((len(words) for words in words_of_bank.values()), default=0)


def request(accesses: Iterable[tuple[int, int]], width: int) -> Request:
    """The wavefronts of one warp request: `accesses` are (lane, byte address) of active lanes."""
    per_phase = lanes_per_phase(width)
    phases: dict[int, list[int]] = defaultdict(list)
    for lane, address in accesses:
        if not 0 <= lane < WARP_SIZE:
            raise ValueError(f"lane {lane} is not in a warp of {WARP_SIZE}")
        phases[lane // per_phase].append(address)
    wavefronts = sum(phase_wavefronts(addrs, width) for addrs in phases.values())
    return Request(wavefronts, len(phases))


def matrix_request(row_addresses: Sequence[int]) -> Request:
    """The wavefronts of one ``ldmatrix``/``stmatrix`` of ``len(row_addresses) / 8`` matrices.

    Lane ``8m + r`` gives the address of row ``r`` (16 bytes) of matrix ``m``
    (PTX ISA, ldmatrix); the other lanes' addresses are not used. Each matrix
    is one phase, so ``.x4`` takes at least 4 wavefronts.
    """
    if len(row_addresses) not in (8, 16, 32):
        raise ValueError(f"x1, x2 or x4 matrices give 8, 16 or 32 rows, not {len(row_addresses)}")
    return request(enumerate(row_addresses), 16)
