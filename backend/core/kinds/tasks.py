"""The Task kind of the API (``/tasks``, served by :mod:`backend.core.services` and :mod:`backend.api.endpoints`): its friendly shape.

``taskState`` is an alias of ``state`` (:data:`backend.core.schemas.tasks.ALIASES`, resolved by the
schemas); a PATCH that sends the alias replaces the stored ``state`` (:meth:`TaskKind.patch_base`).

Registered in :data:`backend.core.kinds.registry.KINDS`.

**Friendly payload ↔ CR** (``example.example.com/v1`` Task: :func:`to_friendly`, :func:`to_spec`; shared
helpers in :mod:`backend.core.conversions`; the spec's fields derived from the CRD and the overlay
:data:`kinds.tasks.API`): friendly ``state`` is ``spec.taskState``; ``deadline`` is written
in UTC (``...Z``); ``status.overdue`` is the reconciler's ``Overdue`` condition. A Task with its Events is
not a friendly payload: it is the CombinedTask (:func:`cluster.taskevents.combined`, served by
:mod:`backend.api.combinedtasks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.core import ordering
from backend.core.conversions import condition, conditions, object_fields
from backend.core.conversions.specs import cr_spec, friendly_spec
from backend.core.kinds.base import Kind
from backend.core.schemas import tasks as tasks_schemas
from backend.core.schemas.tasks import ALIASES
from backend.settings import ApiSettings
from cluster import TASKS
from cluster.fieldselectors import METADATA
from kinds import tasks as kind

# -- friendly payload ↔ CR ----------------------------------------------------------------------


RENAMES = dict(kind.API.renames)  # spec path → friendly path, for the API's field errors


def to_friendly(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The friendly Task: the spec's fields (:func:`backend.core.conversions.specs.friendly_spec`), and the status."""
    status = obj.get("status") or {}
    overdue = condition(status.get("conditions") or (), kind.OVERDUE)
    state = kind.state(obj)
    return {
        **object_fields(obj),
        **friendly_spec(kind.API, obj.get("spec")),
        "status": {
            "state": state.key,
            "stateMessage": state.detail,
            "overdue": overdue is not None and overdue.get("status") == "True",
            "conditions": conditions(status),
            "observedGeneration": status.get("observedGeneration"),
        },
    }


def to_spec(friendly: Mapping[str, Any]) -> dict[str, Any]:
    """The CR spec of a validated friendly Task (:func:`backend.core.conversions.specs.cr_spec`: ``deadline`` in UTC)."""
    return cr_spec(kind.API, friendly)


class TaskKind(Kind):
    resource = TASKS
    title = "Task"
    plural = "tasks"
    schemas = tasks_schemas.SCHEMAS
    states = kind.STATES
    selectable_fields = {**METADATA, **kind.SELECTABLE}
    sorts = ordering.sorts(state=kind.state, extra=ordering.TASK_SORTS)
    conditions = kind.CONDITIONS
    renames = RENAMES

    def to_friendly(self, obj: Mapping[str, Any], *, settings: ApiSettings | None) -> dict[str, Any]:
        return to_friendly(obj)

    def to_spec(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
        return to_spec(friendly)

    def patch_base(self, base: dict[str, Any], patch: Any) -> dict[str, Any]:
        """A patch naming a field by its alias replaces that field: drop it from the base (else both would be merged)."""
        if not isinstance(patch, Mapping):
            return base
        replaced = {field for alias, field in ALIASES.items() if alias in patch}
        return {k: v for k, v in base.items() if k not in replaced}


KIND = TaskKind()
