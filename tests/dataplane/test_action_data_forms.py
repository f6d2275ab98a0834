"""Action data in a program's JSON, as BMv2's loader reads it: `runtime_data`
as a primitive's parameter, `local` inside an expression; the other way
round the program is refused, as simple_switch refuses it."""

import pytest

import p4scope_dataplane as dp
from tests.dataplane.programs import (DROP, assign, eth, ethernet_program, expr, field, hexv, key,
                                     table)


def fwd_plus_one(operand):
    """fwd(port): egress_spec = port + 1, action data read through `operand`."""
    return {"name": "fwd", "id": 0, "runtime_data": [{"name": "port", "bitwidth": 9}],
            "primitives": [assign(field("standard_metadata", "egress_spec"),
                                  {"type": "expression", "value": expr("+", operand, hexv(1))})]}


def engine(fwd):
    t = table("ingress.mac", 0, [key("ethernet", "dst")], [0, 1], ["fwd", "drop"], default=1)
    return dp.Engine(ethernet_program([fwd, DROP], [t], "ingress.mac"))


def test_local_inside_an_expression_reads_the_action_data():
    e = engine(fwd_plus_one({"type": "local", "value": 0}))
    e.table_add("ingress.mac", "fwd", [0xAA], [3])
    assert e.process([(1, eth(), 1000)]) == [(4, eth(), 1000)]


def test_runtime_data_inside_an_expression_is_refused():
    with pytest.raises(dp.LoadError, match=r"actions\[0\] \('fwd'\).*Invalid 'type' in expression: "
                                           r"'runtime_data'"):
        engine(fwd_plus_one({"type": "runtime_data", "value": 0}))


def test_local_as_a_primitive_parameter_is_refused():
    fwd = {"name": "fwd", "id": 0, "runtime_data": [{"name": "port", "bitwidth": 9}],
           "primitives": [assign(field("standard_metadata", "egress_spec"), {"type": "local", "value": 0})]}
    with pytest.raises(dp.LoadError, match="Parameter type 'local' not supported"):
        engine(fwd)
