"""Custom resources' columns: ``apiextensions-apiserver``'s table convertor (Name, the CRD version's
additionalPrinterColumns evaluated with JSONPath, or Age).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from devcluster import gofmt, jsonpath
from devcluster.printing.cells import Cell, Column, _aware, _parse_time, human_duration
from devcluster.printing.columns import _CREATION_DOC, _int, _name_col, _str
from devcluster.resources import ResourceType

# ---------------------------------------------------------------------------------------------
# Custom resources (apiextensions tableconvertor)
# ---------------------------------------------------------------------------------------------


def _custom_cell(compiled: jsonpath.Compiled, type_: str) -> Cell:
    def cell(obj: dict[str, Any], now: datetime) -> Any:
        try:
            results = compiled.find_results(obj)
        except (jsonpath.JSONPathError, RecursionError):
            return None
        if not results or not results[0]:
            return None
        value = results[0][0]
        if type_ == "string":  # a non-string value of a string column is shown as its JSON (null as a null cell)
            if value is None or isinstance(value, str):
                return value
            return gofmt.marshal_json(value)
        return _cell_for_json_value(type_, value, now)

    return cell


def _cell_for_json_value(type_: str, value: Any, now: datetime) -> Any:
    if value is None:
        return None
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_ == "integer" and is_number:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return int(value)
    if type_ == "number" and is_number:
        return float(value)
    if type_ == "boolean" and isinstance(value, bool):
        return value
    if type_ == "string" and isinstance(value, str):
        return value
    if type_ == "date" and isinstance(value, str):
        if value in ("", "null"):
            return "<unknown>"
        ts = _parse_time(value)
        if ts is None:
            return "<invalid>"
        return human_duration((_aware(now) - ts).total_seconds())
    return None


def _custom_columns(resource: ResourceType) -> list[Column]:
    printer_columns = list(resource.printer_columns) or [
        {"name": "Age", "type": "date", "description": _CREATION_DOC, "jsonPath": ".metadata.creationTimestamp"}
    ]
    columns = [_name_col()]
    for definition in printer_columns:
        path = _str(definition.get("jsonPath"))
        try:
            compiled = jsonpath.parse("{" + path + "}")
        except jsonpath.JSONPathError:
            break  # kube keeps the columns parsed so far ("falling back to default printing")
        type_ = _str(definition.get("type"))
        description = _str(definition.get("description")) or f"Custom resource definition column (in JSONPath format): {path}"
        columns.append(
            Column(
                name=_str(definition.get("name")),
                type=type_,
                format=_str(definition.get("format")),
                description=description,
                priority=_int(definition.get("priority")),
                cell=_custom_cell(compiled, type_),
            )
        )
    return columns
