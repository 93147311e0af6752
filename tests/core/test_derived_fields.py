"""Every spec field declared once: the API's schemas and the spec conversion derived from a CRD and its overlay.

Behaviours covered, on a made-up CRD (so each rule is seen on its own) and on the Darkroom's:

- request fields: the CRD's required fields are required (unless the overlay gives a request default),
  others nullable; integer bounds, the bound of an ``int64`` said in words, enums, string lengths, list
  bounds and ``x-kubernetes-list-type: set`` (``uniqueItems``); renames, hidden spec fields and write-only
  fields; every message in the API's style;
- response fields: null only where a stored object may lack the field (not when the CRD requires it, the
  overlay shows a default, or it is a list or an object);
- :func:`backend.core.conversions.specs.friendly_spec` and :func:`~backend.core.conversions.specs.cr_spec`:
  CRD order and friendly names, shown defaults, lists and objects never null, null is absent, hidden and
  write-only fields never reach the CR;
- an overlay naming a field its CRD does not have is caught (:func:`backend.core.crds.unknown_paths`), and the
  Darkroom's, the Task's and the Postgresql's overlays name none; every Darkroom, Task and Postgresql spec field the
  API shows is in its request and response schemas, with nothing else declaring it (a Task's date-time deadline a
  timestamp written in UTC; a Postgresql's map ``resources.requests`` an object of the keys its overlay names, its
  ``passwordSecretRef`` null when absent, an empty optional object left out of the CR, the write-only password
  where the overlay places it); the typed shapes name the CRD's fields.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from marshmallow import Schema, ValidationError

from backend.core import crds
from backend.core.conversions.specs import cr_spec, friendly_spec
from backend.core.schemas import derived
from backend.core.schemas.common import ReadOnlyFields, RequestSchema
from backend.core.schemas.darkrooms import DarkroomSchema, DarkroomSourceInputSchema, DarkroomSourceSchema, DarkroomUpdateSchema
from backend.core.schemas.postgresqls import (
    PostgresqlResourceListInputSchema,
    PostgresqlResourceListSchema,
    PostgresqlSchema,
    PostgresqlUpdateSchema,
)
from backend.core.schemas.tasks import TaskSchema, TaskUpdateSchema
from backend.core.validation import flatten
from kinds import darkrooms, postgresqls, tasks
from kinds.fields import ApiField, Overlay

WIDGET_SPEC: dict[str, Any] = {
    "type": "object",
    "required": ["size", "tags"],
    "properties": {
        "size": {"type": "integer", "format": "int64", "minimum": 1},
        "count": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 5},
        "tags": {"type": "array", "minItems": 1, "maxItems": 3, "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "label": {"type": "string", "maxLength": 10},
        "secretRef": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
WIDGET = Overlay(
    kind="Widget",
    fields={"mode": ApiField(default="a", shown_default="a"), "label": ApiField(ask="A label.", tell="Its label.")},
    renames={"count": "amount"},
    hidden=frozenset({"secretRef"}),
    write_only={"password": ApiField(ask="The password.", min_length=1, max_length=8)},
)


@pytest.fixture(autouse=True)
def widget_crd(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    crd = {
        "kind": "CustomResourceDefinition",
        "spec": {
            "names": {"kind": "Widget"},
            "versions": [{"name": "v1", "storage": True, "schema": {"openAPIV3Schema": {"properties": {"spec": WIDGET_SPEC}}}}],
        },
    }
    real = crds.crd_documents()
    monkeypatch.setattr(crds, "crd_documents", lambda: (*real, crd))
    yield


def widget_request() -> type[Schema]:
    return derived.schema("WidgetRequest", RequestSchema, derived.request_fields(WIDGET))


def errors_of(payload: dict[str, Any]) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        widget_request()().load(payload)
    return flatten(caught.value.messages)


def test_request_fields_follow_the_crd_and_the_overlay() -> None:
    loaded = widget_request()().load({"size": 2, "tags": ["x"], "amount": None, "password": "p"})
    assert loaded == {"size": 2, "tags": ["x"], "amount": None, "password": "p", "mode": "a"}  # the overlay's request default
    assert errors_of({"tags": []}) == {"size": ["required"], "tags": ["must have a length between 1 and 3"]}
    assert errors_of({"size": 0, "tags": ["x"], "amount": 6}) == {"size": ["must be 1 or more"], "amount": ["must be between 0 and 5"]}
    assert errors_of({"size": 2**63, "tags": ["x"]}) == {"size": ["must be a smaller number"]}  # int64, in words
    assert errors_of({"size": 1, "tags": ["x"], "mode": "c", "label": "x" * 11}) == {
        "mode": ["must be one of a, b"],
        "label": ["must have a length of at most 10"],
    }
    assert errors_of({"size": 1, "tags": ["x"], "count": 1, "secretRef": {}, "password": "123456789"}) == {
        "count": ["unknown field"],  # renamed: the friendly name only
        "secretRef": ["unknown field"],  # hidden
        "password": ["must have a length between 1 and 8"],
    }
    fields = widget_request()._declared_fields
    assert list(fields) == ["size", "amount", "tags", "mode", "label", "password"]
    assert fields["tags"].metadata == {"uniqueItems": True}
    assert fields["label"].metadata == {"description": "A label."}
    assert fields["password"].load_only and fields["password"].metadata == {"description": "The password. Write-only."}


def test_response_fields_are_null_only_where_a_stored_object_may_lack_them() -> None:
    fields = derived.response_fields(WIDGET)
    assert list(fields) == ["size", "amount", "tags", "mode", "label"]  # never the write-only or hidden ones
    assert all(field.required for field in fields.values())
    assert {name for name, field in fields.items() if field.allow_none} == {"amount", "label"}
    assert fields["label"].metadata == {"description": "Its label."}


def test_the_spec_conversion_follows_the_crd_and_the_overlay() -> None:
    stored = {"count": 3, "size": 1, "secretRef": {"name": "s"}}
    assert list(friendly_spec(WIDGET, stored).items()) == [("size", 1), ("amount", 3), ("tags", []), ("mode", "a"), ("label", None)]
    assert friendly_spec(WIDGET, None) == {"size": None, "amount": None, "tags": [], "mode": "a", "label": None}
    payload = {"amount": 3, "size": 1, "tags": ("x",), "mode": None, "password": "p", "name": "w"}
    assert list(cr_spec(WIDGET, payload).items()) == [("size", 1), ("tags", ["x"]), ("count", 3)]  # required first


def test_an_overlay_naming_what_its_crd_does_not_have_is_stale() -> None:
    stale = Overlay(kind="Widget", fields={"gone": ApiField(ask="?")}, renames={"count": "amount"}, write_only={"box.key": ApiField()})
    assert crds.unknown_paths(stale) == ["gone", "box"]
    assert crds.unknown_paths(WIDGET) == []
    assert crds.unknown_paths(darkrooms.API) == []
    assert crds.unknown_paths(tasks.API) == []
    assert crds.unknown_paths(postgresqls.API) == []


def test_every_task_spec_field_is_derived_under_its_friendly_name() -> None:
    """A Task's spec fields come from its CRD (the schemas declare none of their own): taskState is shown as state;
    the deadline, a date-time, is loaded as a timestamp and written in UTC; the CRD's bounds and enum apply."""
    spec = [tasks.API.friendly(name) for name in crds.spec_schema("Task")["properties"]]
    assert spec == ["priority", "details", "deadline", "state"]
    assert set(spec) <= set(TaskUpdateSchema._declared_fields) & set(TaskSchema._declared_fields)
    assert "taskState" not in TaskSchema._declared_fields  # the seed's alias is accepted, never returned
    with pytest.raises(ValidationError) as refused:
        TaskUpdateSchema().load({"priority": 11, "deadline": "2031-01-01T00:00:00", "details": "x" * 4097, "state": "Done"})
    assert set(flatten(refused.value.messages)) == {"priority", "deadline", "details", "state"}
    loaded = TaskUpdateSchema().load({"priority": 3, "deadline": "2031-01-01T02:00:00+02:00", "taskState": "Finished"})
    assert cr_spec(tasks.API, loaded) == {"priority": 3, "deadline": "2031-01-01T00:00:00Z", "taskState": "Finished"}
    assert friendly_spec(tasks.API, {"priority": 3, "deadline": "2031-01-01T00:00:00Z"}) == {
        "priority": 3,
        "details": "",
        "deadline": "2031-01-01T00:00:00Z",
        "state": "Pending",
    }


def test_every_darkroom_spec_field_is_in_the_api_schemas() -> None:
    spec = crds.spec_schema("Darkroom")
    assert set(spec["properties"]) <= set(DarkroomUpdateSchema._declared_fields) & set(DarkroomSchema._declared_fields)
    source = set(crds.spec_schema("Darkroom", "source")["properties"]) - {"credentialsSecretRef"}  # the keys stand in for it
    assert source <= set(DarkroomSourceInputSchema._declared_fields) & set(DarkroomSourceSchema._declared_fields)
    assert set(darkrooms.KEY_FIELDS) <= set(DarkroomSourceInputSchema._declared_fields) - set(DarkroomSourceSchema._declared_fields)


def test_the_typed_shapes_match_the_crd_and_the_api() -> None:
    """The TypedDicts the reconciler and the API read through (mypy checks the keys they use) name the CRD's fields."""
    spec, source = crds.spec_schema("Darkroom")["properties"], crds.spec_schema("Darkroom", "source")["properties"]
    assert list(darkrooms.DarkroomSpec.__annotations__) == list(spec)
    assert list(darkrooms.DarkroomSource.__annotations__) == list(source)
    assert list(darkrooms.FriendlyDarkroom.__annotations__) == ["name", "namespace", *spec]
    echoed = {"credentialsSet", "credentialsSecret"}  # a response's, sent back and ignored
    assert list(darkrooms.FriendlySource.__annotations__) == [f for f in DarkroomSourceInputSchema._declared_fields if f not in echoed]


def test_every_postgresql_spec_field_is_derived() -> None:
    """A Postgresql's spec fields come from its CRD (the schemas declare none of their own): the write-only password
    after user and the computed passwordSet after passwordSecretRef, as the API has always listed them; the keys of a
    resource map are the overlay's, each with the map's value schema and the API's quantity rules."""
    spec = list(crds.spec_schema("Postgresql")["properties"])
    requested = [f for f in PostgresqlUpdateSchema._declared_fields if f in {*spec, "password", "passwordSet"}]
    assert requested == [*spec[:4], "password", spec[4], "passwordSet", *spec[5:]]
    shown = [f for f in PostgresqlSchema._declared_fields if f in {*spec, "passwordSet"}]
    assert shown == [*spec[:5], "passwordSet", *spec[5:]]
    assert PostgresqlUpdateSchema._declared_fields["password"].load_only and "password" not in PostgresqlSchema._declared_fields
    assert list(PostgresqlResourceListInputSchema._declared_fields) == list(postgresqls.RESOURCE_NAMES)
    assert list(PostgresqlResourceListSchema._declared_fields) == list(postgresqls.RESOURCE_NAMES)
    with pytest.raises(ValidationError) as refused:
        PostgresqlUpdateSchema().load({"version": "17\n", "storage": {"size": "0"}, "resources": {"limits": {"cpu": "1" * 33}}})
    errors = flatten(refused.value.messages)
    assert set(errors) == {"version", "storage.size", "resources.limits.cpu"}  # a whole-value pattern: no final newline
    assert errors["storage.size"] == ["must be more than 0"]
    assert errors["resources.limits.cpu"][0] == "must be at most 32 characters"


def test_postgresql_optional_objects_and_maps_convert_as_they_are_stored() -> None:
    """A passwordSecretRef absent is null (it requires a name, and the CRD gives it no default); the resource maps show
    their keys (null when absent) and parameters as stored; an optional object left empty never reaches the CR, unless
    the CRD gives it a default (storage: {})."""
    shown = friendly_spec(postgresqls.API, {"parameters": {"work_mem": "8MB"}})
    assert shown["passwordSecretRef"] is None and shown["parameters"] == {"work_mem": "8MB"}
    assert shown["resources"] == {"requests": {"cpu": None, "memory": None}, "limits": {"cpu": None, "memory": None}}
    assert friendly_spec(postgresqls.API, {"passwordSecretRef": {"name": "mine"}}, defaults=False)["passwordSecretRef"] == {
        "name": "mine",
        "key": None,
    }
    friendly = {"storage": {"size": None}, "resources": {"requests": {"cpu": None}, "limits": None}, "parameters": {"work_mem": None}}
    assert cr_spec(postgresqls.API, friendly) == {"storage": {}}


def test_the_postgresql_typed_shapes_match_the_crd_and_the_api() -> None:
    """The TypedDicts the reconciler (PostgresqlSpec, through pgchildren.spec_of) and the API (FriendlyPostgresql) read
    through name the CRD's fields and the request's."""
    spec = crds.spec_schema("Postgresql")["properties"]
    assert list(postgresqls.PostgresqlSpec.__annotations__) == list(spec)
    assert list(postgresqls.Storage.__annotations__) == list(crds.spec_schema("Postgresql", "storage")["properties"])
    assert list(postgresqls.FriendlyStorage.__annotations__) == list(crds.spec_schema("Postgresql", "storage")["properties"])
    assert list(postgresqls.SecretKeyRef.__annotations__) == list(crds.spec_schema("Postgresql", "passwordSecretRef")["properties"])
    echoed = {"passwordSet", "status", *ReadOnlyFields._declared_fields}  # a response's, sent back and ignored
    requested = [f for f in PostgresqlUpdateSchema._declared_fields if f not in echoed]
    assert list(postgresqls.FriendlyPostgresql.__annotations__) == requested
