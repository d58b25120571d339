"""On a Hopper GPU: ``cuTensorMapEncodeTiled`` accepts exactly the tensor-map
descriptions cutec's `TmaTensorMap` accepts (with its global-address check), for every
row of tests/atoms/tma_map_table.py (tests/atoms/test_tma_map_table.py checks cutec's
verdicts without a GPU). A failure names the row and both verdicts: fix the side that
is wrong (cutec/atoms/tma.py, or the row's verdict where the driver is right)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cutec.runtime import cuda
from cutec.runtime.tensor_map import encode_with_driver
from tests.atoms.tma_map_table import CASES, MapCase

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability()[0] < 9:
    pytest.skip("tensor maps need compute capability 9.0 or higher", allow_module_level=True)


@pytest.fixture(scope="module")
def base() -> Iterator[int]:
    """A device allocation's address (256-byte aligned), kept for the module's tests."""
    storage = torch.empty(1 << 16, dtype=torch.uint8, device="cuda")
    assert storage.data_ptr() % 256 == 0
    yield storage.data_ptr()
    del storage


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_driver_accepts_exactly_what_cutec_accepts(case: MapCase, base: int) -> None:
    cutec = case.verdict(base)
    try:
        encode_with_driver(case.call(base))
        driver = None
    except cuda.NoDriverError:
        raise
    except (cuda.CudaError, ValueError) as e:  # (the binding refuses a rank above 5 itself)
        driver = str(e)
    assert (cutec is None) == (driver is None), (
        f"{case.name}: cutec {'accepts' if cutec is None else f'rejects ({cutec})'}, the "
        f"driver {'accepts' if driver is None else f'rejects ({driver})'}"
    )
