"""TMA tensor maps at launch: the recipe in the launch record, the map cache and its
aligned buffers, the encoder's arguments, and (on a GPU) the driver's verdicts against
cutec's own checks (cutec/runtime/tensor_map.py, cutec.ir.signature.TensorMapParam)."""

from __future__ import annotations

import ctypes
import json
import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cutec.atoms.tma import (
    TmaDataType,
    TmaDescriptorError,
    TmaInterleave,
    TmaL2Promotion,
    TmaOobFill,
    TmaSwizzle,
    TmaTensorMap,
)
from cutec.ir.json_read import RecordError
from cutec.ir.signature import KernelSignature, ScalarParam, TensorMapParam, TensorParam
from cutec.runtime import cuda
from cutec.runtime.tensor_map import (
    MAP_ALIGN,
    MAP_BYTES,
    EncodeCall,
    HostTensorMap,
    TensorMapCache,
    TensorMapError,
    driver_arguments,
)

F16 = TmaDataType.FLOAT16

# A batch of column-major M x K f16 matrices, A: f16[M, K, L] : (1, ldA, batch), read in
# 64 x 64 boxes of one matrix: a 3-D map whose box is (64, 64, 1).
TENSOR = TensorParam("A", "f16", ("M", "K", "L"), (1, "ldA", "batch"), 16, "read")
MAP = TensorMapParam(
    "A_map",
    "A",
    F16,
    ("M", "K", "L"),
    ("ldA", "batch"),
    (64, 64, 1),
    (1, 1, 1),
    swizzle=TmaSwizzle.B128,
    l2_promotion=TmaL2Promotion.L2_128B,
)
ABI = (
    ("A", "ptr"),
    ("M", "index"),
    ("K", "index"),
    ("L", "index"),
    ("ldA", "index"),
    ("batch", "index"),
    ("A_map", "tensor_map"),
)
SIGNATURE = KernelSignature("k", (TENSOR, MAP), ABI, ())


def _tile(**kw: Any) -> TmaTensorMap:
    """A column-major 1000 x 512 f16 matrix (ld 1024) in 64 x 64 boxes, 128B-swizzled."""
    args: dict[str, Any] = dict(
        dtype=F16,
        global_dims=(1000, 512),
        global_strides=(2048,),
        box_dims=(64, 64),
        swizzle=TmaSwizzle.B128,
    )
    args.update(kw)
    return TmaTensorMap(**args)


class FakeEncoder:
    """Records each call and returns 128 bytes that name the call's number."""

    def __init__(self) -> None:
        self.calls: list[EncodeCall] = []

    def __call__(self, call: EncodeCall) -> bytes:
        self.calls.append(call)
        return struct.pack("<16Q", *([len(self.calls)] * 16))


# ------------------------------------------------------------------ the recipe in the record
def test_a_recipe_round_trips_through_json() -> None:
    data = json.loads(json.dumps(MAP.to_json()))
    assert data["tensor_map"] == "A_map" and data["swizzle"] == "B128"
    assert TensorMapParam.read(data, "p") == MAP
    back = KernelSignature.from_json(json.loads(json.dumps(SIGNATURE.to_json())))
    assert back == SIGNATURE
    assert back.params[1] == MAP


def test_a_recipe_describes_the_map_at_the_launch_values() -> None:
    desc = MAP.describe({"M": 1000, "K": 500, "L": 3, "ldA": 1024, "batch": 1024 * 512})
    assert desc.global_dims == (1000, 500, 3)
    assert desc.global_strides == (2048, 2048 * 512)  # bytes: elements x 2
    assert desc.box_dims == (64, 64, 1) and desc.swizzle == TmaSwizzle.B128
    assert desc.box_bytes == 64 * 64 * 2
    with pytest.raises(TmaDescriptorError, match=r"global_strides\[0\] = 2002 bytes"):
        MAP.describe({"M": 1000, "K": 500, "L": 3, "ldA": 1001, "batch": 1001 * 500})


def _map_json(**change: Any) -> dict[str, Any]:
    return {**MAP.to_json(), **change}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_map_json(tensor_map="m; import os"), "expected a name"),
        (_map_json(maps="A.B"), "expected a name"),
        (_map_json(dtype="FLOAT128"), "is none of"),
        (_map_json(swizzle=3), "expected a string"),
        (_map_json(swizzle="B256"), "is none of"),
        (_map_json(interleave="B64"), "is none of"),
        (_map_json(l2_promotion="L2_512B"), "is none of"),
        (_map_json(oob_fill="NAN"), "is none of"),
        (_map_json(box=[64, 64, 300]), r"\[1, 256\]"),
        (_map_json(box=[64, 64, True]), "expected an integer"),
        (_map_json(box=[]), "1..5 dims"),
        (
            _map_json(box=[8] * 6, dims=["M"] * 6, strides=["ldA"] * 5, element_strides=[1] * 6),
            "1..5 dims",
        ),
        (_map_json(box=[128, 64, 1]), "spans 128 bytes but the inner box"),
        (_map_json(box=[4, 64, 1]), "multiple of 16 bytes"),
        (_map_json(element_strides=[1, 1]), "element_strides needs 3"),
        (_map_json(element_strides=[1, 9, 1]), r"\[1, 8\]"),
        (_map_json(dims=["M", "K"]), "expected 3 elements"),
        (_map_json(dims=["M", "K", "open('x')"]), "unexpected character"),
        (_map_json(dims=["M", "K", 0]), "expected an integer"),
        (_map_json(strides=["ldA", 1 << 40]), "expected an integer"),
        (_map_json(strides="ldA"), "expected a list"),
        (
            _map_json(
                dtype="UINT8", oob_fill="NAN_REQUEST_ZERO_FMA", box=[128, 64, 1], swizzle="B128"
            ),
            "needs a float dtype",
        ),
    ],
)
def test_a_malformed_recipe_is_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError, match=message):
        TensorMapParam.read(data, "p")


def _signature(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data = json.loads(json.dumps(SIGNATURE.to_json()))
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["params"][1].update(maps="B"), "built from 'B', no pointer parameter"),
        (lambda s: s["params"][1].update(maps="M"), "built from 'M', no pointer parameter"),
        (lambda s: s["params"][1].update(dims=["M", "Q", "L"]), "which no argument gives"),
        (lambda s: s["params"][1].update(strides=["ldA", "batch*Z"]), "which no argument"),
        (lambda s: s["abi"].pop(), "no .param for"),
        (lambda s: s["abi"][-1].__setitem__(1, "ptr"), "is no parameter's"),
        (lambda s: s["abi"][-1].__setitem__(1, "tensormap"), "no scalar type"),
        (
            lambda s: s["params"].append({"scalar": "t", "type": "tensor_map"}),
            "a scalar of type tensor_map",
        ),
        (lambda s: s["params"][1].update(scalar="x"), "not one parameter kind"),
    ],
)
def test_a_signature_with_a_map_is_checked(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    with pytest.raises(RecordError, match=message):
        KernelSignature.from_json(_signature(change))


def test_the_scalar_reader_is_unchanged_by_the_new_kind() -> None:
    assert ScalarParam.read({"scalar": "n", "type": "i32"}, "p") == ScalarParam("n", "i32")


# ------------------------------------------------------------------ the cache and its buffers
def test_the_cache_keeps_one_aligned_map_per_pointer_and_description() -> None:
    encode = FakeEncoder()
    maps = TensorMapCache(encode)
    first = maps.get("k", "A_map", 0x7F0000000000, _tile())
    assert first.address % MAP_ALIGN == 0 and MAP_ALIGN == 128
    assert first.data() == struct.pack("<16Q", *[1] * 16)
    assert ctypes.string_at(first.address, MAP_BYTES) == first.data()
    # The same key (an equal description built anew) is the same buffer, not re-encoded.
    assert maps.get("k", "A_map", 0x7F0000000000, _tile()) is first
    assert len(encode.calls) == 1
    # Each part of the key makes a map of its own.
    others = [
        (0x7F0000000100, _tile()),
        (0x7F0000000000, _tile(dtype=TmaDataType.BFLOAT16)),
        (0x7F0000000000, _tile(global_dims=(1000, 511))),
        (0x7F0000000000, _tile(global_strides=(4096,))),
        (0x7F0000000000, _tile(box_dims=(64, 32))),
        (0x7F0000000000, _tile(element_strides=(1, 2))),
        (0x7F0000000000, _tile(swizzle=TmaSwizzle.NONE)),
        (0x7F0000000000, _tile(l2_promotion=TmaL2Promotion.L2_256B)),
        (0x7F0000000000, _tile(oob_fill=TmaOobFill.NAN_REQUEST_ZERO_FMA)),
        (
            0x7F0000000000,
            _tile(
                global_dims=(1000, 16, 4),
                global_strides=(2048, 32768),
                box_dims=(64, 16, 1),
                interleave=TmaInterleave.B16,
                swizzle=TmaSwizzle.NONE,
            ),
        ),
    ]
    buffers = [maps.get("k", "A_map", pointer, desc) for pointer, desc in others]
    assert len(encode.calls) == 1 + len(others) == len(maps)
    assert len({b.address for b in [first, *buffers]}) == 1 + len(others)
    assert all(b.address % MAP_ALIGN == 0 for b in buffers)
    assert [b.data()[0] for b in buffers] == list(range(2, 2 + len(others)))
    assert maps.get("k", "A_map", 0x7F0000000000, _tile()) is first


def test_buffers_are_aligned_whatever_ctypes_gives() -> None:
    for n in range(64):
        m = HostTensorMap(bytes(range(n, n + MAP_BYTES)))
        assert m.address % 128 == 0 and m.data() == bytes(range(n, n + MAP_BYTES))


def test_the_cache_drops_its_oldest_map_past_its_capacity() -> None:
    encode = FakeEncoder()
    maps = TensorMapCache(encode, capacity=2)
    a = maps.get("k", "m", 0x1000, _tile())
    maps.get("k", "m", 0x2000, _tile())
    maps.get("k", "m", 0x3000, _tile())
    assert len(maps) == 2 and len(encode.calls) == 3
    assert maps.get("k", "m", 0x1000, _tile()) is not a  # encoded again
    assert len(encode.calls) == 4


def test_the_encoder_gets_the_drivers_values() -> None:
    encode = FakeEncoder()
    desc = _tile(
        dtype=TmaDataType.BFLOAT16,
        global_dims=(1000, 512, 7),
        global_strides=(2048, 2048 * 512),
        box_dims=(32, 64, 1),
        element_strides=(1, 2, 1),
        swizzle=TmaSwizzle.B64,
        l2_promotion=TmaL2Promotion.L2_256B,
        oob_fill=TmaOobFill.NAN_REQUEST_ZERO_FMA,
    )
    TensorMapCache(encode).get("k", "B_map", 0xABC00, desc)
    (call,) = encode.calls
    assert call == EncodeCall(
        data_type=9,
        address=0xABC00,
        global_dims=(1000, 512, 7),
        global_strides=(2048, 2048 * 512),
        box_dims=(32, 64, 1),
        element_strides=(1, 2, 1),
        interleave=0,
        swizzle=2,
        l2_promotion=3,
        oob_fill=1,
    )
    assert call.rank == 3


def test_the_drivers_arguments_are_its_enum_members() -> None:
    cu = pytest.importorskip("cuda.bindings.driver")
    desc = _tile(
        dtype=TmaDataType.TFLOAT32,
        global_dims=(1000, 512),
        global_strides=(4096,),
        box_dims=(32, 8),
        swizzle=TmaSwizzle.B128,
        l2_promotion=TmaL2Promotion.L2_64B,
        oob_fill=TmaOobFill.NAN_REQUEST_ZERO_FMA,
    )
    args = driver_arguments(EncodeCall.of(desc, 0x10000), cu)
    arrays = ((3, cu.cuuint64_t), (4, cu.cuuint64_t), (5, cu.cuuint32_t), (6, cu.cuuint32_t))
    assert all(type(x) is kind for i, kind in arrays for x in args[i])
    assert [[int(x) for x in args[i]] for i, _ in arrays] == [[1000, 512], [4096], [32, 8], [1, 1]]
    assert args[:3] + args[7:] == (
        cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
        2,
        0x10000,
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
    )
    # The bindings take them: their type conversions run before the driver is looked up,
    # so without one the call fails only for want of the library.
    try:
        cu.cuTensorMapEncodeTiled(*args)
    except TypeError as e:
        pytest.fail(f"cuda.bindings refused the arguments: {e}")
    except Exception:  # no libcuda here; on a GPU machine, a CUresult (uninitialised)
        pass
    # Every member cutec models is the driver's of the same name and value.
    for ours, theirs, prefix in (
        (TmaDataType, cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_"),
        (TmaInterleave, cu.CUtensorMapInterleave, "CU_TENSOR_MAP_INTERLEAVE_"),
        (TmaSwizzle, cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_"),
        (TmaL2Promotion, cu.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_"),
        (TmaOobFill, cu.CUtensorMapFloatOOBfill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_"),
    ):
        for member in ours:
            value = member.cu_value if isinstance(member, TmaDataType) else int(member)
            name = {"B16": "16B", "B32": "32B", "B64": "64B", "B128": "128B"}.get(
                member.name, member.name
            )
            assert theirs(value).name == prefix + name, member


def test_a_misaligned_base_is_an_error_naming_the_parameter() -> None:
    encode = FakeEncoder()
    with pytest.raises(TensorMapError, match=r"k: parameter 'A_map': .*0x1008 must be 16-byte"):
        TensorMapCache(encode).get("k", "A_map", 0x1008, _tile())
    assert encode.calls == []


def test_a_driver_error_names_the_parameter() -> None:
    def refuse(call: EncodeCall) -> bytes:
        raise cuda.CudaError("encoding a tensor map: CUDA_ERROR_INVALID_VALUE: bad", "E")

    with pytest.raises(
        TensorMapError,
        match=r"k: parameter 'A_map': the driver refused its "
        r"tensor map \(dims \(1000, 512\).*INVALID_VALUE",
    ) as e:
        TensorMapCache(refuse).get("k", "A_map", 0x1000, _tile())
    assert e.value.code == "E"
    assert isinstance(e.value, RuntimeError)


def test_no_driver_is_said_as_such() -> None:
    def absent(call: EncodeCall) -> bytes:
        raise cuda.NoDriverError("no CUDA driver was found")

    with pytest.raises(cuda.NoDriverError, match="no CUDA driver"):
        TensorMapCache(absent).get("k", "A_map", 0x1000, _tile())


def test_a_recipe_whose_view_breaks_a_rule_names_the_parameter() -> None:
    maps = TensorMapCache(FakeEncoder())
    values = {"M": 1000, "K": 500, "L": 3, "ldA": 1024, "batch": 1024 * 500}
    built = maps.for_param("k", MAP, 0x10000, values)
    assert built is maps.for_param("k", MAP, 0x10000, dict(values))
    with pytest.raises(TensorMapError, match=r"k: parameter 'A_map': TMA global_strides\[0\]"):
        maps.for_param("k", MAP, 0x10000, {**values, "ldA": 1001})


# ------------------------------------------------------------------ the driver agrees (GPU)
# (description arguments, whether cutec's checks accept them), each encoded by the driver.
_GPU_CASES: list[tuple[str, dict[str, Any], int, bool]] = [
    ("f16 tile, 128B swizzle", {}, 0, True),
    (
        "f32 3-D batch slice",
        dict(
            dtype=TmaDataType.FLOAT32,
            global_dims=(1000, 512, 4),
            global_strides=(4096, 4096 * 512),
            box_dims=(32, 64, 1),
        ),
        0,
        True,
    ),
    (
        "bf16 no swizzle, 256 box",
        dict(dtype=TmaDataType.BFLOAT16, box_dims=(256, 8), swizzle=TmaSwizzle.NONE),
        0,
        True,
    ),
    (
        "u8 64B swizzle, element strides",
        dict(
            dtype=TmaDataType.UINT8,
            box_dims=(64, 16),
            element_strides=(1, 2),
            swizzle=TmaSwizzle.B64,
        ),
        0,
        True,
    ),
    (
        "1-D",
        dict(global_dims=(4096,), global_strides=(), box_dims=(128,), swizzle=TmaSwizzle.NONE),
        0,
        True,
    ),
    (
        "5-D",
        dict(
            global_dims=(64, 4, 4, 4, 4),
            global_strides=(128, 512, 2048, 8192),
            box_dims=(64, 2, 2, 2, 2),
        ),
        0,
        True,
    ),
    ("box > 256", dict(box_dims=(64, 257)), 0, False),
    ("inner box 24 bytes", dict(box_dims=(12, 64), swizzle=TmaSwizzle.NONE), 0, False),
    ("128B swizzle, inner box 256 bytes", dict(box_dims=(128, 64)), 0, False),
    ("base 8 bytes off 16", {}, 8, False),
    ("stride 2008 bytes", dict(global_strides=(2008,)), 0, False),
    (
        "rank 6",
        dict(
            global_dims=(64, 2, 2, 2, 2, 2),
            global_strides=(128, 256, 512, 1024, 2048),
            box_dims=(64, 1, 1, 1, 1, 1),
            element_strides=(1,) * 6,
        ),
        0,
        False,
    ),
]


def _raw_call(kw: dict[str, Any], address: int) -> EncodeCall:
    """The driver's arguments for a description, checked by nobody (not `TmaTensorMap`)."""
    t = _tile().__dict__ | kw
    rank = len(t["global_dims"])
    return EncodeCall(
        t["dtype"].cu_value,
        address,
        t["global_dims"],
        t["global_strides"],
        t["box_dims"],
        t.get("element_strides") if "element_strides" in kw else (1,) * rank,
        int(t["interleave"]),
        int(t["swizzle"]),
        int(t["l2_promotion"]),
        int(t["oob_fill"]),
    )


@pytest.fixture(scope="module")
def hopper() -> Iterator[int]:
    """A device allocation (its address) on a GPU of compute capability 9.0 or later."""
    try:
        device = cuda.device(0)
    except cuda.NoDriverError as e:
        pytest.skip(f"no usable GPU: {e}")
    if device.capability < (9, 0):
        pytest.skip("tensor maps need compute capability 9.0 or later")
    cu = cuda.driver()
    memory = cuda.check(cu.cuMemAlloc(1 << 24), "allocating device memory")
    yield int(memory)
    cuda.check(cu.cuMemFree(memory), "freeing device memory")


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("kw", "offset", "accepted"), [c[1:] for c in _GPU_CASES], ids=[c[0] for c in _GPU_CASES]
)
def test_the_driver_rejects_what_cutec_rejects(
    hopper: int, kw: dict[str, Any], offset: int, accepted: bool
) -> None:
    from cutec.runtime.tensor_map import encode_with_driver

    call = _raw_call(kw, hopper + offset)
    try:
        desc = _tile(**kw)
        desc.check_global_address(call.address)
        cutec_accepts = True
    except TmaDescriptorError:
        cutec_accepts = False
    assert cutec_accepts == accepted
    try:
        data = encode_with_driver(call)
        driver_accepts = True
    except cuda.CudaError as e:
        assert e.code == "CUDA_ERROR_INVALID_VALUE", e
        driver_accepts = False
    except ValueError as e:  # cuda.bindings refuses arrays longer than 5 before the driver
        assert "must be <= 5" in str(e), e
        driver_accepts = False
    assert driver_accepts == accepted
    if accepted:
        assert len(data) == MAP_BYTES and data != bytes(MAP_BYTES)
        built = TensorMapCache().get("k", "A_map", call.address, desc)
        assert built.address % MAP_ALIGN == 0 and built.data() == data
