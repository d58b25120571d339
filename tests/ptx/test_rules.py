"""The emission rules of the thread and gpu dialects' ops, one group per op family:
the instruction text each prints (tests/ptx/cases hold the kernels ptxas assembles,
test_emit.py runs them), and the located error of a form PTX has no instruction for."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from cutec.diagnostics import CompileError
from cutec.ir import types as T
from cutec.ir.core import Block
from cutec.ir.dialects import gpu, thread
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.types import Type, VectorType
from cutec.ir.verifier import verify
from cutec.ptx.emitter import RULES
from cutec.ptx.ptxas import assemble, find_ptxas
from cutec.ptx.regalloc import packs
from tests.ptx.legal import ptx_of


def _body(ptx: str) -> str:
    return re.sub(r"\t\.loc .*\n", "", ptx)


def _error(text: str, target: str = "sm_90a") -> CompileError:
    """The one located error emitting `text` gives (the op is on line 2 of the kernel)."""
    module = parse_module(text, "e.mlir")
    verify(module)
    with pytest.raises(CompileError) as err:
        ptx_of(module, target)
    assert len(err.value.diagnostics) == 1
    assert err.value.location is not None and err.value.location.file == "e.mlir"
    return err.value


# --------------------------------------------------------------------------- vectors


def test_vector_loads_and_stores(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(ptx_of(load_case("vector"), "sm_80"))
    assert "\tld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd11];\n" in body
    # extract and from_elements are register renaming: element 0 + element 3, stored as a pair.
    assert "\tadd.rn.f32 %f4, %f0, %f3;\n\tst.global.v2.f32 [%rd11], {%f4, %f3};\n" in body
    assert "\tld.global.v4.b16 {%rs0, %rs1, %rs2, %rs3}, [%rd12];\n" in body


def test_predicated_loads_and_stores(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(ptx_of(load_case("vector"), "sm_80"))
    assert (
        "\tmov.f32 %f6, %f5;\n\tmov.f32 %f7, %f5;\n\tmov.f32 %f8, %f5;\n\tmov.f32 %f9, %f5;\n"
        "\t@%p0 ld.global.v4.f32 {%f6, %f7, %f8, %f9}, [%rd11];\n"
        "\t@%p0 st.global.v4.f32 [%rd11], {%f6, %f7, %f8, %f9};\n"
        "\tmov.f32 %f10, %f5;\n\t@%p0 ld.global.f32 %f10, [%rd11];\n"
        "\t@%p0 st.global.f32 [%rd11], %f10;\n"
    ) in body
    assert "\t@%p0 st.global.v4.b16 [%rd12], {%rs0, %rs1, %rs2, %rs3};\n" in body
    # An i1 is a byte in memory: the load and its test are both predicated.
    assert (
        "\tmov.pred %p2, %p1;\n"
        "\t@%p0 ld.global.u8 %rs4, [%rd13];\n"
        "\t@%p0 setp.ne.u16 %p2, %rs4, 0;\n"
        "\tselp.u16 %rs5, 1, 0, %p0;\n"
        "\t@%p2 st.global.u8 [%rd13], %rs5;\n"
    ) in body


def test_eight_16_bit_elements_move_as_four_packed_words(
    load_case: Callable[[str], ModuleOp],
) -> None:
    body = _body(ptx_of(load_case("packed"), "sm_80"))
    unpack = "".join(f"\tmov.b32 {{%rs{2 * i}, %rs{2 * i + 1}}}, %r{i + 1};\n" for i in range(4))
    assert "\tld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd6];\n" + unpack in body
    # load_if: the default (the first load's elements) packed into the words first,
    # so a false predicate leaves it; then unpacked into the result either way.
    assert (
        "\tmov.b32 %r5, {%rs8, %rs9};\n\tmov.b32 %r6, {%rs10, %rs11};\n"
        "\tmov.b32 %r7, {%rs12, %rs13};\n\tmov.b32 %r8, {%rs14, %rs15};\n"
        "\t@%p0 ld.global.v4.b32 {%r5, %r6, %r7, %r8}, [%rd6];\n"
        "\tmov.b32 {%rs8, %rs9}, %r5;\n"
    ) in body
    assert "\t@%p0 st.global.v4.b32 [%rd6], {%r9, %r10, %r11, %r12};\n" in body
    assert "\tld.shared.v4.b32 {%r13, %r14, %r15, %r16}, [%rd8];\n" in body
    assert "\tst.shared.v4.b32 [%rd8], {%r17, %r18, %r19, %r20};\n" in body


def test_a_carried_vector_moves_element_by_element(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(ptx_of(load_case("vector"), "sm_80"))
    # The rotation reads every element before it writes one (a parallel copy).
    assert (
        "\tmov.f32 %f15, %f12;\n\tmov.f32 %f16, %f13;\n\tmov.f32 %f17, %f14;\n"
        "\tmov.f32 %f18, %f11;\n\tmov.f32 %f11, %f15;\n"
    ) in body
    assert "$L_for_end_1:\n\tst.global.v4.f32 [%rd11], {%f11, %f12, %f13, %f14};\n" in body


def test_a_vector_of_i1_has_no_access() -> None:
    err = _error(
        "kernel @k(%p: !gpu.ptr<i1, global>) {\n"
        "  %v = thread.load %p : !gpu.ptr<i1, global> -> vector<2xi1>\n"
        "  return\n}\n"
    )
    assert str(err.location) == "e.mlir:2:8"
    assert err.diagnostics[0].message == (
        "cannot emit 'thread.load' with operand types (!gpu.ptr<i1, global>) and result types "
        "(vector<2xi1>) for sm_90a: no vector access of i1 (each is a byte in memory)"
    )


# --------------------------------------------------------------------------- memory


def test_shared_local_and_dynamic_arrays(load_case: Callable[[str], ModuleOp]) -> None:
    smem = _body(ptx_of(load_case("smem"), "sm_90a"))
    assert "\t.shared .align 16 .b8 smem_smem_0[1024];\n" in smem
    assert "\tmov.u64 %rd5, smem_smem_0;\n" in smem
    # The dynamic array is the extern one of docs/abi.md; ptr_cast is no instruction.
    assert ".extern .shared .align 16 .b8 smem_dynamic_smem[];\n" in smem
    assert "\tmov.u64 %rd19, smem_dynamic_smem;\n\tmad.lo.s64 %rd20, %rd8, 4, %rd19;\n" in smem
    local = _body(ptx_of(load_case("local"), "sm_80"))
    assert "\t.local .align 16 .b8 local_local_0[64];\n" in local
    assert "\tmov.u64 %rd5, local_local_0;\n" in local
    assert "\tst.local.f32 [%rd" in local
    assert "\tld.local.v4.f32 {%f1, %f2, %f3, %f4}, [%rd" in local


def test_cvta_and_generic_accesses(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(ptx_of(load_case("smem"), "sm_80"))
    assert (
        "\tcvta.shared.u64 %rd21, %rd20;\n"
        "\tld.f32 %f4, [%rd21];\n"
        "\tcvta.to.shared.u64 %rd22, %rd21;\n"
        "\tst.shared.f32 [%rd22], %f4;\n"
        "\tcvta.global.u64 %rd23, %rd18;\n"
        "\tst.f32 [%rd23], %f4;\n"
        "\tcvta.to.global.u64 %rd24, %rd23;\n"
    ) in body


def test_an_ordered_shared_load_is_relaxed_at_cta_scope(
    load_case: Callable[[str], ModuleOp],
) -> None:
    body = _body(ptx_of(load_case("smem"), "sm_80"))
    assert "\tld.relaxed.cta.shared.f32 %f5, [%rd20];\n" in body
    assert "\tld.relaxed.cta.shared.v4.f32 {%f6, %f7, %f8, %f9}, [%rd20];\n" in body


def test_ordered_is_for_shared_loads() -> None:
    text = (
        "kernel @k(%p: !gpu.ptr<f32, global>) {\n"
        "  %x = thread.load %p {ordered} : !gpu.ptr<f32, global> -> f32\n"
        "  return\n}\n"
    )
    with pytest.raises(CompileError) as err:
        verify(parse_module(text, "e.mlir"))
    assert str(err.value.location) == "e.mlir:2:8"
    assert "{ordered} is for shared-memory loads" in str(err.value)


def test_cp_async_cache_levels_and_zero_fill(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(ptx_of(load_case("smem"), "sm_80"))
    assert "\tcp.async.ca.shared.global [%rd10], [%rd11], 4;\n" in body
    assert "\tselp.b32 %r3, %r1, %r2, %p0;\n" in body
    assert "\tcp.async.cg.shared.global [%rd20], [%rd9], 16, %r3;\n" in body
    assert "\tcp.async.ca.shared.global [%rd20], [%rd9], 8, %r5;\n" in body


def test_dynamic_shared_needs_dynamic_smem() -> None:
    err = _error(
        "kernel @k() {\n  %s = thread.dynamic_shared : !gpu.ptr<f32, shared>\n  return\n}\n"
    )
    assert str(err.location) == "e.mlir:2:8"
    assert err.diagnostics[0].message.endswith("for sm_90a: the kernel has no 'dynamic_smem' bytes")


@pytest.mark.parametrize(
    ("space", "why"),
    [("param", "needs PTX 7.7"), ("shared::cluster", "needs PTX 7.8")],
)
def test_cvta_forms_sm_80_lacks(space: str, why: str) -> None:
    text = (
        "kernel @k(%p: !gpu.ptr<f32, global>) {\n"
        "  %g = thread.cvta %p : !gpu.ptr<f32, global> to !gpu.ptr<f32, generic>\n"
        f"  %s = thread.cvta %g : !gpu.ptr<f32, generic> to !gpu.ptr<f32, {space}>\n"
        "  return\n}\n"
    )
    err = _error(text, "sm_80")
    assert str(err.location) == "e.mlir:3:8"
    assert err.diagnostics[0].message.endswith(f"cvta of {space} addresses {why}")
    assert f"cvta.to.{space}.u64 %rd" in ptx_of(parse_module(text, "e.mlir"), "sm_90a")


# --------------------------------------------------------------------------- atoms


def test_atoms_map_values_to_template_operands(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(ptx_of(load_case("atom"), "sm_90a"))
    # A shared address operand is a 32-bit register: the 64-bit window address narrowed.
    assert (
        "\tcvt.u32.u64 %r8, %rd13;\n"
        "\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r4, %r5, %r6, %r7}, [%r8];\n"
    ) in body
    # A vector<2xf16> that .b32 operands read is packed once, where it is defined
    # (emitter.py, *packed pairs*); results (%e) are the d operand.
    assert "\tld.global.v2.b16 {%rs0, %rs1}, [%rd12];\n\tmov.b32 %r3, {%rs0, %rs1};\n" in body
    assert (
        "\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6, %f7, %f8}, "
        "{%r3, %r4, %r5, %r3}, {%r6, %r7}, {%f1, %f2, %f3, %f4};\n"
    ) in body
    assert body.count("{%rs0, %rs1}") == 2  # the load and the one pack
    assert "\tld.global.v4.b32 {%f9, %f10, %f11, %f12}, [%rd14];\n" in body
    assert "\tfma.rn.f32 %f13, %f9, %f6, %f12;\n" in body
    assert "\tcvt.u32.u64 %r9, %rd13;\n\tst.shared.b32 [%r9], %r3;\n" in body
    # A pair result held in one register is unpacked after the instruction for the
    # store that reads its elements.
    assert "\tld.global.b32 %r10, [%rd12];\n\tmov.b32 {%rs2, %rs3}, %r10;\n" in body
    assert "\tst.global.v2.b16 [%rd12], {%rs2, %rs3};\n" in body
    assert "\tcp.async.cg.shared.global.L2::128B [%r11], [%rd12], 16, %r0;\n" in body


WGMMA = """kernel @k(%da: i64, %db: i64, %o: !gpu.ptr<f16, global>)
    attributes {reqntid = array<i32: 128, 1, 1>} {
  %z = arith.constant 0.0 : f16
  %c = thread.from_elements %z, %z : vector<2xf16>
  %scale = arith.constant true
  %d:2 = thread.atom "SM90_64x8x16_F16F16F16_SS_TN"(%c, %c, %da, %db, %scale) {role = "mma"}
    : (vector<2xf16>, vector<2xf16>, i64, i64, i1) -> (vector<2xf16>, vector<2xf16>)
  thread.store %d#1, %o : vector<2xf16>, !gpu.ptr<f16, global>
  return
}
"""


def test_an_accumulator_updated_in_place_is_moved_into_the_results() -> None:
    module = parse_module(WGMMA, "w.mlir")
    verify(module)
    body = _body(ptx_of(module, "sm_90a"))
    # wgmma's d is input and output: the input (packed once) is moved into d's registers.
    assert re.search(
        r"mov\.b32 (%r\d+), \{%rs0, %rs0\};\n\tmov\.pred[^\n]*\n"
        r"\tmov\.b32 %r\d+, \1;\n\tmov\.b32 (%r\d+), \1;\n"
        r"\twgmma\.mma_async[^\n]*\n\tmov\.b32 \{%rs\d+, %rs\d+\}, \2;\n",
        body,
    ), body
    # Only the result a use reads as elements (the store's d#1) is unpacked.
    assert body.count("mov.b32 {%rs") == 1, body
    if find_ptxas() is not None:
        result = assemble(ptx_of(module, "sm_90a"), "sm_90a")
        assert result.ok, result.stderr


def test_an_atom_the_target_lacks_is_a_located_error() -> None:
    err = _error(WGMMA, "sm_80")
    assert str(err.location) == "e.mlir:6:10"
    assert err.diagnostics[0].message.endswith(
        "for sm_80: atom SM90_64x8x16_F16F16F16_SS_TN needs sm_90a"
    )


# --------------------------------------------------------------------------- gpu


def test_special_registers(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(ptx_of(load_case("special"), "sm_80"))
    for reg in ("%ntid.x", "%ntid.y", "%nctaid.z", "%laneid"):
        assert re.search(
            rf"\tmov\.u32 (%r\d+), {re.escape(reg)};\n\tcvt\.u64\.u32 %rd\d+, \1;\n", body
        )
    # The warp index is tid.x / 32 broadcast from lane 0: warp-uniform, never %warpid.
    assert (
        "\tmov.u32 %r5, %tid.x;\n"
        "\tshr.u32 %r6, %r5, 5;\n"
        "\tshfl.sync.idx.b32 %r7, %r6, 0, 0x1f, 0xffffffff;\n"
        "\tcvt.u64.u32 %rd7, %r7;\n"
    ) in body
    assert "%warpid" not in body


CLUSTER = """kernel @k(%out: !gpu.ptr<index, global>) {
  %a = gpu.cluster_id x : index
  %b = gpu.cluster_dim y : index
  %c = gpu.cluster_block_id z : index
  %d = gpu.cluster_dim_blocks x : index
  %e = gpu.cluster_block_rank : index
  %s1 = arith.addi %a, %b : index
  %s2 = arith.addi %s1, %c : index
  %s3 = arith.addi %s2, %d : index
  %s4 = arith.addi %s3, %e : index
  thread.store %s4, %out : index, !gpu.ptr<index, global>
  return
}
"""


def test_cluster_registers_are_sm_90s() -> None:
    ptx = ptx_of(parse_module(CLUSTER, "c.mlir"), "sm_90a")
    for reg in (
        "%clusterid.x",
        "%nclusterid.y",
        "%cluster_ctaid.z",
        "%cluster_nctaid.x",
        "%cluster_ctarank",
    ):
        assert f", {reg};\n" in ptx
    if find_ptxas() is not None:
        result = assemble(ptx, "sm_90a")
        assert result.ok, result.stderr
    err = _error(CLUSTER, "sm_80")
    assert str(err.location) == "e.mlir:2:8"
    assert err.diagnostics[0].message == (
        "cannot emit 'gpu.cluster_id' with operand types () and result types (index) for "
        "sm_80: %clusterid needs clusters, which sm_80 lacks"
    )


@pytest.mark.parametrize("op_class", [*gpu.DIALECT.ops, *thread.DIALECT.ops], ids=lambda c: c.name)
def test_every_thread_and_gpu_op_has_a_rule(op_class: type) -> None:
    assert any(c in RULES for c in op_class.__mro__)


def test_a_load_through_a_param_pointer_has_no_instruction() -> None:
    err = _error(
        "kernel @k(%g: !gpu.ptr<f32, global>) {\n"
        "  %a = thread.cvta %g : !gpu.ptr<f32, global> to !gpu.ptr<f32, generic>\n"
        "  %p = thread.cvta %a : !gpu.ptr<f32, generic> to !gpu.ptr<f32, param>\n"
        "  %v = thread.load %p : !gpu.ptr<f32, param> -> f32\n"
        "  return\n}\n"
    )
    assert str(err.location) == "e.mlir:4:8"
    assert err.diagnostics[0].message.endswith("for sm_90a: no ld/st of param memory")


@pytest.mark.parametrize(
    ("t", "packed"),
    [(VectorType((2,), T.f16), True), (VectorType((2,), T.bf16), True),
     (VectorType((2,), T.i16), True), (VectorType((2,), T.i8), False),
     (VectorType((4,), T.f16), False), (VectorType((2,), T.f32), False), (T.f16, False)],
    ids=str,
)  # fmt: skip
def test_pairs_of_16_bit_elements_live_packed(t: Type, packed: bool) -> None:
    """Only two 16-bit elements fill one b32 register: 8-bit elements also live in b16
    registers, and packing those halves would leave each byte 16 bits wide."""
    (value,) = Block([t]).args
    assert packs(value) is packed
