"""TMA tensor-map descriptions: sizes, CuTe swizzle correspondence, the driver's rules."""

from __future__ import annotations

import pytest

from cutec.atoms.copy import copy_atom
from cutec.atoms.tma import (
    TMA_DTYPE_OF,
    TmaDataType,
    TmaDescriptorError,
    TmaInterleave,
    TmaOobFill,
    TmaSwizzle,
    TmaTensorMap,
)

F16 = TmaDataType.FLOAT16


def _tile(**kw) -> TmaTensorMap:
    """A row-major 1024 x 512 f16 matrix read in 64 x 128 boxes, 128-byte swizzled."""
    args = dict(
        dtype=F16,
        global_dims=(512, 1024),
        global_strides=(1024,),
        box_dims=(64, 128),
        swizzle=TmaSwizzle.B128,
    )
    args.update(kw)
    return TmaTensorMap(**args)


def test_box_sizes_and_the_copy_atom_they_select() -> None:
    tmap = _tile()
    assert tmap.rank == 2
    assert tmap.element_strides == (1, 1)
    assert tmap.box_elements == 64 * 128
    assert tmap.box_bytes == 16384  # what expect_tx announces
    atom = copy_atom(f"SM90_TMA_LOAD_{tmap.rank}D", bits=tmap.box_bits)
    assert str(atom.src_layout) == "(_1,_131072):(_0,_1)"


def test_element_strides_shrink_the_box() -> None:
    tmap = _tile(box_dims=(64, 127), element_strides=(1, 2))
    assert tmap.box_elements == 64 * 64  # ceil(127 / 2) rows


def test_enum_values_are_the_drivers() -> None:
    assert TmaDataType.FLOAT16.cu_value == 6 and TmaDataType.BFLOAT16.cu_value == 9
    assert TmaDataType.TFLOAT32.cu_value == 11 and TmaDataType.FLOAT32.nbytes == 4
    assert int(TmaSwizzle.B128) == 3 and int(TmaInterleave.B32) == 2
    assert TMA_DTYPE_OF["bf16"] is TmaDataType.BFLOAT16


def test_swizzle_modes_are_cute_swizzles_on_bytes() -> None:
    assert TmaSwizzle.B128.cute_swizzle == (3, 4, 3)
    assert TmaSwizzle.B32.cute_swizzle == (1, 4, 3)
    assert TmaSwizzle.from_cute(2, 4, 3) is TmaSwizzle.B64
    with pytest.raises(TmaDescriptorError, match=r"Swizzle<3,3,3> has no TMA mode"):
        TmaSwizzle.from_cute(3, 3, 3)


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        (
            dict(global_dims=(8,) * 6, global_strides=(16,) * 5, box_dims=(8,) * 6),
            "rank must be 1..5, got 6",
        ),
        (dict(global_strides=()), "expected 1 values, got 0"),
        (
            dict(global_strides=(1000,)),
            "global_strides[0] = 1000 bytes must be a multiple of 16",
        ),
        (dict(box_dims=(64, 512)), "box_dims[1] = 512 must be in 1..256"),
        (dict(box_dims=(4, 128), swizzle=TmaSwizzle.NONE), "inner box dimension is 8 bytes"),
        (dict(box_dims=(128, 128)), "spans 128 bytes but the inner box dimension is 256"),
        (dict(element_strides=(1, 9)), "element_strides[1] = 9 must be in 1..8"),
        (dict(global_dims=(0, 1024)), "global_dims[0] = 0"),
        (dict(interleave=TmaInterleave.B16), "interleaved TMA needs rank >= 3"),
        (
            dict(
                dtype=TmaDataType.INT32,
                box_dims=(32, 128),
                oob_fill=TmaOobFill.NAN_REQUEST_ZERO_FMA,
            ),
            "NaN out-of-bounds fill needs a float dtype",
        ),
    ],
)
def test_driver_rules_are_checked(kw: dict, needle: str) -> None:
    with pytest.raises(TmaDescriptorError) as info:
        _tile(**kw)
    assert needle in str(info.value)


def test_global_address_alignment() -> None:
    tmap = _tile()
    tmap.check_global_address(0x7F0000001000)
    with pytest.raises(TmaDescriptorError, match="16-byte aligned"):
        tmap.check_global_address(0x7F0000001008)
