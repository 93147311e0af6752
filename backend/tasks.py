"""The Task kind of the API (``/tasks``, served by :mod:`backend.services` and :mod:`backend.endpoints`).

``taskState`` is an alias of ``state`` (:data:`backend.schemas.tasks.ALIASES`, resolved by the
schemas); a PATCH that sends the alias replaces the stored ``state`` (:meth:`TaskKind.patch_base`).

Registered in :data:`backend.registry.KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.conversions import tasks as conversion
from backend.kinds import Kind
from backend.schemas import tasks as tasks_schemas
from backend.schemas.tasks import ALIASES
from backend.settings import ApiSettings
from cluster import TASKS
from kinds import tasks as kind


class TaskKind(Kind):
    resource = TASKS
    title = "Task"
    plural = "tasks"
    schemas = tasks_schemas.SCHEMAS
    states = kind.STATES
    conditions = kind.CONDITIONS
    renames = conversion.RENAMES

    def to_friendly(self, obj: Mapping[str, Any], *, settings: ApiSettings | None) -> dict[str, Any]:
        return conversion.to_friendly(obj)

    def to_spec(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
        return conversion.to_spec(friendly)

    def patch_base(self, base: dict[str, Any], patch: Any) -> dict[str, Any]:
        """A patch naming a field by its alias replaces that field: drop it from the base (else both would be merged)."""
        if not isinstance(patch, Mapping):
            return base
        replaced = {field for alias, field in ALIASES.items() if alias in patch}
        return {k: v for k, v in base.items() if k not in replaced}


KIND = TaskKind()
