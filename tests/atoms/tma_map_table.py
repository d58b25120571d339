"""A table of tensor-map descriptions, valid ones and ones breaking each rule that
cutec/atoms/tma.py checks, each with cutec's verdict: None where `TmaTensorMap` (and its
global-address check) accepts it, else a fragment of the message it rejects it with.

tests/atoms/test_tma_map_table.py asserts cutec's verdicts on the CPU;
tests/gpu/test_tma_driver_rules_gpu.py asserts that ``cuTensorMapEncodeTiled`` accepts
exactly the descriptions cutec accepts. Rows marked *unsure* are cases the driver's
documentation does not settle; their verdict is cutec's, and the GPU test says which
side to fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.atoms.tma import (
    TmaDataType,
    TmaDescriptorError,
    TmaInterleave,
    TmaL2Promotion,
    TmaOobFill,
    TmaSwizzle,
    TmaTensorMap,
)
from cutec.runtime.tensor_map import EncodeCall

F16, F32, S32, U8 = TmaDataType.FLOAT16, TmaDataType.FLOAT32, TmaDataType.INT32, TmaDataType.UINT8
I16, I32 = TmaInterleave.B16, TmaInterleave.B32
NAN = TmaOobFill.NAN_REQUEST_ZERO_FMA


@dataclass(frozen=True)
class MapCase:
    """One description: the arguments of ``cuTensorMapEncodeTiled`` (the tensor at
    `offset` bytes past a 256-byte aligned base) and cutec's verdict, `rejects`."""

    name: str
    dtype: TmaDataType
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    rejects: str | None = None
    element_strides: tuple[int, ...] | None = None
    interleave: TmaInterleave = TmaInterleave.NONE
    swizzle: TmaSwizzle = TmaSwizzle.NONE
    l2: TmaL2Promotion = TmaL2Promotion.NONE
    fill: TmaOobFill = TmaOobFill.NONE
    offset: int = 0

    def verdict(self, base: int) -> str | None:
        """cutec's: None if it accepts the map over the tensor at `base` + `offset`, else
        its message."""
        try:
            desc = TmaTensorMap(
                self.dtype,
                self.dims,
                self.strides,
                self.box,
                self.element_strides,
                self.interleave,
                self.swizzle,
                self.l2,
                self.fill,
            )
            desc.check_global_address(base + self.offset)
        except TmaDescriptorError as e:
            return str(e)
        return None

    def call(self, base: int) -> EncodeCall:
        """The driver call, built from the raw arguments (not through `TmaTensorMap`,
        which refuses the invalid ones)."""
        steps = self.element_strides or (1,) * len(self.dims)
        return EncodeCall(
            self.dtype.cu_value,
            base + self.offset,
            self.dims,
            self.strides,
            self.box,
            steps,
            int(self.interleave),
            int(self.swizzle),
            int(self.l2),
            int(self.fill),
        )


def _2d(name: str, rejects: str | None = None, **kw: object) -> MapCase:
    """A 64 x 32 f32 matrix (256-byte rows) with a (32, 8) box, changed by `kw`."""
    fields: dict = {"dtype": F32, "dims": (64, 32), "strides": (256,), "box": (32, 8)}
    fields.update(kw)
    return MapCase(name, rejects=rejects, **fields)


def _3d(name: str, rejects: str | None = None, **kw: object) -> MapCase:
    """A 64 x 8 x 8 f16 tensor (256-byte rows) with a (32, 8, 2) box, changed by `kw`."""
    fields: dict = {"dtype": F16, "dims": (64, 8, 8), "strides": (256, 2048), "box": (32, 8, 2)}
    fields.update(kw)
    return MapCase(name, rejects=rejects, **fields)


# fmt: off
CASES: list[MapCase] = [
    # --- valid
    _2d("f32 2-D"),
    _2d("f16 inner box of 16 bytes", dtype=F16, box=(8, 8)),
    _2d("u8 1-D", dtype=U8, dims=(1024,), strides=(), box=(256,)),
    MapCase("rank 5", F32, (8, 4, 4, 4, 4), (32, 128, 512, 2048), (8, 2, 2, 2, 2)),
    _2d("box dims of 256", dtype=U8, dims=(256, 256), box=(256, 256)),
    _2d("element stride 8", element_strides=(1, 8)),
    _2d("element stride 2 in dim 0 (unsure)", element_strides=(2, 1)),
    _2d("128B swizzle, 128-byte inner box", swizzle=TmaSwizzle.B128),
    _2d("64B swizzle, 64-byte inner box", box=(16, 8), swizzle=TmaSwizzle.B64),
    _2d("32B swizzle, 32-byte inner box", box=(8, 8), swizzle=TmaSwizzle.B32),
    _2d("NaN fill for f16", dtype=F16, box=(16, 8), fill=NAN),
    _2d("NaN fill for f32", fill=NAN),
    _2d("L2 promotion 256B", l2=TmaL2Promotion.L2_256B),
    _2d("extent 2^32", dtype=U8, dims=(1 << 32, 1), strides=(1 << 32,), box=(32, 1)),
    _2d("stride just below 2^40", strides=((1 << 40) - 16,)),
    _2d("stride smaller than a row (unsure)", strides=(16,)),
    _3d("interleave 16B, rank 3 (unsure)", interleave=I16),
    _3d("interleave 32B with 32B swizzle (unsure)", interleave=I32, swizzle=TmaSwizzle.B32),
    _3d("interleave 32B without 32B swizzle", interleave=I32),
    _2d("stride 0 (a broadcast dimension)", strides=(0,)),
    _2d("address 16-byte aligned", offset=16),
    # --- rank
    MapCase("rank 0", F32, (), (), (), rejects="rank must be 1..5, got 0"),
    MapCase("rank 6", F32, (8, 2, 2, 2, 2, 2), (32, 64, 128, 256, 512), (8, 2, 2, 2, 2, 2),
            rejects="rank must be 1..5, got 6"),
    # --- box
    _2d("box dim 0", box=(32, 0), rejects="box_dims[1] = 0 must be in 1..256"),
    _2d("box dim 257", dtype=U8, dims=(512, 32), box=(16, 257),
        rejects="box_dims[1] = 257 must be in 1..256"),
    _2d("inner box of 12 bytes", box=(3, 8), rejects="inner box dimension is 12 bytes"),
    _2d("inner box of 8 bytes", dtype=F16, box=(4, 8), rejects="inner box dimension is 8 bytes"),
    _3d("interleave 16B, 8-byte inner box", box=(4, 8, 2), interleave=I16,
        rejects="inner box dimension is 8 bytes"),
    _2d("128B swizzle, 256-byte inner box", box=(64, 8), swizzle=TmaSwizzle.B128,
        rejects="spans 128 bytes but the inner box dimension is 256"),
    _2d("64B swizzle, 128-byte inner box", swizzle=TmaSwizzle.B64,
        rejects="spans 64 bytes but the inner box dimension is 128"),
    _2d("32B swizzle, 64-byte inner box", box=(16, 8), swizzle=TmaSwizzle.B32,
        rejects="spans 32 bytes but the inner box dimension is 64"),
    # --- the tensor
    _2d("stride not a multiple of 16", strides=(264,),
        rejects="global_strides[0] = 264 bytes must be a multiple of 16"),
    _2d("stride 8", strides=(8,), rejects="global_strides[0] = 8 bytes"),
    _2d("stride 2^40", strides=(1 << 40,), rejects="must be a multiple of 16 below 2^40"),
    _2d("extent 0", dims=(64, 0), rejects="global_dims[1] = 0 must be in 1..2^32"),
    _2d("extent 2^32 + 1", dtype=U8, dims=((1 << 32) + 1, 1), strides=(1 << 33,), box=(32, 1),
        rejects="global_dims[0] = 4294967297 must be in 1..2^32"),
    _2d("address 8 bytes off 16", offset=8, rejects="must be 16-byte aligned"),
    # --- element strides
    _2d("element stride 0", element_strides=(1, 0), rejects="element_strides[1] = 0 must be"),
    _2d("element stride 9", element_strides=(1, 9), rejects="element_strides[1] = 9 must be"),
    # --- fill
    _2d("NaN fill for s32", dtype=S32, fill=NAN, rejects="NaN out-of-bounds fill needs a float"),
    _2d("NaN fill for u8", dtype=U8, box=(64, 8), fill=NAN,
        rejects="NaN out-of-bounds fill needs a float"),
    # --- interleave
    _2d("interleave 16B, rank 2", interleave=I16, rejects="interleaved TMA needs rank >= 3"),
    _3d("interleave 32B, stride a multiple of 16 not 32", strides=(272, 2176), interleave=I32,
        swizzle=TmaSwizzle.B32, rejects="global_strides[0] = 272 bytes must be a "
                                        "multiple of 32"),
    _3d("interleave 32B, address 16 bytes off 32", interleave=I32, swizzle=TmaSwizzle.B32,
        offset=16, rejects="must be 32-byte aligned"),
]
# fmt: on
