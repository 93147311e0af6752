"""Column building blocks: the SwaggerDoc descriptions of the common columns (Name, Created At) and
accessors that read an object's fields the way the Go printers do (missing = zero value).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from devcluster.printing.cells import Cell, Column, _age, _meta

# ---------------------------------------------------------------------------------------------
# Descriptions (k8s.io/api SwaggerDoc strings)
# ---------------------------------------------------------------------------------------------

_NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to "
    "request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and "
    "configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_CREATION_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in "
    "happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_CONTAINERS_DOC = "Names of each container in the template."
_IMAGES_DOC = "Images referenced by each container in the template."


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else int(value) if isinstance(value, float) else 0


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _name(obj: dict[str, Any], now: datetime) -> Any:
    return _str(_meta(obj).get("name"))


def _col(name: str, type_: str, description: str, cell: Cell, *, priority: int = 0, format_: str = "") -> Column:
    return Column(name=name, type=type_, format=format_, description=description, priority=priority, cell=cell)


def _name_col(priority: int = 0) -> Column:
    return _col("Name", "string", _NAME_DOC, _name, priority=priority, format_="name")


def _age_col() -> Column:
    return _col("Age", "string", _CREATION_DOC, _age)


def _int_or_na(obj: dict[str, Any], field: str) -> str:
    value = _get(obj, "spec", field)
    return "N/A" if value is None else str(value)
