"""Marshmallow schemas of the API's payloads, by kind, and ``SCHEMAS``: every schema the OpenAPI document names.

View docstrings reference these names (``$ref: '#/components/schemas/<name>'``); the OpenAPI
builder (:mod:`backend.openapi`) registers each ``SCHEMAS`` entry under its key.
"""

from __future__ import annotations

from marshmallow import Schema

from backend.schemas.common import ConditionSchema, NamespaceListSchema, NamespaceSchema, ProblemSchema
from backend.schemas.darkrooms import (
    DarkroomCreateSchema,
    DarkroomListSchema,
    DarkroomPatchSchema,
    DarkroomSchema,
    DarkroomSourceInputSchema,
    DarkroomSourcePatchSchema,
    DarkroomSourceSchema,
    DarkroomStatusInputSchema,
    DarkroomStatusSchema,
    DarkroomUpdateSchema,
)
from backend.schemas.postgresqls import (
    PostgresqlCreateSchema,
    PostgresqlEndpointSchema,
    PostgresqlListSchema,
    PostgresqlParametersInputSchema,
    PostgresqlPatchSchema,
    PostgresqlResourceListInputSchema,
    PostgresqlResourceListSchema,
    PostgresqlResourcesInputSchema,
    PostgresqlResourcesSchema,
    PostgresqlSchema,
    PostgresqlSecretRefInputSchema,
    PostgresqlSecretRefPatchSchema,
    PostgresqlSecretRefSchema,
    PostgresqlStatusInputSchema,
    PostgresqlStatusSchema,
    PostgresqlStorageInputSchema,
    PostgresqlStorageSchema,
    PostgresqlUpdateSchema,
)
from backend.schemas.tasks import (
    CombinedTaskListSchema,
    CombinedTaskSchema,
    TaskCreateSchema,
    TaskListSchema,
    TaskPatchSchema,
    TaskSchema,
    TaskStatusInputSchema,
    TaskStatusSchema,
    TaskUpdateSchema,
)

SCHEMAS: dict[str, type[Schema]] = {  # nested schemas before the schemas that use them (apispec registers in order)
    "Problem": ProblemSchema,
    "Condition": ConditionSchema,
    "Namespace": NamespaceSchema,
    "NamespaceList": NamespaceListSchema,
    "DarkroomSourceInput": DarkroomSourceInputSchema,
    "DarkroomSourcePatch": DarkroomSourcePatchSchema,
    "DarkroomSource": DarkroomSourceSchema,
    "DarkroomStatus": DarkroomStatusSchema,
    "DarkroomStatusInput": DarkroomStatusInputSchema,
    "DarkroomCreate": DarkroomCreateSchema,
    "DarkroomUpdate": DarkroomUpdateSchema,
    "DarkroomPatch": DarkroomPatchSchema,
    "Darkroom": DarkroomSchema,
    "DarkroomList": DarkroomListSchema,
    "TaskStatus": TaskStatusSchema,
    "TaskStatusInput": TaskStatusInputSchema,
    "TaskCreate": TaskCreateSchema,
    "TaskUpdate": TaskUpdateSchema,
    "TaskPatch": TaskPatchSchema,
    "Task": TaskSchema,
    "TaskList": TaskListSchema,
    "CombinedTask": CombinedTaskSchema,
    "CombinedTaskList": CombinedTaskListSchema,
    "PostgresqlStorageInput": PostgresqlStorageInputSchema,
    "PostgresqlSecretRefInput": PostgresqlSecretRefInputSchema,
    "PostgresqlSecretRefPatch": PostgresqlSecretRefPatchSchema,
    "PostgresqlResourceListInput": PostgresqlResourceListInputSchema,
    "PostgresqlResourcesInput": PostgresqlResourcesInputSchema,
    "PostgresqlParametersInput": PostgresqlParametersInputSchema,
    "PostgresqlEndpoint": PostgresqlEndpointSchema,
    "PostgresqlStatus": PostgresqlStatusSchema,
    "PostgresqlStatusInput": PostgresqlStatusInputSchema,
    "PostgresqlStorage": PostgresqlStorageSchema,
    "PostgresqlSecretRef": PostgresqlSecretRefSchema,
    "PostgresqlResourceList": PostgresqlResourceListSchema,
    "PostgresqlResources": PostgresqlResourcesSchema,
    "PostgresqlCreate": PostgresqlCreateSchema,
    "PostgresqlUpdate": PostgresqlUpdateSchema,
    "PostgresqlPatch": PostgresqlPatchSchema,
    "Postgresql": PostgresqlSchema,
    "PostgresqlList": PostgresqlListSchema,
}

__all__ = ["SCHEMAS"]
