"""cutec/dtypes.py: every row agrees with itself, and every element type cutec names has a row."""

from __future__ import annotations

import pytest

from cutec.atoms.copy import copy_atoms
from cutec.atoms.mma import mma_atoms
from cutec.atoms.tma import TMA_DTYPE_OF
from cutec.dtypes import (
    DTYPES,
    REGISTER_PREFIX,
    UnknownDTypeError,
    dtype,
    dtype_of_ir,
    numpy_dtype,
    register_class,
)
from cutec.ir import types as T
from cutec.ir.parser import Parser

# Bits of each register class.
_CLASS_BITS = {"pred": 1, "b16": 16, "b32": 32, "b64": 64, "f32": 32, "f64": 64}


@pytest.mark.parametrize("d", DTYPES.values(), ids=str)
def test_bits_match_numpy_itemsize(d) -> None:
    if d.numpy is None:
        with pytest.raises(UnknownDTypeError, match="numpy has no 128-bit type"):
            numpy_dtype(d)
        return
    assert numpy_dtype(d).itemsize * 8 == d.bits


@pytest.mark.parametrize("d", DTYPES.values(), ids=str)
def test_register_class_holds_the_value(d) -> None:
    assert d.reg in REGISTER_PREFIX
    width = _CLASS_BITS[d.reg]
    if d.reg == "pred":
        assert d.ptx == "pred" and d.llvm == "i1"
    elif d.bits <= width:
        # A float register only for its own type; 8-bit values sit in 16-bit registers.
        assert d.reg[0] == "b" or d.reg == d.ptx
        assert width == max(d.bits, 16)
    else:
        assert d.bits % width == 0  # u128: four b32 registers
    assert register_class(d.ptx) == d.reg


@pytest.mark.parametrize("d", DTYPES.values(), ids=str)
def test_ir_type_round_trips(d) -> None:
    if d.ir is None:
        with pytest.raises(UnknownDTypeError, match="no IR type"):
            T.ir_type(d)
        return
    t = T.ir_type(d)
    assert str(t) == d.ir
    assert Parser(d.ir, "<t>").parse_type() == t
    assert T.dtype_of(t) is d
    assert T.bit_width(t) == (1 if d.ptx == "pred" else d.bits)


def test_llvm_integer_types_have_the_storage_width() -> None:
    for d in DTYPES.values():
        if d.llvm.startswith("i") and d.ptx != "pred":
            assert d.llvm == f"i{d.bits}", d


def test_aliases_name_one_row() -> None:
    names = [n for d in DTYPES.values() for n in (d.name, *d.aliases)]
    assert len(names) == len(set(names))
    assert dtype("half") is DTYPES["f16"]
    assert dtype("uint32_t").bits == 32
    assert dtype_of_ir("f8E4M3FN") is DTYPES["e4m3"]


def test_every_atom_element_type_has_a_row() -> None:
    for atom in mma_atoms().values():
        for name in (atom.a_type, atom.b_type, atom.c_type, atom.d_type):
            assert dtype(name).name == name
    for name in TMA_DTYPE_OF:
        assert dtype(name).name == name


def test_every_template_register_type_has_a_class() -> None:
    types = {op.ptx_type for a in mma_atoms().values() for op in a.ptx.operands}
    types |= {op.ptx_type for a in copy_atoms() for _, t in a.templates for op in t.operands}
    for ptx_type in types:
        assert register_class(ptx_type) in REGISTER_PREFIX


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(UnknownDTypeError, match=r"unknown element type 'f12'; known: f64, f32"):
        dtype("f12")
    with pytest.raises(UnknownDTypeError, match="IR type index is no element type; known: f64"):
        dtype_of_ir("index")
    with pytest.raises(UnknownDTypeError, match="PTX type 'x9'; known: b128, b16, b32"):
        register_class("x9")
