"""formgen: forms generated from a CRD's openAPIV3Schema plus a FormSpec (no cluster, no Flask app).

Behaviours: the CRDs in crds/ are read once and the storage version's schema is used; an unknown kind,
a path the CRD lacks and a shape formgen cannot render (arrays, a map without fixed keys or rows) are
FormSpecErrors. The Postgresql form: sections in order, widgets by type (text, select for an enum,
password for the write-only field), defaults as placeholders or the preselected option, maxLength and
pattern (escaped for the browser's "v" mode), help from the CRD's descriptions (or the FormSpec's),
required-with-its-group, fixed-after-creation, the parameter rows offering exactly the allowlist,
error-summary titles. Values: a stored object's (never a password) and a submitted form's; the
payload (blank fields left out, the password taken from the form untouched, parameter rows as a map,
a row without a name or a name chosen twice a 422 on that row) is what the JSON API's schema
validates, its field paths being the form's; values of a stored object become a payload that loads
to the same spec; rows are added and removed. Integer fields (the Task CRD: number with min/max,
datetime-local in UTC, textarea for a long text, an enum renamed to its friendly name) give the same
payload as the hand-written Task form.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from marshmallow import ValidationError
from werkzeug.datastructures import MultiDict

from backend.api.problems import problem_of
from backend.core.errors import Invalid
from backend.core.kinds import postgresqls as conversion
from backend.core.schemas.postgresqls import PostgresqlCreateSchema, PostgresqlUpdateSchema
from backend.core.schemas.tasks import TaskCreateSchema
from backend.core.validation import flatten
from backend.dashboard import darkroompages, pgpages
from backend.dashboard import forms as formgen
from backend.dashboard.forms import generating
from kinds import postgresqls as kind

FORM = pgpages.FORM_OF
PASSWORD = "  spaced Password 1  "


def by_path(form: formgen.Form) -> dict[str, formgen.Field]:
    return {f.path: f for f in form.fields()}


def submitted(**fields: Any) -> MultiDict[str, str]:
    data: MultiDict[str, str] = MultiDict()
    for key, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            data.add(key.replace("__", "."), item)
    return data


def test_crds_are_read_once_and_the_storage_version_is_used() -> None:
    schema = formgen.crd_schema("Postgresql")
    assert schema is formgen.crd_schema("Postgresql")
    assert generating._crd_documents() is generating._crd_documents()
    assert "deletionPolicy" in schema["properties"]["spec"]["properties"]
    with pytest.raises(formgen.FormSpecError, match="no CRD of kind Nothing"):
        formgen.crd_schema("Nothing")


def test_the_postgresql_form_follows_the_crd() -> None:
    assert [s.label for s in FORM.sections] == ["Database", "Password", "Data volume", "Resources", "Parameters", "Deletion"]
    fields = by_path(FORM)
    assert list(fields) == [
        "version",
        "databaseName",
        "user",
        "password",
        "passwordSecretRef.name",
        "passwordSecretRef.key",
        "storage.size",
        "storage.storageClassName",
        "resources.requests.cpu",
        "resources.requests.memory",
        "resources.limits.cpu",
        "resources.limits.memory",
        "deletionPolicy",
    ]
    version = fields["version"]
    assert (version.widget, version.default, version.max_length, version.label) == ("text", kind.DEFAULT_VERSION, 8, "PostgreSQL version")
    assert version.pattern == "(13|14|15|16|17|18)(\\.[0-9]{1,2})?" and version.suggestions == kind.VERSIONS
    assert 'e.g. "17" or "16.4"' in version.help  # the CRD's description
    policy = fields["deletionPolicy"]
    assert (policy.widget, policy.options, policy.default) == ("select", kind.DELETION_POLICIES, kind.DEFAULT_DELETION_POLICY)
    assert fields["password"].widget == "password" and fields["password"].write_only
    ref_name = fields["passwordSecretRef.name"]
    assert not ref_name.required and ref_name.required_with == "Existing Secret"
    assert ref_name.pattern is not None and "[\\-a-z0-9]" in ref_name.pattern  # a literal "-" escaped for the "v" flag
    assert fields["passwordSecretRef.key"].default == kind.PASSWORD_KEY and fields["passwordSecretRef.key"].required_with is None
    assert fields["storage.storageClassName"].fixed and fields["storage.size"].fixed and not fields["version"].fixed
    assert fields["resources.limits.cpu"].title == "Resources / Limits / CPU"
    assert fields["resources.requests.memory"].help.startswith("Memory, e.g.")
    (parameters,) = FORM.pairs()
    assert set(parameters.names) == set(kind.PARAMETERS) and parameters.noun == "parameter"
    assert parameters.names["log_statement"] == "one of none, ddl, mod, all" and parameters.max_rows == len(kind.PARAMETERS)
    titles = FORM.titles({"parameters.work_mem": ["x"], "storage.size": ["y"]})
    assert titles["parameters.work_mem"] == "Parameter work_mem" and titles["storage.size"] == "Data volume / Size"


def test_helpers() -> None:
    assert formgen.humanize("storageClassName") == "Storage class name"
    assert formgen.humanize("cacheTime") == "Cache time"
    assert formgen.js_pattern("^[-._a-z]+$") == "[\\-._a-z]+"
    assert formgen.js_pattern("^[a-z-]$") == "[a-z\\-]"
    assert formgen.js_pattern(None) is None


def test_blank_values_and_stored_values() -> None:
    blank = FORM.blank("shop")
    assert blank["namespace"] == "shop" and blank["version"] == "" and blank["deletionPolicy"] == "Retain"
    assert blank["parameters"] == [("", "")] and "password" not in blank

    spec = {
        "version": "16",
        "user": "owner",
        "storage": {"size": "5Gi", "storageClassName": "fast"},
        "resources": {"limits": {"memory": "1Gi"}},
        "parameters": {"work_mem": "8MB", "max_connections": "200"},
    }
    cr = {"apiVersion": "database.db.example.com/v1", "kind": "Postgresql", "spec": spec,
          "metadata": {"name": "orders", "namespace": "shop", "uid": "u", "resourceVersion": "3", "generation": 2}}  # fmt: skip
    values = FORM.values_of(conversion.to_friendly(cr))
    assert values["generation"] == "2" and values["storage.size"] == "5Gi" and values["resources.limits.memory"] == "1Gi"
    assert values["resources.requests.cpu"] == "" and values["passwordSecretRef.name"] == ""
    assert values["parameters"] == [("max_connections", "200"), ("work_mem", "8MB")]
    assert "password" not in values
    # What a stored object's form submits unchanged is what is stored.
    form = submitted(**{k: v for k, v in values.items() if isinstance(v, str)}, **{"parameters:name": ["max_connections", "work_mem"],
                     "parameters:value": ["200", "8MB"]})  # fmt: skip
    payload = FORM.payload(FORM.form_values(form), form, create=False)
    assert conversion.to_spec(PostgresqlUpdateSchema().load(payload)) == {**spec, "databaseName": "app", "deletionPolicy": "Retain"}


def test_submitted_form_to_payload() -> None:
    form = submitted(
        name=" orders ",
        namespace="shop",
        version=" 16 ",
        password=PASSWORD,
        storage__size="",
        resources__requests__cpu="250m",
        deletionPolicy="Delete",
        **{"parameters:name": ["work_mem", ""], "parameters:value": ["4MB", ""]},
    )
    values = FORM.form_values(form)
    assert values["name"] == "orders" and values["version"] == "16" and "password" not in values
    payload = FORM.payload(values, form, create=True)
    assert payload == {
        "name": "orders",
        "namespace": "shop",
        "version": "16",
        "password": PASSWORD,  # as typed: spaces belong to a password
        "resources": {"requests": {"cpu": "250m"}},
        "parameters": {"work_mem": "4MB"},
        "deletionPolicy": "Delete",
    }
    assert PostgresqlCreateSchema().load(payload)["password"] == PASSWORD
    assert "name" not in FORM.payload(values, form, create=False)


def test_schema_errors_land_on_form_fields() -> None:
    form = submitted(
        name="Bad_Name",
        version="9",
        storage__size="big",
        passwordSecretRef__key="x",
        resources__requests__cpu="2",
        resources__limits__cpu="1",
        **{"parameters:name": ["max_connections"], "parameters:value": ["many"]},
    )
    payload = FORM.payload(FORM.form_values(form), form, create=True)
    with pytest.raises(ValidationError) as caught:
        PostgresqlCreateSchema().load(payload)
    errors = flatten(caught.value.messages)
    fields = {*by_path(FORM), "name", "namespace"}
    assert set(errors) == {
        "name",
        "version",
        "storage.size",
        "passwordSecretRef.name",
        "resources.requests.cpu",
        "parameters.max_connections",
    }
    assert all(path in fields or path.startswith("parameters.") for path in errors)


def test_rows_without_a_name_or_chosen_twice_are_422() -> None:
    form = submitted(**{"parameters:name": ["work_mem", "work_mem", ""], "parameters:value": ["1MB", "2MB", "orphan"]})
    with pytest.raises(Invalid) as caught:
        FORM.payload(FORM.form_values(form), form, create=False)
    assert problem_of(caught.value).status == 422
    assert caught.value.errors == {
        "parameters.work_mem": ["chosen twice: keep one row"],
        "parameters": ["choose a name for the value 'orphan'"],
    }


def test_rows_are_added_and_removed() -> None:
    values = FORM.form_values(submitted(**{"parameters:name": ["work_mem", "timezone"], "parameters:value": ["1MB", "UTC"]}))
    assert FORM.rearranged(values, MultiDict({"add-row": "parameters"})) and len(values["parameters"]) == 3
    assert FORM.rearranged(values, MultiDict({"remove-row": "parameters:0"}))
    assert values["parameters"] == [("timezone", "UTC"), ("", "")]
    assert FORM.rearranged(values, MultiDict({"remove-row": "parameters:9"})) and len(values["parameters"]) == 2
    assert not FORM.rearranged(values, MultiDict({"action": "save"}))
    assert not FORM.rearranged(values, MultiDict({"add-row": "version"}))


TASK_SPEC = formgen.FormSpec(
    kind="Task",
    sections=(formgen.Section(legend="Task", paths=("priority", "deadline", "details", "state")),),
    renames={"taskState": "state"},
)


def test_the_task_form_follows_the_task_crd() -> None:
    """The Task form: number with min/max, datetime-local in UTC, a textarea for a long text, an enum renamed."""
    task = formgen.build(TASK_SPEC)
    fields = by_path(task)
    assert (fields["priority"].widget, fields["priority"].minimum, fields["priority"].maximum, fields["priority"].required) == (
        "number",
        0,
        10,
        True,
    )
    assert fields["deadline"].widget == "datetime-local" and fields["details"].widget == "textarea"
    assert fields["state"].options == ("Pending", "Finished") and fields["state"].default == "Pending"
    form = submitted(name="t", namespace="ns", priority="3", deadline="2031-01-01T17:00", details="a\r\nb", state="Pending")
    values = task.form_values(form)
    payload = task.payload(values, form, create=True)
    assert payload == {
        "name": "t",
        "namespace": "ns",
        "priority": 3,
        "deadline": "2031-01-01T17:00:00Z",
        "details": "a\nb",
        "state": "Pending",
    }
    assert TaskCreateSchema().load(payload)["priority"] == 3
    assert task.payload(task.form_values(submitted(priority="two")), MultiDict(), create=False)["priority"] == "two"  # the schema says why
    assert task.values_of({"deadline": "2031-01-01T17:00:00Z", "priority": 3})["deadline"] == "2031-01-01T17:00"


def test_what_formgen_cannot_render_is_an_error() -> None:
    schema = {"properties": {"spec": {"type": "object", "properties": {"rules": {"type": "array", "items": {"type": "object"}}}}}}
    with pytest.raises(formgen.FormSpecError, match="rules: formgen renders lists of strings, not of 'object'"):
        generating._Builder(formgen.FormSpec(kind="X", sections=()), schema).section(formgen.Section(legend="x", paths=("rules",)))
    with pytest.raises(formgen.FormSpecError, match=r"has no spec\.nothing"):
        formgen.build(formgen.FormSpec(kind="Darkroom", sections=(formgen.Section(legend="x", paths=("nothing",)),)))
    with pytest.raises(formgen.FormSpecError, match="parameters: a map needs fixed_keys or pairs"):
        formgen.build(formgen.FormSpec(kind="Postgresql", sections=(formgen.Section(legend="x", paths=("parameters",)),)))
    with pytest.raises(formgen.FormSpecError, match="the switch's key colour is not an enum"):
        formgen.build(replace(darkroompages.FORM_SPEC, switches={"source": formgen.Switch(key="colour", members={"A": ()})}))
    with pytest.raises(formgen.FormSpecError, match=r"the stand-in.s field source\.pin is not in write_only"):
        stand_in = formgen.StandIn(label="x", fields=("source.pin",))
        formgen.build(replace(darkroompages.FORM_SPEC, stand_ins={"source.credentialsSecretRef": stand_in}))


def test_a_section_may_take_every_spec_field_no_section_names() -> None:
    """``Section(rest=True)``: the CRD's fields no section names land there, in CRD order (renamed), so a new spec
    field is in the form without a FormSpec change; the Darkroom's form says so for its last section."""
    spec = formgen.FormSpec(
        kind="Task",
        sections=(formgen.Section(legend="Due", paths=("deadline",)), formgen.Section(legend="More", paths=(), rest=True)),
        renames={"taskState": "state"},
    )
    due, more = formgen.build(spec).sections
    assert [c.path for c in due.children] == ["deadline"]
    assert [c.path for c in more.children] == ["priority", "details", "state"]
    assert darkroompages.FORM_SPEC.sections[-1].rest
