"""Looking MMA atoms up by name or by what they compute, and the errors when none fits."""

from __future__ import annotations

import pytest

from cutec.atoms.mma import UnsupportedMmaError, find_mma_atoms, lookup_mma_atom
from cutec.target import UnknownTargetError


def test_lookup_by_name_and_by_types() -> None:
    atom = lookup_mma_atom("SM80_16x8x16_F32BF16BF16F32_TN", target="sm_90a")
    assert atom.shape_mnk == (16, 8, 16) and atom.a_type == "bf16" and atom.d_type == "f32"
    by_types = lookup_mma_atom(
        target="sm_80", shape_mnk=(16, 8, 16), a_type="bf16", b_type="bf16", d_type="f32"
    )
    assert by_types is atom
    assert (
        lookup_mma_atom(target="sm_80", shape_mnk=(8, 8, 4), a_type="f64").name
        == "SM80_8x8x4_F64F64F64F64_TN"
    )


def test_unknown_name_suggests_close_matches() -> None:
    with pytest.raises(UnsupportedMmaError, match="did you mean SM80_16x8x16_F32F16F16F32_TN"):
        lookup_mma_atom("SM80_16x8x16_F32F16F16F32_NT")


def test_arch_too_old() -> None:
    with pytest.raises(UnsupportedMmaError, match="needs sm_90a, target is sm_80"):
        lookup_mma_atom("SM90_64x64x16_F32F16F16_SS_TN", target="sm_80")
    with pytest.raises(UnsupportedMmaError, match="needs sm_80 or newer, target is sm_75"):
        lookup_mma_atom("SM80_16x8x8_F32TF32TF32F32_TN", target="sm_75")


def test_unsupported_dtype_names_what_is_supported() -> None:
    with pytest.raises(UnsupportedMmaError, match=r"a=e4m3.*supported: .*f32<-bf16\*bf16"):
        lookup_mma_atom(target="sm_80", a_type="e4m3")


def test_unsupported_shape_names_the_shapes() -> None:
    with pytest.raises(UnsupportedMmaError, match="shapes 16x8x4, 16x8x8"):
        lookup_mma_atom(target="sm_80", shape_mnk=(16, 8, 16), a_type="tf32")


def test_ambiguous_request_lists_candidates() -> None:
    with pytest.raises(
        UnsupportedMmaError, match="6 MMA atoms match target=sm_80, a=f16, d=f32: SM70_8x8x4"
    ):
        lookup_mma_atom(target="sm_80", a_type="f16", d_type="f32")


def test_wgmma_only_on_sm90() -> None:
    # wgmma is sm_90a's alone: neither sm_90 nor sm_80 has an e4m3 atom.
    assert find_mma_atoms(target="sm_90", a_type="e4m3") == []
    assert find_mma_atoms(target="sm_80", a_type="e4m3") == []
    with pytest.raises(UnknownTargetError, match="unknown target 'sm_100'; known: sm_75"):
        find_mma_atoms(target="sm_100")
    assert len(find_mma_atoms(target="sm_90a", a_type="e4m3", b_type="e5m2", d_type="f32")) == 64
