"""devcluster.naming: names and object metadata, with apimachinery's message texts.

Behaviours covered:
- DNS-1123 label / subdomain and DNS-1035 label checks: length limits and regex messages (a label
  that is a valid subdomain: "must not contain dots").
- qualified names (optional DNS prefix, 63-char name part) and label values.
- validate_object_meta: name / generateName (subdomain and label rules), required name on create,
  namespace required or forbidden by scope, negative generation, label keys and values, annotation
  keys and total size, finalizers (and, for built-in kinds, core's rule that a finalizer without a
  ``/`` is a standard one), ownerReferences fields (Required at indexed paths) and single controller.
"""

from __future__ import annotations

from typing import Any

from devcluster.naming import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
    validate_object_meta,
)

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
QNAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def meta(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "my-darkroom", "namespace": "default"}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def check(m: dict[str, Any], *, rule: str = "subdomain", namespaced: bool = True, creating: bool = True) -> list[str]:
    return [str(c) for c in validate_object_meta(m, name_rule=rule, namespaced=namespaced, creating=creating)]


def test_dns1123_label() -> None:
    assert dns1123_label_errors("my-name") == []
    assert dns1123_label_errors("123-abc") == []
    assert dns1123_label_errors("My_Name") == [LABEL_MSG]
    assert dns1123_label_errors("-a") == [LABEL_MSG]
    assert dns1123_label_errors("a.b") == ["must not contain dots"]  # a valid subdomain, so only the dots are wrong
    assert dns1123_label_errors("a" * 63) == []
    assert dns1123_label_errors("a" * 64) == ["must be no more than 63 characters"]
    assert dns1123_label_errors("") == [LABEL_MSG]


def test_dns1123_subdomain() -> None:
    assert dns1123_subdomain_errors("darkrooms.example.com") == []
    assert dns1123_subdomain_errors("Bad_Name") == [SUBDOMAIN_MSG]
    assert dns1123_subdomain_errors("a..b") == [SUBDOMAIN_MSG]
    assert dns1123_subdomain_errors(".".join(["a" * 63] * 3) + "." + "a" * 61) == []  # 253 chars
    assert dns1123_subdomain_errors("a" * 254) == ["must be no more than 253 characters"]


def test_dns1035_label() -> None:
    assert dns1035_label_errors("v1beta1") == []
    assert dns1035_label_errors("1v") == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
        "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_qualified_names() -> None:
    assert qualified_name_errors("app") == []
    assert qualified_name_errors("darkroom.example.com/My_Name.x") == []
    assert qualified_name_errors("-bad") == [QNAME_MSG]
    assert qualified_name_errors("/x") == ["prefix part must be non-empty"]
    assert qualified_name_errors("Example.com/x") == ["prefix part " + SUBDOMAIN_MSG]
    assert qualified_name_errors("a/") == ["name part must be non-empty", QNAME_MSG]
    assert qualified_name_errors("x" * 64) == ["name part must be no more than 63 characters"]
    assert qualified_name_errors("a/b/c")[0].startswith("a qualified name must consist of")
    assert qualified_name_errors("a/b/c")[0].endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


def test_label_values() -> None:
    assert label_value_errors("") == []
    assert label_value_errors("v1.2_3-x") == []
    assert label_value_errors("bad value") == [LABEL_VALUE_MSG]
    assert label_value_errors("a" * 64) == ["must be no more than 63 characters"]


def test_valid_meta() -> None:
    m = meta(
        labels={"app": "darkroom", "darkroom.example.com/tier": ""},
        annotations={"Example.com/Note": "anything goes"},
        finalizers=["darkroom.example.com/cleanup"],
        ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u1", "controller": True}],
    )
    assert check(m) == []


def test_name_rules() -> None:
    assert check(meta(name="Bad_Name")) == [f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}']
    assert check(meta(name="a.b"), rule="label") == ['metadata.name: Invalid value: "a.b": must not contain dots']
    assert check(meta(name="a.b")) == []


def test_name_required_unless_generate_name() -> None:
    assert check(meta(name=None)) == ["metadata.name: Required value: name or generateName is required"]
    assert check(meta(name=None, generateName="dr-")) == []
    assert check(meta(name=None, generateName="Bad-")) == [f'metadata.generateName: Invalid value: "Bad-": {SUBDOMAIN_MSG}']
    assert check(meta(name=None), creating=False) == ["metadata.name: Required value: name or generateName is required"]


def test_namespace_by_scope() -> None:
    assert check(meta(namespace=None)) == ["metadata.namespace: Required value"]
    assert check(meta(namespace="Bad")) == [f'metadata.namespace: Invalid value: "Bad": {LABEL_MSG}']
    assert check(meta(namespace=None), namespaced=False) == []
    assert check(meta(), namespaced=False) == ["metadata.namespace: Forbidden: not allowed on this type"]


def test_generation_not_negative() -> None:
    assert check(meta(generation=-1)) == ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]


def test_labels() -> None:
    found = check(meta(labels={"bad key!": "ok", "good": "bad value", "x": "a" * 64}))
    assert found == [
        f'metadata.labels: Invalid value: "bad key!": {QNAME_MSG}',
        f'metadata.labels: Invalid value: "bad value": {LABEL_VALUE_MSG}',
        f'metadata.labels: Invalid value: "{"a" * 64}": must be no more than 63 characters',
    ]


def test_annotations() -> None:
    assert check(meta(annotations={"bad key": "v"})) == [f'metadata.annotations: Invalid value: "bad key": {QNAME_MSG}']
    causes = validate_object_meta(meta(annotations={"a": "x" * 262144}), name_rule="subdomain", namespaced=True, creating=True)
    assert [str(c) for c in causes] == ["metadata.annotations: Too long: must have at most 262144 bytes"]
    assert causes[0].reason == "FieldValueTooLong"
    assert check(meta(annotations={"a": "x" * 262143})) == []


def test_finalizers() -> None:
    assert check(meta(finalizers=["bad finalizer"])) == [f'metadata.finalizers: Invalid value: "bad finalizer": {QNAME_MSG}']


def test_owner_references() -> None:
    found = check(meta(ownerReferences=[{"apiVersion": "", "kind": "", "name": "", "uid": ""}]))
    assert found == [
        "metadata.ownerReferences[0].apiVersion: Required value: must not be empty",
        "metadata.ownerReferences[0].kind: Required value: must not be empty",
        "metadata.ownerReferences[0].name: Required value: must not be empty",
        "metadata.ownerReferences[0].uid: Required value: must not be empty",
    ]
    found = check(meta(ownerReferences=[{"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"}]))
    assert found == ['metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": version must not be empty']
    refs = [
        {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": True},
    ]
    found = check(meta(ownerReferences=refs))
    assert len(found) == 1
    assert found[0].startswith("metadata.ownerReferences: Invalid value: ")
    assert found[0].endswith('Only one reference can have Controller set to true. Found "true" in references for A/a and B/b')


def test_builtin_finalizer_names() -> None:
    finalizers = ["kubernetes", "orphan", "example.com/x", "plain"]
    assert validate_object_meta(meta(finalizers=finalizers), name_rule="subdomain", namespaced=True, creating=True) == []
    found = [
        str(c)
        for c in validate_object_meta(meta(finalizers=finalizers), name_rule="subdomain", namespaced=True, creating=True, builtin=True)
    ]
    assert found == ['metadata.finalizers[3]: Invalid value: "plain": name is neither a standard finalizer name nor is it fully qualified']
