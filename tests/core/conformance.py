"""Test helper: validate JSON against the schemas the OpenAPI document publishes (``backend.core.kinds.registry.SCHEMAS``).

Builds the components exactly as apispec's MarshmallowPlugin renders them (OpenAPI 3.0.3) and
turns them into a JSON Schema (``nullable`` → ``"null"`` type, component refs → ``$defs``), so
tests can assert that what the API returns is what the document says. Used by the unit tests of
conversions and by the API's tests (tests/api).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

from backend.core.kinds.registry import SCHEMAS


def _json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k not in ("nullable", "readOnly", "writeOnly")}
    if "$ref" in out:
        out["$ref"] = out["$ref"].replace("#/components/schemas/", "#/$defs/")
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


@cache
def components() -> dict[str, Any]:
    spec = APISpec("t", "1", "3.0.3", plugins=[MarshmallowPlugin()])
    for name, schema in SCHEMAS.items():
        spec.components.schema(name, schema=schema)
    return {name: _json_schema(s) for name, s in spec.to_dict()["components"]["schemas"].items()}


def validate(instance: Any, schema_name: str) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``instance`` conforms to component ``schema_name``."""
    defs = components()
    schema = {"$defs": defs, "$ref": f"#/$defs/{schema_name}"}
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).validate(instance)
