"""Job and pool specs from YAML or JSON files, in the short forms the CLI takes.

A spec file may name enum values by their short name in any case, with '-'
or '_' (``type: batch``, ``op: not-in``) as well as by their full name
(``JOB_TYPE_BATCH``); fields may use their JSON (camelCase) or proto
(snake_case) names. The server validates what it receives and reports every
problem with its field path; nothing here duplicates those checks.
"""

import json
import os

import yaml
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from peloton.v1 import types_pb2

__all__ = ["load_job_spec", "load_pool_spec", "job_spec", "pool_spec", "spec_to_dict"]


def _read(path_or_text):
    """Returns the parsed document of a path, or of YAML/JSON text."""
    text = path_or_text
    if isinstance(path_or_text, (str, os.PathLike)) and os.path.exists(path_or_text):
        with open(path_or_text, encoding="utf-8") as f:
            text = f.read()
    doc = yaml.safe_load(text)  # JSON is YAML too
    if not isinstance(doc, dict):
        raise ValueError("the spec must be a mapping")
    return doc


def _enum_value(enum, value):
    """The full name of an enum value given by its full or short name."""
    if not isinstance(value, str):
        return value
    names = [v.name for v in enum.values]
    if value in names:
        return value
    prefix = names[0][: -len("UNSPECIFIED")] if names and names[0].endswith("UNSPECIFIED") else ""
    full = prefix + value.strip().upper().replace("-", "_")
    return full if full in names else value  # unknown: let protobuf name it


def _normalise(doc, descriptor):
    """A copy of doc with enum values spelled by their full names."""
    fields = {}
    for f in descriptor.fields:
        fields[f.name] = f
        fields[f.json_name] = f
    out = {}
    for key, value in doc.items():
        f = fields.get(key)
        if f is None or value is None:
            out[key] = value  # protobuf reports unknown fields
            continue
        out[key] = _field_value(f, value)
    return out


def _field_value(f, value):
    if f.type == FieldDescriptor.TYPE_MESSAGE and f.message_type.GetOptions().map_entry:
        vf = f.message_type.fields_by_name["value"]
        if isinstance(value, dict):
            return {k: _single(vf, v) for k, v in value.items()}
        return value
    if isinstance(value, list):
        return [_single(f, v) for v in value]
    return _single(f, value)


def _single(f, value):
    if f.type == FieldDescriptor.TYPE_ENUM:
        return _enum_value(f.enum_type, value)
    if f.type == FieldDescriptor.TYPE_MESSAGE and isinstance(value, dict):
        if f.message_type.full_name.startswith("google.protobuf."):
            return value
        return _normalise(value, f.message_type)
    if f.type == FieldDescriptor.TYPE_STRING and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # YAML reads `maxUnavailable: 2` as a number
    return value


def job_spec(doc):
    """A JobSpec from a mapping in the spec file's form."""
    msg = types_pb2.JobSpec()
    json_format.ParseDict(_normalise(doc, msg.DESCRIPTOR), msg)
    return msg


def pool_spec(doc):
    """A PoolSpec from a mapping in the spec file's form."""
    msg = types_pb2.PoolSpec()
    json_format.ParseDict(_normalise(doc, msg.DESCRIPTOR), msg)
    return msg


def load_job_spec(path_or_text):
    """A JobSpec from a YAML or JSON file (or text)."""
    return job_spec(_read(path_or_text))


def load_pool_spec(path_or_text):
    """A PoolSpec from a YAML or JSON file (or text)."""
    return pool_spec(_read(path_or_text))


def spec_to_dict(msg):
    """A message as the mapping a spec file holds (camelCase, no defaults)."""
    return json.loads(json_format.MessageToJson(msg))
