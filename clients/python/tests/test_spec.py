"""Spec files in the CLI's short forms become the messages the API takes."""

import pytest
from google.protobuf import json_format

from peloton.v1 import types_pb2 as types
from peloton_client import job_spec, load_job_spec, load_pool_spec, spec_to_dict

from conftest import REPO


@pytest.mark.parametrize(
    "given, want",
    [
        ("batch", types.JOB_TYPE_BATCH),
        ("Service", types.JOB_TYPE_SERVICE),
        ("JOB_TYPE_STATEFUL", types.JOB_TYPE_STATEFUL),
        ("daemon", types.JOB_TYPE_DAEMON),
    ],
)
def test_job_type_short_and_full_names(given, want):
    assert job_spec({"name": "x", "type": given}).type == want


def test_nested_enums_and_snake_case():
    spec = job_spec(
        {
            "name": "x",
            "task": {"command": "true", "constraints": [{"key": "zone", "op": "not-in", "values": ["a"]}]},
            "failover": {"mode": "regions", "regions": ["west"]},
            "max_running": 3,
            "sla": {"maxUnavailable": 2},
        }
    )
    assert spec.task.constraints[0].op == types.CONSTRAINT_OP_NOT_IN
    assert spec.failover.mode == types.FailoverPolicy.MODE_REGIONS
    assert spec.max_running == 3
    assert spec.sla.max_unavailable == "2"


def test_unknown_enum_value_is_an_error():
    with pytest.raises(json_format.ParseError):
        job_spec({"name": "x", "type": "sometimes"})


def test_examples_load():
    spec = load_job_spec(REPO / "examples" / "service.yaml")
    assert spec.name == "web" and spec.type == types.JOB_TYPE_SERVICE and spec.instances == 4
    assert spec.task.resources.cpu == pytest.approx(0.1)
    pool = load_pool_spec(REPO / "examples" / "pool-a.yaml")
    assert pool.path == "/a"


def test_json_text_and_round_trip():
    spec = load_job_spec('{"name": "j", "type": "batch", "instances": 2, "task": {"command": "true"}}')
    assert spec.instances == 2
    assert job_spec(spec_to_dict(spec)) == spec
