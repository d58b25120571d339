"""A structural check of an ELF object before MCJIT's run-time linker reads it.

LLVM's run-time linker (RuntimeDyld) trusts its input: another format, another
machine, a table that runs past the end or a relocation it does not implement
ends the process (``LLVM ERROR: Invalid ELF class`` and SIGABRT) instead of
raising. `problem` reads what the linker will read (the header, the section
table, the symbol and string tables, every relocation) and says what is wrong,
so that `cutec.cpu.native` hands LLVM only objects shaped like those LLVM
writes for this host. It is a check of shape, not of intent: which objects may
be loaded at all is the object cache's business (its directory and the entry's
record of the object, cutec.runtime.cache.CpuObjects).
"""

from __future__ import annotations

import struct

import numpy as np

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
_SECTION = np.dtype(
    [("name", "<u4"), ("type", "<u4"), ("flags", "<u8"), ("addr", "<u8"), ("offset", "<u8"),
     ("size", "<u8"), ("link", "<u4"), ("info", "<u4"), ("align", "<u8"), ("entsize", "<u8")]
)  # fmt: skip
_SYMBOL = np.dtype(
    [("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
     ("size", "<u8")]
)  # fmt: skip
_RELA = np.dtype([("offset", "<u8"), ("info", "<u8"), ("addend", "<i8")])

_NULL, _PROGBITS, _SYMTAB, _STRTAB, _RELA_TYPE = 0, 1, 2, 3, 4
# The section types of the warp code's objects (.eh_frame is X86_64_UNWIND on x86-64);
# not NOBITS, whose size, which no bytes of the file back, LLVM would allocate.
_SECTION_TYPES = frozenset({_NULL, _PROGBITS, _SYMTAB, _STRTAB, _RELA_TYPE, 0x70000001})
_SHN_ABS = 0xFFF1  # a symbol's absolute value (SHN_UNDEF, 0, is in range)
# The section flags of the warp code's objects: write, alloc, exec, merge, strings,
# info link, link order, x86-64's large. Not TLS or compressed, which LLVM's run-time
# linker cannot load.
_FLAGS = 0x1 | 0x2 | 0x4 | 0x10 | 0x20 | 0x40 | 0x80 | 0x10000000
_ALLOC = 0x2
_MAX_SECTIONS = 1 << 12
# What the warp code may call by name: the C library's functions that LLVM lowers the
# math intrinsics it declares (cutec.cpu.codegen_ops) and memory intrinsics to.
_EXTERNAL = frozenset({b"exp", b"exp2", b"log", b"log2", b"pow", b"memcpy", b"memmove", b"memset"})
_MAX_ALIGN = 1 << 12

# Per host architecture (the first part of LLVM's triple): the ELF machine, and the
# relocations the warp code's objects use (large code model: 64-bit absolute and
# PC-relative ones, which cannot overflow), each with the bytes it writes. Other
# hosts do not reuse object code (docs/runtime.md).
_MACHINES: dict[str, tuple[int, dict[int, int]]] = {
    "x86_64": (62, {1: 8, 24: 8}),  # R_X86_64_64, R_X86_64_PC64
}


def problem(code: bytes, arch: str) -> str | None:
    """What is wrong with `code` as a relocatable object for `arch` (None: nothing)."""
    if arch not in _MACHINES:
        return f"no object check for {arch} hosts"
    machine, relocations = _MACHINES[arch]
    if len(code) < _HEADER.size or code[:4] != b"\x7fELF":
        return "not an ELF object"
    ident, kind, e_machine, version, _, _, shoff, _, ehsize, _, _, shentsize, shnum, shstrndx = (
        _HEADER.unpack_from(code)
    )
    if ident[4:7] != b"\x02\x01\x01":
        return "not a 64-bit little-endian ELF object"
    if (kind, e_machine, version, ehsize) != (1, machine, 1, _HEADER.size):
        return f"not a relocatable object for machine {machine}"
    if shentsize != _SECTION.itemsize or not 0 < shnum <= _MAX_SECTIONS or shstrndx >= shnum:
        return "a bad section table"
    if shoff < _HEADER.size or shoff + shnum * shentsize > len(code):
        return "a section table outside the object"
    sections = np.frombuffer(code, _SECTION, shnum, shoff)
    return _sections_problem(code, sections, shstrndx) or _tables_problem(
        code, sections, relocations
    )


def _sections_problem(code: bytes, sections: np.ndarray, shstrndx: int) -> str | None:
    for i, s in enumerate(sections):
        if int(s["type"]) not in _SECTION_TYPES:
            return f"section {i} of type {int(s['type']):#x}"
        if int(s["type"]) != _NULL and int(s["offset"]) + int(s["size"]) > len(code):
            return f"section {i} outside the object"
        align, flags = int(s["align"]), int(s["flags"])
        # LLVM asserts that an alignment is a power of 2 (or 0, not for what it loads).
        aligned = align & (align - 1) == 0 and align <= _MAX_ALIGN and (align or not flags & _ALLOC)
        if int(s["link"]) >= len(sections) or not aligned or flags & ~_FLAGS:
            return f"section {i}: a bad link, alignment or flags"
    for i, s in enumerate(sections):
        end = int(s["offset"]) + int(s["size"])
        if int(s["type"]) == _STRTAB and (int(s["size"]) == 0 or code[end - 1] != 0):
            return f"section {i}: a string table without its final NUL"
    names = sections[shstrndx]
    if int(names["type"]) != _STRTAB or not (sections["name"] < names["size"]).all():
        return "bad section names"
    return None


def _entries(code: bytes, section: np.void, dtype: np.dtype) -> np.ndarray | None:
    """A table section's entries, or None where its entry size does not fit."""
    size, entsize = int(section["size"]), int(section["entsize"])
    if entsize != dtype.itemsize or size % entsize:
        return None
    return np.frombuffer(code, dtype, size // entsize, int(section["offset"]))


def _tables_problem(code: bytes, sections: np.ndarray, relocations: dict[int, int]) -> str | None:
    """Symbols name strings of their string table and sections that exist; relocations
    are of known types, of symbols that exist, at offsets inside their section."""
    symbols: dict[int, np.ndarray] = {}
    for i, s in enumerate(sections):
        if int(s["type"]) != _SYMTAB:
            continue
        table = _entries(code, s, _SYMBOL)
        strings = sections[int(s["link"])]
        if table is None or int(strings["type"]) != _STRTAB:
            return f"section {i}: a bad symbol table"
        in_range = (table["shndx"] < len(sections)) | (table["shndx"] == _SHN_ABS)
        if not (table["name"] < strings["size"]).all() or not in_range.all():
            return f"section {i}: a symbol outside its tables"
        # LLVM looks an undefined name up in the process (and aborts where it is not
        # there): the warp code calls only the C library's functions of `_EXTERNAL`.
        start = int(strings["offset"])
        for at in table["name"][1:][table["shndx"][1:] == 0]:
            name = code[start + int(at) : code.index(b"\0", start + int(at))]
            if name not in _EXTERNAL:
                return f"section {i}: the undefined symbol {name[:80]!r}"
        # Types notype, object, func, section, file; bindings local, global, weak (not
        # common or TLS symbols, which LLVM's run-time linker allocates itself).
        if not ((table["info"] & 0xF <= 4) & (table["info"] >> 4 <= 2)).all():
            return f"section {i}: a symbol of a kind the warp code has none of"
        symbols[i] = table
    for i, s in enumerate(sections):
        if int(s["type"]) != _RELA_TYPE:
            continue
        table = _entries(code, s, _RELA)
        target = int(s["info"])
        if table is None or int(s["link"]) not in symbols or not 0 < target < len(sections):
            return f"section {i}: a bad relocation table"
        types = table["info"] & 0xFFFFFFFF
        known = np.isin(types, list(relocations))
        if not known.all():
            return f"section {i}: relocation type {int(types[~known][0])}"
        widths = np.zeros(max(relocations) + 1, np.uint64)
        widths[list(relocations)] = list(relocations.values())
        size = sections[target]["size"]
        inside = (table["offset"] <= size) & (table["offset"] + widths[types] <= size)
        if not (table["info"] >> 32 < len(symbols[int(s["link"])])).all() or not inside.all():
            return f"section {i}: a relocation outside its symbols or section"
    return None
