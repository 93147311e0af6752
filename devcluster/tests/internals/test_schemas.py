"""devcluster.schemas: custom resources against their CRD's structural schema, as kube-apiserver.

Behaviours covered:
- apply_defaults fills missing properties whose parent exists, nested defaults inside defaulted
  objects, replaces non-nullable nulls, drops non-nullable nulls without default, keeps nullable
  nulls, never touches root apiVersion/kind/metadata, and does not mutate its input.
- prune drops unknown fields (reporting "spec.foo"-style paths, with list indices), keeps root
  apiVersion/kind/metadata, honours x-kubernetes-preserve-unknown-fields (while still pruning known
  sub-schemas), x-kubernetes-embedded-resource, additionalProperties and int-or-string.
- validate reports kube-apiserver's texts for type, nullable, format (date-time, date, byte, uuid,
  email, uri, ipv4), enum, minimum/maximum (+exclusive), multipleOf, minLength/maxLength, pattern,
  minItems/maxItems, min/maxProperties, required, list-type set/map duplicates, anyOf/oneOf/allOf/not,
  int-or-string, additionalProperties, embedded resources; ignores root metadata and unknown fields
  under preserve-unknown-fields.
- validate_crd checks name = plural.group, group, names, scope, versions and storage version,
  version names, structural schemas, defaults against their schema, additionalPrinterColumns.
"""

from __future__ import annotations

import copy
from typing import Any

from devcluster.schemas import apply_defaults, prune, validate, validate_crd

DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"

DARKROOM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["source"],
            "properties": {
                "version": {"type": "string"},
                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                "source": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {
                        "type": {"type": "string", "enum": ["WebFolder", "S3"]},
                        "baseUrl": {"type": "string", "format": "uri"},
                        "bucket": {"type": "string", "minLength": 3, "maxLength": 63},
                        "region": {"type": "string", "default": "us-east-1"},
                    },
                },
                "subDomains": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "pattern": DNS_LABEL},
                    "x-kubernetes-list-type": "set",
                },
                "cacheTime": {"type": "integer", "minimum": 0, "default": 31536000},
                "cache": {
                    "type": "object",
                    "default": {},
                    "properties": {"size": {"type": "string", "default": "1Gi"}, "ttl": {"type": "integer", "default": 60}},
                },
                "headers": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 5}},
                "port": {"x-kubernetes-int-or-string": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"known": {"type": "object"}}},
                "note": {"type": "string", "nullable": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"image": {"type": "string"}}}},
                },
                "routes": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}, "path": {"type": "string"}}},
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "conditions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["type", "status"],
                        "properties": {
                            "type": {"type": "string"},
                            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                            "lastTransitionTime": {"type": "string", "format": "date-time"},
                        },
                    },
                }
            },
        },
    },
}

TASK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["priority", "deadline"],
            "properties": {
                "priority": {"type": "integer", "minimum": 0, "maximum": 10},
                "details": {"type": "string", "maxLength": 1024},
                "deadline": {"type": "string", "format": "date-time"},
                "taskState": {"type": "string", "enum": ["Pending", "Finished"], "default": "Pending"},
            },
        }
    },
}


def darkroom(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"source": {"type": "WebFolder", "baseUrl": "https://example.com/img"}, "subDomains": ["img"]}
    base.update(spec)
    return {"apiVersion": "darkroom.example.com/v1", "kind": "Darkroom", "metadata": {"name": "dr", "namespace": "default"}, "spec": base}


def task(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"priority": 5, "deadline": "2024-05-01T12:00:00Z"}
    base.update(spec)
    return {"apiVersion": "tasks.example.com/v1", "kind": "Task", "metadata": {"name": "t"}, "spec": base}


def messages(causes: list[Any]) -> list[str]:
    return [str(c) for c in causes]


# ----------------------------------------------------------------------------- defaults


def test_defaults_fill_missing_properties_of_existing_parents() -> None:
    obj = darkroom()
    out = apply_defaults(obj, DARKROOM)
    assert out["spec"]["replicas"] == 1
    assert out["spec"]["cacheTime"] == 31536000
    assert out["spec"]["source"]["region"] == "us-east-1"
    assert "status" not in out  # parent missing: nothing defaulted
    assert "replicas" not in obj["spec"]  # input untouched


def test_defaults_do_not_override_given_values() -> None:
    out = apply_defaults(darkroom(replicas=0, cacheTime=5), DARKROOM)
    assert out["spec"]["replicas"] == 0
    assert out["spec"]["cacheTime"] == 5


def test_nested_defaults_apply_inside_defaulted_object() -> None:
    out = apply_defaults(darkroom(), DARKROOM)
    assert out["spec"]["cache"] == {"size": "1Gi", "ttl": 60}


def test_defaults_in_array_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "integer", "default": 1}}}}
        },
    }
    out = apply_defaults({"items": [{}, {"weight": 3}]}, schema)
    assert out["items"] == [{"weight": 1}, {"weight": 3}]


def test_non_nullable_null_is_defaulted_or_dropped_and_nullable_null_kept() -> None:
    obj = darkroom(replicas=None, version=None, note=None)
    out = apply_defaults(obj, DARKROOM)
    assert out["spec"]["replicas"] == 1
    assert "version" not in out["spec"]
    assert out["spec"]["note"] is None


def test_root_meta_fields_are_never_defaulted() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "default": "X"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "n"}}},
            "spec": {"type": "object", "default": {"a": 1}},
        },
    }
    out = apply_defaults({"metadata": {}}, schema)
    assert out == {"metadata": {}, "spec": {"a": 1}}


def test_task_state_defaults_to_pending() -> None:
    assert apply_defaults(task(), TASK)["spec"]["taskState"] == "Pending"


# ----------------------------------------------------------------------------- pruning


def test_prune_drops_unknown_fields_and_reports_paths() -> None:
    obj = darkroom(foo=1)
    obj["spec"]["source"]["bar"] = "x"
    obj["spec"]["routes"] = [{"name": "a", "weight": 3}]
    obj["top"] = True
    out, unknown = prune(obj, DARKROOM)
    assert unknown == ["spec.foo", "spec.routes[0].weight", "spec.source.bar", "top"]
    assert "foo" not in out["spec"] and "bar" not in out["spec"]["source"] and "top" not in out
    assert out["spec"]["routes"] == [{"name": "a"}]
    assert "foo" in obj["spec"]  # input untouched


def test_prune_keeps_root_type_and_object_meta_even_without_schema() -> None:
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"x": 1}}
    out, unknown = prune(obj, {"type": "object", "properties": {}})
    assert out == {"apiVersion": "v1", "kind": "K", "metadata": {"name": "x", "labels": {"a": "b"}}}
    assert unknown == ["spec"]


def test_prune_drops_root_meta_fields_of_the_wrong_type() -> None:
    out, unknown = prune({"apiVersion": 1, "metadata": "x"}, {"type": "object"})
    assert out == {}
    assert unknown == ["apiVersion", "metadata"]


def test_preserve_unknown_fields_keeps_unknowns_but_prunes_known_subschemas() -> None:
    obj = darkroom(extra={"anything": {"deep": [1, 2]}, "known": {"child": 1}})
    out, unknown = prune(obj, DARKROOM)
    assert out["spec"]["extra"] == {"anything": {"deep": [1, 2]}, "known": {}}
    assert unknown == ["spec.extra.known.child"]


def test_preserve_unknown_fields_at_root_keeps_everything() -> None:
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {}, "free": {"x": 1}}
    out, unknown = prune(obj, {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    assert out == obj and unknown == []


def test_embedded_resource_keeps_its_type_and_object_meta() -> None:
    tmpl = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"image": "x", "other": 1}, "junk": 1}
    out, unknown = prune(darkroom(template=tmpl), DARKROOM)
    assert out["spec"]["template"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"image": "x"}}
    assert unknown == ["spec.template.junk", "spec.template.spec.other"]


def test_additional_properties_schema_applies_to_every_key() -> None:
    schema = {
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "free": {"type": "object", "additionalProperties": True},
        },
    }
    out, unknown = prune({"m": {"k1": {"a": "x", "b": 1}, "k2": {"c": 2}}, "free": {"z": {"y": 1}}}, schema)
    assert out == {"m": {"k1": {"a": "x"}, "k2": {}}, "free": {"z": {"y": 1}}}
    assert unknown == ["m.k1.b", "m.k2.c"]


def test_int_or_string_values_are_kept() -> None:
    out, unknown = prune(darkroom(port="http"), DARKROOM)
    assert out["spec"]["port"] == "http" and unknown == []


# ----------------------------------------------------------------------------- validation


def test_valid_objects_have_no_causes() -> None:
    obj = darkroom(
        version="v1",
        replicas=2,
        headers={"a": "b"},
        port=8080,
        note=None,
        routes=[{"name": "a"}, {"name": "b"}],
        template={"apiVersion": "v1", "kind": "Pod", "spec": {}},
    )
    obj["status"] = {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-02T03:04:05.123+01:00"}]}
    assert validate(apply_defaults(obj, DARKROOM), DARKROOM) == []
    assert validate(apply_defaults(task(details="x" * 1024), TASK), TASK) == []


def test_minimum_and_maximum() -> None:
    assert messages(validate(darkroom(replicas=-1), DARKROOM)) == [
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
    ]
    assert messages(validate(task(priority=11), TASK)) == [
        "spec.priority: Invalid value: 11: spec.priority in body should be less than or equal to 10"
    ]


def test_exclusive_bounds_and_float_formatting() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1000000, "exclusiveMaximum": True}},
    }
    assert messages(validate({"x": 0}, schema)) == ["x: Invalid value: 0: x in body should be greater than 0"]
    assert messages(validate({"x": 1000000}, schema)) == ["x: Invalid value: 1000000: x in body should be less than 1000000"]
    assert messages(validate({"x": 2.5e6}, schema)) == ["x: Invalid value: 2500000.0: x in body should be less than 1e+06"]


def test_multiple_of() -> None:
    schema = {"type": "object", "properties": {"i": {"type": "integer", "multipleOf": 5}, "n": {"type": "number", "multipleOf": 0.1}}}
    assert validate({"i": 10, "n": 0.3}, schema) == []
    assert messages(validate({"i": 7, "n": 0.25}, schema)) == [
        "i: Invalid value: 7: i in body should be a multiple of 5",
        "n: Invalid value: 0.25: n in body should be a multiple of 0.1",
    ]


def test_type_errors_show_the_actual_type() -> None:
    causes = validate(darkroom(replicas="string"), DARKROOM)
    assert messages(causes) == ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"']
    assert causes[0].reason == "FieldValueTypeInvalid"
    assert messages(validate(darkroom(version=3), DARKROOM)) == [
        'spec.version: Invalid value: "integer": spec.version in body must be of type string: "integer"'
    ]
    assert messages(validate(darkroom(source="S3"), DARKROOM)) == [
        'spec.source: Invalid value: "string": spec.source in body must be of type object: "string"'
    ]
    assert messages(validate(darkroom(subDomains={"a": 1}), DARKROOM)) == [
        'spec.subDomains: Invalid value: "object": spec.subDomains in body must be of type array: "object"'
    ]


def test_integral_floats_are_integers_and_booleans_are_not() -> None:
    assert validate(darkroom(replicas=2.0), DARKROOM) == []
    assert messages(validate(darkroom(replicas=2.5), DARKROOM)) == [
        'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"'
    ]
    assert messages(validate(darkroom(replicas=True), DARKROOM)) == [
        'spec.replicas: Invalid value: "boolean": spec.replicas in body must be of type integer: "boolean"'
    ]


def test_null_needs_nullable() -> None:
    assert validate(darkroom(note=None), DARKROOM) == []
    assert messages(validate(darkroom(version=None), DARKROOM)) == [
        'spec.version: Invalid value: "null": spec.version in body must be of type string: "null"'
    ]


def test_date_time_format() -> None:
    causes = validate(task(deadline="tomorrow"), TASK)
    assert messages(causes) == ['spec.deadline: Invalid value: "tomorrow": spec.deadline in body must be of type date-time: "tomorrow"']
    assert causes[0].reason == "FieldValueTypeInvalid"
    for good in ("2024-02-29T23:59:59Z", "2024-01-01T00:00:00.5+02:00", "2024-01-01t10:00:00z"):
        assert validate(task(deadline=good), TASK) == [], good
    for bad in ("2024-02-30T10:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01 10:00:00Z", "2024-01-01T10:00:00", "2024-01-01"):
        assert validate(task(deadline=bad), TASK) != [], bad


def test_other_formats() -> None:
    props = {
        name: {"type": "string", "format": name}
        for name in ("date", "byte", "uuid", "email", "uri", "ipv4", "ipv6", "cidr", "hostname", "duration", "int32")
    }
    schema = {"type": "object", "properties": props}
    good = {
        "date": "2024-12-31",
        "byte": "aGVsbG8=",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
        "email": "someone@example.com",
        "uri": "https://example.com/a?b=c",
        "ipv4": "10.0.0.1",
        "ipv6": "::1",
        "cidr": "10.0.0.0/8",
        "hostname": "img.example.com",
        "duration": "1h30m",
        "int32": "unsupported formats are ignored",
    }
    assert validate(good, schema) == []
    bad = {
        "date": "2024-13-01",
        "byte": "not base64!",
        "uuid": "123",
        "email": "nobody",
        "uri": "relative/path",
        "ipv4": "10.0.0.256",
        "ipv6": "10.0.0.1",
        "cidr": "10.0.0.0",
        "hostname": "-bad-",
        "duration": "soon",
    }
    causes = validate(bad, schema)
    assert [c.field for c in causes] == list(bad)
    assert str(causes[0]) == 'date: Invalid value: "2024-13-01": date in body must be of type date: "2024-13-01"'


def test_enum_is_unsupported_value() -> None:
    causes = validate(darkroom(source={"type": "Foo"}), DARKROOM)
    assert messages(causes) == ['spec.source.type: Unsupported value: "Foo": supported values: "WebFolder", "S3"']
    assert causes[0].reason == "FieldValueNotSupported"
    schema = {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}}}
    assert messages(validate({"n": 3}, schema)) == ['n: Unsupported value: 3: supported values: "1", "2"']


def test_string_lengths_and_pattern() -> None:
    causes = validate(task(details="x" * 1025), TASK)
    assert messages(causes) == ["spec.details: Too long: may not be more than 1024 bytes"]
    assert causes[0].reason == "FieldValueTooLong"
    assert messages(validate(darkroom(source={"type": "S3", "bucket": "ab"}), DARKROOM)) == [
        'spec.source.bucket: Invalid value: "ab": spec.source.bucket in body should be at least 3 chars long'
    ]
    assert messages(validate(darkroom(subDomains=["ok", "Bad_Host"]), DARKROOM)) == [
        f"spec.subDomains[1]: Invalid value: \"Bad_Host\": spec.subDomains[1] in body should match '{DNS_LABEL}'"
    ]


def test_items_counts() -> None:
    assert messages(validate(darkroom(subDomains=[]), DARKROOM)) == [
        "spec.subDomains: Invalid value: 0: spec.subDomains in body should have at least 1 items"
    ]
    causes = validate(darkroom(subDomains=["a", "b", "c", "d"]), DARKROOM)
    assert messages(causes) == ["spec.subDomains: Too many: 4: must have at most 3 items"]
    assert causes[0].reason == "FieldValueTooMany"


def test_properties_counts() -> None:
    schema = {"type": "object", "properties": {"m": {"type": "object", "minProperties": 1, "maxProperties": 2}}}
    assert messages(validate({"m": {}}, schema)) == ["m: Invalid value: 0: m in body should have at least 1 properties"]
    assert messages(validate({"m": {"a": 1, "b": 2, "c": 3}}, schema)) == ["m: Too many: 3: must have at most 2 items"]


def test_required() -> None:
    causes = validate(task(priority=None, deadline=None) | {"spec": {}}, TASK)
    assert messages(causes) == ["spec.priority: Required value", "spec.deadline: Required value"]
    assert causes[0].reason == "FieldValueRequired"
    assert messages(validate(darkroom(source={}), DARKROOM)) == ["spec.source.type: Required value"]
    obj = darkroom()
    obj["status"] = {"conditions": [{"type": "Ready"}]}
    assert messages(validate(obj, DARKROOM)) == ["status.conditions[0].status: Required value"]


def test_list_type_set_duplicates() -> None:
    causes = validate(darkroom(subDomains=["a", "b", "a"]), DARKROOM)
    assert messages(causes) == ['spec.subDomains[2]: Duplicate value: "a"']
    assert causes[0].reason == "FieldValueDuplicate"
    # each repeated value is reported once, at its second occurrence
    assert [c.field for c in validate(darkroom(subDomains=["a", "a", "a"]), DARKROOM)] == ["spec.subDomains[1]"]


def test_list_type_map_duplicate_keys() -> None:
    causes = validate(darkroom(routes=[{"name": "a"}, {"name": "b", "path": "/"}, {"name": "a", "path": "/x"}]), DARKROOM)
    assert messages(causes) == ['spec.routes[2]: Duplicate value: {"name":"a"}']
    assert messages(validate(darkroom(routes=[{"path": "/"}]), DARKROOM)) == ["spec.routes[0].name: Required value"]


def test_additional_properties_values_are_validated() -> None:
    assert messages(validate(darkroom(headers={"ok": "short", "long": "toolong"}), DARKROOM)) == [
        "spec.headers.long: Too long: may not be more than 5 bytes"
    ]


def test_int_or_string() -> None:
    assert validate(darkroom(port=80), DARKROOM) == []
    assert validate(darkroom(port="http"), DARKROOM) == []
    assert messages(validate(darkroom(port=True), DARKROOM)) == [
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'
    ]


def test_any_of_one_of_all_of_not() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "anyOf": [{"maxLength": 2}, {"pattern": "^x"}]},
            "o": {"type": "integer", "oneOf": [{"minimum": 5}, {"maximum": 10}]},
            "l": {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 3}]},
            "n": {"type": "string", "not": {"enum": ["forbidden"]}},
        },
    }
    assert validate({"a": "xyz", "o": 1, "l": 2, "n": "ok"}, schema) == []
    assert messages(validate({"a": "abc"}, schema)) == [
        '<nil>: Invalid value: "": "a" must validate at least one schema (anyOf)',
        "a: Too long: may not be more than 2 bytes",
    ]
    assert messages(validate({"o": 7}, schema)) == [
        '<nil>: Invalid value: "": "o" must validate one and only one schema (oneOf). Found 2 valid alternatives'
    ]
    assert messages(validate({"l": 4}, schema)) == [
        "l: Invalid value: 4: l in body should be less than or equal to 3",
        '<nil>: Invalid value: "": "l" must validate all the schemas (allOf)',
    ]
    assert messages(validate({"n": "forbidden"}, schema)) == ['<nil>: Invalid value: "": "n" must not validate the schema (not)']


def test_embedded_resource_needs_api_version_and_kind() -> None:
    assert messages(validate(darkroom(template={"spec": {}}), DARKROOM)) == [
        "spec.template.apiVersion: Required value: must not be empty",
        "spec.template.kind: Required value: must not be empty",
    ]


def test_root_metadata_and_preserved_unknowns_are_not_validated() -> None:
    schema = {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 2}}}}}
    assert validate({"metadata": {"name": "too-long-name"}}, schema) == []
    assert validate(darkroom(extra={"whatever": [1, "x", None]}), DARKROOM) == []


def test_several_problems_are_all_reported() -> None:
    causes = validate(task(priority=-1, details="y" * 2000, deadline="never", taskState="Done"), TASK)
    assert [c.field for c in causes] == ["spec.priority", "spec.details", "spec.deadline", "spec.taskState"]


# ----------------------------------------------------------------------------- CRDs


def crd(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "darkrooms.darkroom.example.com"},
        "spec": {
            "group": "darkroom.example.com",
            "scope": "Namespaced",
            "names": {"plural": "darkrooms", "singular": "darkroom", "kind": "Darkroom", "shortNames": ["dr"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": copy.deepcopy(DARKROOM)},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }
    for key, value in overrides.items():
        base["spec"][key] = value
    return base


def test_valid_crd() -> None:
    assert validate_crd(crd()) == []
    tasks = crd(group="tasks.example.com", names={"plural": "tasks", "kind": "Task"})
    tasks["metadata"]["name"] = "tasks.tasks.example.com"
    tasks["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = copy.deepcopy(TASK)
    assert validate_crd(tasks) == []


def test_crd_name_must_be_plural_dot_group() -> None:
    obj = crd()
    obj["metadata"]["name"] = "darkroom.example.com"
    assert messages(validate_crd(obj)) == ['metadata.name: Invalid value: "darkroom.example.com": must be spec.names.plural+"."+spec.group']


def test_crd_group_needs_a_dot() -> None:
    obj = crd(group="example")
    obj["metadata"]["name"] = "darkrooms.example"
    assert 'spec.group: Invalid value: "example": should be a domain with at least one dot' in messages(validate_crd(obj))


def test_crd_names_and_scope() -> None:
    obj = crd(scope="Global", names={"plural": "DarkRooms", "kind": ""})
    obj["metadata"]["name"] = "DarkRooms.darkroom.example.com"
    found = messages(validate_crd(obj))
    assert 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"' in found
    assert "spec.names.kind: Required value" in found
    assert any(m.startswith('spec.names.plural: Invalid value: "DarkRooms": a DNS-1035 label must consist of') for m in found)
    assert any(
        m.startswith('metadata.name: Invalid value: "DarkRooms.darkroom.example.com": a lowercase RFC 1123 subdomain') for m in found
    )


def test_crd_needs_exactly_one_storage_version() -> None:
    obj = crd()
    second = copy.deepcopy(obj["spec"]["versions"][0])
    second["name"] = "v2"
    obj["spec"]["versions"].append(second)
    causes = validate_crd(obj)
    assert len(causes) == 1
    assert causes[0].field == "spec.versions"
    assert causes[0].message.endswith(": must have exactly one version marked as storage version")
    obj["spec"]["versions"] = []
    assert "spec.versions: Required value: must have at least one version" in messages(validate_crd(obj))


def test_crd_version_names() -> None:
    obj = crd()
    obj["spec"]["versions"][0]["name"] = "V1"
    found = messages(validate_crd(obj))
    assert len(found) == 1 and found[0].startswith('spec.versions[0].name: Invalid value: "V1": a DNS-1035 label')


def test_crd_schema_must_be_structural() -> None:
    obj = crd()
    root = obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    del root["properties"]["spec"]["properties"]["version"]["type"]
    root["properties"]["spec"]["properties"]["subDomains"]["items"] = {"pattern": "x"}
    root["properties"]["status"]["additionalProperties"] = {"type": "string"}
    root["properties"]["spec"]["properties"]["port"]["type"] = "string"
    found = messages(validate_crd(obj))
    p = "spec.versions[0].schema.openAPIV3Schema"
    assert f"{p}.properties[spec].properties[version].type: Required value: must not be empty for specified object fields" in found
    assert f"{p}.properties[spec].properties[subDomains].items.type: Required value: must not be empty for specified array items" in found
    assert f"{p}.properties[status].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive" in found
    assert (
        f'{p}.properties[spec].properties[port].type: Invalid value: "string": must be empty if x-kubernetes-int-or-string is true'
    ) in found


def test_crd_schema_root_and_presence() -> None:
    obj = crd()
    obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {"type": "string"}
    assert messages(validate_crd(obj)) == [
        'spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root'
    ]
    del obj["spec"]["versions"][0]["schema"]
    assert messages(validate_crd(obj)) == ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]


def test_crd_defaults_must_validate() -> None:
    obj = crd()
    spec = obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec["replicas"]["default"] = -1
    spec["cache"]["default"] = {"size": 5}
    found = messages(validate_crd(obj))
    p = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties"
    assert found == [
        f"{p}[replicas].default: Invalid value: -1: in body should be greater than or equal to 0",
        f'{p}[cache].default.size: Invalid value: "integer": size in body must be of type string: "integer"',
    ]


def test_crd_printer_columns() -> None:
    obj = crd()
    obj["spec"]["versions"][0]["additionalPrinterColumns"] = [{"name": "X", "type": "text", "jsonPath": ".spec.x"}, {"type": "string"}]
    p = "spec.versions[0].additionalPrinterColumns"
    assert messages(validate_crd(obj)) == [
        f'{p}[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
        f"{p}[1].name: Required value",
        f"{p}[1].jsonPath: Required value",
    ]
