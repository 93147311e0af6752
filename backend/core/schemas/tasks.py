"""Task payload schemas: create, replace, merge patch, the Task response and the CombinedTask view.

The spec fields are not declared here: they are derived (:mod:`backend.core.schemas.derived`) from the CRD and the
kind's overlay :data:`kinds.tasks.API`. Friendly field ``state`` is the CR's ``spec.taskState``. For the seed's clients ``taskState`` is
accepted as an alias of ``state`` in create, replace and patch bodies (:data:`ALIASES`; both with
different values: 422 naming both); responses carry ``state`` only. ``deadline`` must be an RFC 3339 timestamp
with a timezone and is stored in UTC. ``status.overdue`` mirrors the reconciler's ``Overdue``
condition. A CombinedTask is the aggregated API's object (a Task's metadata and spec, its Events in
``status.events``; from the events informer, no extra API calls), not a friendly payload.
Used by :mod:`backend.core.kinds.tasks`, :mod:`backend.api.combinedtasks` and the OpenAPI document.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_load, validate

from backend.core.schemas import derived
from backend.core.schemas.common import (
    IGNORED,
    ConditionSchema,
    ObjectFields,
    ReadOnlyFields,
    all_optional,
    dns_label,
    dns_subdomain,
    integer,
    list_schema,
    resolve_aliases,
    state_fields,
)
from kinds import combinedtasks as combined_kind
from kinds import tasks as kind
from kinds.tasks import TASK_STATES

ALIASES = {"taskState": "state"}  # the seed's field name (the CR's spec.taskState) → ours


class TaskStatusSchema(Schema):
    state, stateMessage = state_fields(kind.STATES, "Task")
    overdue = fields.Boolean(
        required=True, metadata={"description": "The reconciler's Overdue condition is True (deadline passed while Pending)."}
    )
    conditions = fields.List(fields.Nested(ConditionSchema), required=True)
    observedGeneration = integer(required=True, allow_none=True)


TaskStatusInputSchema = all_optional(TaskStatusSchema, "TaskStatusInputSchema")


class AliasRules(ReadOnlyFields):
    """The seed's ``taskState`` resolved to ``state`` once both were validated (the spec fields come from the CRD)."""

    @post_load
    def _aliases(self, data: Any, **_: Any) -> Any:
        return resolve_aliases(data, ALIASES)


# PUT body: the whole friendly Task; ``name``/``namespace`` come from the URL (may repeat them).
TaskUpdateSchema = derived.schema(
    "TaskUpdateSchema",
    AliasRules,
    {
        "name": fields.String(allow_none=True, metadata={"description": "Name of the Task; must match the URL."}),
        "namespace": fields.String(allow_none=True, metadata={"description": "Namespace of the Task; must match the URL."}),
    },
    derived.request_fields(kind.API),
    {
        "taskState": fields.String(
            allow_none=True,
            load_only=True,
            validate=validate.OneOf(TASK_STATES),
            metadata={
                "description": "Alias of state (the seed's name for it): accepted on create, replace and patch; "
                "if both are sent they must be equal (else 422 naming both). Responses carry state only."
            },
        ),
        "status": fields.Nested(TaskStatusInputSchema, allow_none=True, metadata={"description": IGNORED}),
    },
)
# POST body: a new Task.
TaskCreateSchema = derived.schema(
    "TaskCreateSchema",
    TaskUpdateSchema,
    {
        "name": dns_subdomain("Name of the Task (a DNS subdomain).", required=True),
        "namespace": dns_label('Namespace of the Task (default "default"); must exist.', load_default="default"),
    },
)
TaskPatchSchema = all_optional(TaskUpdateSchema, "TaskPatchSchema")
# A Task as returned by the API.
TaskSchema = derived.schema(
    "TaskSchema", ObjectFields, derived.response_fields(kind.API), {"status": fields.Nested(TaskStatusSchema, required=True)}
)


TaskListSchema = Schema.from_dict(list_schema(TaskSchema, "Tasks sorted by namespace, then name."), name="TaskListSchema")


# The Task's ``spec`` as stored (the CRD's field names and descriptions).
CombinedTaskSpecSchema = derived.schema("CombinedTaskSpecSchema", Schema, derived.stored_fields(kind.KIND))


class CombinedTaskStatusSchema(Schema):
    """The Task's Events, and its own conditions and observedGeneration (so the object tells the Task's state)."""

    events = fields.List(
        fields.Dict(),
        required=True,
        metadata={
            "description": "The Task's Events (core/v1 Event objects as stored), oldest first (firstTimestamp or eventTime, then name)."
        },
    )
    conditions = fields.List(fields.Nested(ConditionSchema))
    observedGeneration = integer()


class CombinedTaskSchema(Schema):
    """A Task with its Events: the CombinedTask of the aggregated API (``search.task.example.example.com/v1``)."""

    apiVersion = fields.String(required=True, validate=validate.Equal(combined_kind.GROUP_VERSION))
    kind = fields.String(required=True, validate=validate.Equal(combined_kind.KIND))
    metadata = fields.Dict(
        required=True,
        metadata={"description": "The Task's metadata (ObjectMeta); resourceVersion: the newest of the Task's and its Events'."},
    )
    spec = fields.Nested(CombinedTaskSpecSchema, required=True)
    status = fields.Nested(CombinedTaskStatusSchema, required=True)


CombinedTaskListSchema = Schema.from_dict(
    list_schema(CombinedTaskSchema, "Tasks with their Events, sorted by namespace, then name."), name="CombinedTaskListSchema"
)

# This kind's schemas the OpenAPI document names, nested ones first (apispec registers in order):
# backend.core.kinds.registry.SCHEMAS joins them.
SCHEMAS: dict[str, type[Schema]] = {
    "TaskStatus": TaskStatusSchema,
    "TaskStatusInput": TaskStatusInputSchema,
    "TaskCreate": TaskCreateSchema,
    "TaskUpdate": TaskUpdateSchema,
    "TaskPatch": TaskPatchSchema,
    "Task": TaskSchema,
    "TaskList": TaskListSchema,
    "CombinedTask": CombinedTaskSchema,
    "CombinedTaskList": CombinedTaskListSchema,
}
