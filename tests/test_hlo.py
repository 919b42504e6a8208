"""The canonical form of optimized HLO: equal for the same program whatever a release names things."""

import jax
import jax.numpy as jnp
from jax import random

from jaxmlp import hlo, model
from jaxmlp.compat import compiled_facts

# One program as two releases print it: other instruction and parameter names, other metadata, a debug section.
OLD = """HloModule jit_f, entry_computation_layout={(f32[8]{0})->pred[8]{0}}

FileNames
1 "f.py"

%fused_computation (param_0: f32[8]) -> pred[8] {
  %param_0 = f32[8]{0} parameter(0)
  %constant.1 = f32[] constant(0), metadata={op_name="jit(f)/lt" source_file="f.py" source_line=3}
  %broadcast.2 = f32[8]{0} broadcast(%constant.1), dimensions={}
  ROOT %compare.18 = pred[8]{0} compare(%param_0, %broadcast.2), direction=LT
}

ENTRY %main.4 (Arg_0.1: f32[8]) -> pred[8] {
  %Arg_0.1 = f32[8]{0} parameter(0), metadata={op_name="x"}
  ROOT %fusion = pred[8]{0} fusion(%Arg_0.1), kind=kLoop, calls=%fused_computation
}
"""
NEW = """HloModule jit_g, entry_computation_layout={(f32[8]{0})->pred[8]{0}}

%fused_computation (param_0.1: f32[8]) -> pred[8] {
  %param_0.1 = f32[8]{0} parameter(0)
  %constant.7 = f32[] constant(0), metadata={op_name="jit(f)/lt" source_file="f.py" source_line=3 source_end_line=3}
  %broadcast.9 = f32[8]{0} broadcast(%constant.7), dimensions={}
  ROOT %lt.6 = pred[8]{0} compare(%param_0.1, %broadcast.9), direction=LT
}

ENTRY %main.5 (x.1: f32[8]) -> pred[8] {
  %x.1 = f32[8]{0} parameter(0)
  ROOT %fusion.2 = pred[8]{0} fusion(%x.1), kind=kLoop, calls=%fused_computation
}
"""


def test_the_same_program_named_otherwise_has_one_canonical_text_and_fingerprint():
    assert hlo.canonical(OLD) == hlo.canonical(NEW)
    assert hlo.fingerprint(OLD) == hlo.fingerprint(NEW)
    assert "metadata" not in hlo.canonical(OLD) and "FileNames" not in hlo.canonical(OLD)
    # Header parameters and the parameter() instructions they name get one name.
    assert "%v0: f32[8]" in hlo.canonical(OLD) and "%v0 = f32[8]{0} parameter(0)" in hlo.canonical(OLD)


def test_a_changed_program_changes_the_fingerprint():
    changed = NEW.replace("direction=LT", "direction=GT")
    assert hlo.fingerprint(changed) != hlo.fingerprint(OLD)
    assert hlo.canonical(changed).count("direction=GT") == 1


def test_the_same_instructions_reordered_renamed_or_annotated_share_an_instruction_fingerprint():
    """What an explanation counts as a program change: the instructions, not their order, names, annotations (a
    loop's trip count, the frontend's attributes) or whether the operands' types are printed."""
    reordered = NEW.replace(
        "  %param_0.1 = f32[8]{0} parameter(0)\n  %constant.7 = f32[] constant(0), metadata",
        "  %constant.7 = f32[] constant(0)\n  %param_0.1 = f32[8]{0} parameter(0), metadata",
    )
    annotated = reordered.replace(
        "calls=%fused_computation", 'calls=%fused_computation, backend_config={"known_trip_count":{"n":"8"}}'
    ).replace("direction=LT", 'direction=LT, frontend_attributes={grad_x="false",note="{"}')
    typed = annotated.replace(
        "compare(%param_0.1, %broadcast.9)", "compare(f32[8]{0} %param_0.1, f32[8]{0} %broadcast.9)"
    )
    assert reordered != NEW and annotated != reordered and typed != annotated
    assert hlo.fingerprint(typed) != hlo.fingerprint(OLD)  # the text differs
    assert {hlo.instruction_fingerprint(t) for t in (OLD, NEW, reordered, annotated, typed)} == {
        hlo.instruction_fingerprint(OLD)
    }
    loop = (
        "ENTRY %main (p: (s32[], f32[2])) -> (s32[], f32[2]) {\n  %p = (s32[], f32[2]{0}) parameter(0)\n"
        "  ROOT %w = (s32[], f32[2]{0}) while((s32[], /*index=1*/f32[2]{0}) %p), condition=%c, body=%b\n}\n"
    )
    counted = loop.replace("(s32[], /*index=1*/f32[2]{0}) %p), condition=%c, body=%b", "%p), condition=%c, body=%b")
    counted = counted.replace("body=%b", 'body=%b, backend_config={"known_trip_count":{"n":"2"}}')
    assert hlo.instruction_fingerprint(loop) == hlo.instruction_fingerprint(counted)
    for changed in (
        NEW.replace("direction=LT", "direction=GT"),  # an attribute
        NEW.replace("constant(0)", "constant(1)"),  # a value
        NEW.replace("compare(%param_0.1, %broadcast.9)", "compare(%broadcast.9, %param_0.1)"),  # operands swapped
        NEW.replace("pred[8]{0} compare", "pred[8]{0:T(8)} compare"),  # the result's layout
    ):
        assert hlo.instruction_fingerprint(changed) != hlo.instruction_fingerprint(OLD), changed


def test_operations_count_each_opcode_and_fusions_by_kind():
    ops = hlo.operations(OLD)
    assert ops == {"parameter": 2, "constant": 1, "broadcast": 1, "compare": 1, "fusion:kLoop": 1}
    tuple_shaped = "  ROOT %t = (f32[8]{0}, s32[]) tuple(%a, %b)\n"
    assert hlo.operations(tuple_shaped) == {"tuple": 1}


def test_real_compiles_of_one_program_share_a_fingerprint_and_another_shape_does_not():
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    x, y = jnp.zeros((128, 784)), jnp.zeros((128, 10))
    named = model.update.lower(params, x, y).compile()
    renamed = jax.jit(lambda p, a, b: model.sgd_update(p, a, b)).lower(params, x, y).compile()
    smaller = model.update.lower(params, x[:64], y[:64]).compile()
    facts = compiled_facts(named)
    assert facts["xla_hlo_fingerprint"] == compiled_facts(renamed)["xla_hlo_fingerprint"]
    assert facts["xla_hlo_fingerprint"] != compiled_facts(smaller)["xla_hlo_fingerprint"]
    assert facts["xla_hlo_instructions"] > facts["xla_hlo_fusions"] > 0


KERNEL = (
    "%run.1 = (f32[784,512]{1,0:T(8,128)}, f32[512]{0}) custom-call(f32[469,128,784]{2,1,0} %p0, f32[784,512]{1,0} "
    '%p1), custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"body": "TUzvUgFNTElSb(...)"}}'
)


def test_an_operation_is_named_by_its_short_name_and_category():
    """A TPU trace names a Pallas kernel by its whole instruction: every output shows ``run.1 (custom-call)``."""
    assert hlo.op_name(KERNEL) == "run.1" and hlo.op_category(KERNEL) == "custom-call"
    assert hlo.op_label(KERNEL) == "run.1 (custom-call)" and hlo.op_label(f"ROOT {KERNEL}") == "run.1 (custom-call)"
    assert hlo.op_label("run.1", "custom-call") == "run.1 (custom-call)"  # xprof's category where known
    assert hlo.op_label("fusion.12") == "fusion.12 (fusion)" and hlo.op_label("copy") == "copy (copy)"
    assert hlo.op_label("ynn_fusion.6", float("nan")) == "ynn_fusion.6 (ynn_fusion)"  # a missing category: derived
