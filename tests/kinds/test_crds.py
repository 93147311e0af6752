"""The CRDs under crds/ and the samples under crds/samples/ say what the project relies on.

Behaviours covered:

- every YAML file under crds/ and crds/samples/ parses, and every document has apiVersion/kind/metadata.name;
- the Darkroom and Task CRDs: names, group, scope, the served versions and the storage version (kinds/ names
  them), a deprecated Darkroom v1alpha1 that differs from v1 in nothing but its name (conversion strategy None:
  only apiVersion changes, so a field one version had and the other lacked would be lost), the status
  subresource, printer columns (name, type, jsonPath, priority), required fields, defaults,
  bounds, enums, patterns and list types;
- both schemas are structural: every node is typed (or preserves unknown fields) and described,
  so ``kubectl explain`` has something to show;
- conditions follow metav1.Condition (required keys, status enum, map list keyed by type);
- the samples reference the right kinds, validate against the CRD schemas (a small validator
  covering type/enum/pattern/required/bounds), and the S3 sample's credentials live only in its
  Secret, which the Darkroom references by name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from kinds import darkrooms, postgresqls, tasks

ROOT = Path(__file__).resolve().parents[2]
CRDS = ROOT / "crds"
SAMPLES = CRDS / "samples"


def load(path: Path) -> list[dict[str, Any]]:
    with path.open() as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def crd(name: str) -> dict[str, Any]:
    (doc,) = load(CRDS / f"{name}.yaml")
    return doc


def storage_version(doc: dict[str, Any]) -> dict[str, Any]:
    version: dict[str, Any]
    (version,) = [v for v in doc["spec"]["versions"] if v["storage"]]
    return version


def schema(doc: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = storage_version(doc)["schema"]["openAPIV3Schema"]
    return found


def at(node: dict[str, Any], path: str) -> dict[str, Any]:
    for part in path.split("."):
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


def columns(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"].upper(): c for c in storage_version(doc)["additionalPrinterColumns"]}


def all_documents() -> list[tuple[Path, dict[str, Any]]]:
    paths = sorted(CRDS.glob("*.yaml")) + sorted(SAMPLES.glob("*.yaml"))
    return [(path, doc) for path in paths for doc in load(path)]


# --- a minimal structural-schema validator, enough for the samples ---------------------------

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def validate(value: Any, node: dict[str, Any], path: str = "") -> list[str]:
    kind = node.get("type")
    if kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return [f"{path}: want integer, got {value!r}"]
    elif kind == "number":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return [f"{path}: want number, got {value!r}"]
    elif kind in _TYPES and not isinstance(value, _TYPES[kind]):
        return [f"{path}: want {kind}, got {value!r}"]
    errors: list[str] = []
    if "enum" in node and value not in node["enum"]:
        errors.append(f"{path}: {value!r} not in {node['enum']}")
    if isinstance(value, str):
        errors += _string_errors(value, node, path)
    if isinstance(value, int) and not isinstance(value, bool) and not node.get("minimum", value) <= value <= node.get("maximum", value):
        errors.append(f"{path}: {value} out of range")
    if isinstance(value, list):
        errors += _list_errors(value, node, path)
    if isinstance(value, dict) and "properties" in node:
        errors += _object_errors(value, node, path)
    return errors


def _string_errors(value: str, node: dict[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    if "pattern" in node and not re.search(node["pattern"], value):
        errors.append(f"{path}: {value!r} does not match {node['pattern']}")
    if len(value) > node.get("maxLength", len(value)):
        errors.append(f"{path}: too long")
    if node.get("format") == "date-time" and not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$", value):
        errors.append(f"{path}: {value!r} is not a date-time")
    return errors


def _list_errors(value: list[Any], node: dict[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    if len(value) < node.get("minItems", 0) or len(value) > node.get("maxItems", len(value)):
        errors.append(f"{path}: wrong number of items")
    if node.get("x-kubernetes-list-type") == "set" and len(set(map(str, value))) != len(value):
        errors.append(f"{path}: duplicate set items")
    for i, item in enumerate(value):
        errors += validate(item, node["items"], f"{path}[{i}]")
    return errors


def _object_errors(value: dict[str, Any], node: dict[str, Any], path: str) -> list[str]:
    errors = [f"{path}.{key}: required" for key in node.get("required", []) if key not in value]
    for key, item in value.items():
        if key in node["properties"]:
            errors += validate(item, node["properties"][key], f"{path}.{key}")
        elif path not in (".metadata",) and not node.get("x-kubernetes-preserve-unknown-fields"):
            errors.append(f"{path}.{key}: unknown field")
    return errors


def walk(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    nodes = [(path or "<root>", node)]
    for key, child in (node.get("properties") or {}).items():
        nodes += walk(child, f"{path}.{key}")
    if "items" in node:
        nodes += walk(node["items"], f"{path}[]")
    return nodes


# --- every file ----------------------------------------------------------------------------


def test_every_yaml_document_is_a_kubernetes_object() -> None:
    documents = all_documents()
    assert len(documents) >= 6
    for path, doc in documents:
        assert doc.get("apiVersion"), path
        assert doc.get("kind"), path
        assert doc.get("metadata", {}).get("name"), path
    assert {doc["metadata"]["name"] for path, doc in documents if path.parent == CRDS} == {
        "darkrooms.deployments.example.com",
        "tasks.example.example.com",
        "postgresqls.database.db.example.com",
    }


def test_crd_file_names_match_their_objects() -> None:
    for path in sorted(CRDS.glob("*.yaml")):
        (doc,) = load(path)
        assert doc["apiVersion"] == "apiextensions.k8s.io/v1"
        assert doc["kind"] == "CustomResourceDefinition"
        assert path.stem == doc["metadata"]["name"] == f"{doc['spec']['names']['plural']}.{doc['spec']['group']}"


def test_schemas_are_structural_and_described() -> None:
    for name in ("darkrooms.deployments.example.com", "tasks.example.example.com"):
        for path, node in walk(schema(crd(name))):
            assert "type" in node or node.get("x-kubernetes-preserve-unknown-fields"), f"{name} {path} has no type"
            if path == ".metadata":  # kube-apiserver forbids anything but type (and name/generateName) there
                assert node == {"type": "object"}, f"{name}: .metadata must be just {{type: object}}"
                continue
            assert node.get("description"), f"{name} {path} has no description"
            if node.get("type") == "array":
                assert "items" in node, f"{name} {path}"
            if "required" in node:
                assert set(node["required"]) <= set(node["properties"]), f"{name} {path}"
            if "default" in node:
                assert validate(node["default"], node) == [], f"{name} {path} default"


# --- Darkroom ------------------------------------------------------------------------------


def test_darkroom_names_and_version() -> None:
    doc = crd("darkrooms.deployments.example.com")
    spec = doc["spec"]
    assert spec["group"] == "deployments.example.com"
    assert spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "plural": "darkrooms",
        "singular": "darkroom",
        "kind": "Darkroom",
        "listKind": "DarkroomList",
        "shortNames": ["dr"],
    }
    version = storage_version(doc)
    assert version["name"] == darkrooms.VERSION == "v1"
    assert version["served"] is True
    assert version["subresources"] == {"status": {}}
    assert "conversion" not in spec  # strategy None: the versions must not differ
    old = [v for v in spec["versions"] if not v["storage"]]
    assert [v["name"] for v in old] == list(darkrooms.OLD_VERSIONS) == ["v1alpha1"]
    for version in old:
        assert version["served"] is True and version["deprecated"] is True
        assert (
            version["deprecationWarning"]
            == f"{darkrooms.GROUP}/{version['name']} Darkroom is deprecated; use {darkrooms.GROUP_VERSION} Darkroom"
        )
        same = {k: v for k, v in version.items() if k not in ("name", "storage", "deprecated", "deprecationWarning")}
        assert same == {k: v for k, v in storage_version(doc).items() if k not in ("name", "storage")}


def test_every_crd_stores_at_the_version_kinds_names() -> None:
    for module, name in (
        (darkrooms, "darkrooms.deployments.example.com"),
        (tasks, "tasks.example.example.com"),
        (postgresqls, "postgresqls.database.db.example.com"),
    ):
        doc = crd(name)
        assert doc["spec"]["group"] == module.GROUP and doc["spec"]["names"]["kind"] == module.KIND
        assert storage_version(doc)["name"] == module.VERSION and f"{module.GROUP}/{module.VERSION}" == module.GROUP_VERSION


def test_darkroom_printer_columns() -> None:
    cols = columns(crd("darkrooms.deployments.example.com"))
    assert list(cols) == ["VERSION", "TYPE", "READY", "DOMAINS", "AGE"]
    assert (cols["VERSION"]["type"], cols["VERSION"]["jsonPath"]) == ("string", ".spec.version")
    assert (cols["TYPE"]["type"], cols["TYPE"]["jsonPath"]) == ("string", ".spec.source.type")
    assert (cols["READY"]["type"], cols["READY"]["jsonPath"]) == ("string", '.status.conditions[?(@.type=="Ready")].status')
    assert (cols["DOMAINS"]["type"], cols["DOMAINS"]["jsonPath"], cols["DOMAINS"]["priority"]) == ("string", ".status.domains", 1)
    assert (cols["AGE"]["type"], cols["AGE"]["jsonPath"]) == ("date", ".metadata.creationTimestamp")
    assert all(c.get("priority", 0) == 0 for name, c in cols.items() if name != "DOMAINS")


def test_darkroom_spec_schema() -> None:
    root = schema(crd("darkrooms.deployments.example.com"))
    spec = at(root, "spec")
    assert spec["required"] == ["source", "subDomains"]
    version = at(root, "spec.version")
    assert version["type"] == "string" and version["maxLength"] == 128
    for tag in ("0.4.2", "v0.4.2", "latest", "v1.0.0-rc.1", "sha_abc"):
        assert re.search(version["pattern"], tag), tag
    for tag in ("", "-bad", ".bad", "a b", "x" * 129):
        assert not re.search(version["pattern"], tag), tag
    replicas = at(root, "spec.replicas")
    assert (replicas["type"], replicas["minimum"], replicas["maximum"], replicas["default"]) == ("integer", 0, 100, 1)
    source = at(root, "spec.source")
    assert source["required"] == ["type"]
    assert at(root, "spec.source.type")["enum"] == ["WebFolder", "S3"]
    base_url = at(root, "spec.source.baseUrl")
    assert base_url["maxLength"] == 2048
    assert re.search(base_url["pattern"], "https://example.com/images")
    assert re.search(base_url["pattern"], "http://example.com")
    assert not re.search(base_url["pattern"], "ftp://example.com")
    for field in ("bucket", "region", "endpoint", "pathPrefix"):
        assert at(root, f"spec.source.{field}")["type"] == "string"
    secret_ref = at(root, "spec.source.credentialsSecretRef")
    assert secret_ref["required"] == ["name"]
    secret_name = at(root, "spec.source.credentialsSecretRef.name")
    assert re.search(secret_name["pattern"], "s3-demo-credentials")
    assert not re.search(secret_name["pattern"], "Bad_Name")
    sub_domains = at(root, "spec.subDomains")
    assert (sub_domains["minItems"], sub_domains["maxItems"], sub_domains["x-kubernetes-list-type"]) == (1, 50, "set")
    item = at(root, "spec.subDomains.[]")
    assert item["type"] == "string" and item["maxLength"] == 63
    assert re.search(item["pattern"], "images") and re.search(item["pattern"], "cdn-2")
    for bad in ("Images", "-cdn", "cdn-", "a.b"):
        assert not re.search(item["pattern"], bad), bad
    cache_time = at(root, "spec.cacheTime")
    assert (cache_time["type"], cache_time["format"], cache_time["minimum"], cache_time["default"]) == ("integer", "int64", 0, 31536000)


def assert_conditions(conditions: dict[str, Any]) -> None:
    assert conditions["type"] == "array"
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    item = conditions["items"]
    assert set(item["required"]) == {"type", "status", "lastTransitionTime", "reason", "message"}
    assert item["properties"]["status"]["enum"] == ["True", "False", "Unknown"]
    assert item["properties"]["lastTransitionTime"]["format"] == "date-time"
    assert item["properties"]["observedGeneration"]["type"] == "integer"
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Reconciled", "message": ""}
    assert validate([ready], conditions) == []
    assert validate([{**ready, "status": "true"}], conditions) != []


def test_darkroom_status_schema() -> None:
    root = schema(crd("darkrooms.deployments.example.com"))
    assert at(root, "status.domains")["type"] == "array"
    assert at(root, "status.domains.[]")["type"] == "string"
    assert at(root, "status.readyReplicas")["type"] == "integer"
    observed = at(root, "status.observedGeneration")
    assert (observed["type"], observed["format"]) == ("integer", "int64")
    assert_conditions(at(root, "status.conditions"))


# --- Task ----------------------------------------------------------------------------------


def test_task_crd() -> None:
    doc = crd("tasks.example.example.com")
    spec = doc["spec"]
    assert spec["group"] == "example.example.com"
    assert spec["scope"] == "Namespaced"
    assert (spec["names"]["plural"], spec["names"]["singular"], spec["names"]["kind"]) == ("tasks", "task", "Task")
    version = storage_version(doc)
    assert (version["name"], version["served"], version["storage"]) == ("v1", True, True)
    assert version["subresources"] == {"status": {}}
    root = schema(doc)
    assert at(root, "spec")["required"] == ["priority", "deadline"]
    priority = at(root, "spec.priority")
    assert (priority["type"], priority["minimum"], priority["maximum"]) == ("integer", 0, 10)
    assert at(root, "spec.details")["maxLength"] == 4096
    assert (at(root, "spec.deadline")["type"], at(root, "spec.deadline")["format"]) == ("string", "date-time")
    state = at(root, "spec.taskState")
    assert (state["enum"], state["default"]) == (["Pending", "Finished"], "Pending")
    assert at(root, "status.observedGeneration")["type"] == "integer"
    assert_conditions(at(root, "status.conditions"))
    cols = columns(doc)
    assert list(cols) == ["PRIORITY", "DEADLINE", "STATE", "AGE"]
    assert (cols["PRIORITY"]["type"], cols["PRIORITY"]["jsonPath"]) == ("integer", ".spec.priority")
    assert (cols["DEADLINE"]["type"], cols["DEADLINE"]["jsonPath"]) == ("string", ".spec.deadline")
    assert (cols["STATE"]["type"], cols["STATE"]["jsonPath"]) == ("string", ".status.state")  # the one state, as ct shows it
    assert sorted(at(root, "status.state")["enum"]) == sorted(s.word for s in tasks.STATES)
    assert (cols["AGE"]["type"], cols["AGE"]["jsonPath"]) == ("date", ".metadata.creationTimestamp")


# --- samples -------------------------------------------------------------------------------


def test_samples_validate_against_their_crds() -> None:
    darkroom_schema = schema(crd("darkrooms.deployments.example.com"))
    task_schema = schema(crd("tasks.example.example.com"))
    by_kind = {
        ("deployments.example.com/v1", "Darkroom"): darkroom_schema,
        ("example.example.com/v1", "Task"): task_schema,
        ("database.db.example.com/v1", "Postgresql"): schema(crd("postgresqls.database.db.example.com")),
    }
    seen = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        for doc in load(path):
            key = (doc["apiVersion"], doc["kind"])
            if key == ("v1", "Secret"):
                continue
            assert key in by_kind, f"{path.name}: unexpected {key}"
            assert validate(doc, by_kind[key]) == [], path.name
            seen.append((path.name, doc["kind"]))
    assert sorted(seen) == [
        ("darkroom-s3.yaml", "Darkroom"),
        ("darkroom-webfolder.yaml", "Darkroom"),
        ("postgresql.yaml", "Postgresql"),
        ("task.yaml", "Task"),
    ]
    broken = {"apiVersion": "x", "kind": "Darkroom", "metadata": {"name": "x"}, "spec": {"source": {"type": "FTP"}, "subDomains": []}}
    assert len(validate(broken, darkroom_schema)) == 2


def test_webfolder_sample() -> None:
    (doc,) = load(SAMPLES / "darkroom-webfolder.yaml")
    assert doc["kind"] == "Darkroom"
    assert doc["metadata"] == {"name": "webfolder-demo", "namespace": "default"}
    assert doc["spec"]["source"] == {"type": "WebFolder", "baseUrl": "https://example.com/images"}
    assert doc["spec"]["subDomains"] == ["images", "cdn"]


def test_s3_sample_keeps_credentials_in_the_secret() -> None:
    secret, darkroom = load(SAMPLES / "darkroom-s3.yaml")
    assert (secret["apiVersion"], secret["kind"], secret["type"]) == ("v1", "Secret", "Opaque")
    assert secret["metadata"]["name"] == "s3-demo-credentials"
    assert set(secret["stringData"]) == {"accessKey", "secretKey"}
    assert all(value == "REPLACE-ME" for value in secret["stringData"].values())
    assert darkroom["kind"] == "Darkroom"
    assert darkroom["metadata"]["namespace"] == secret["metadata"]["namespace"]
    source = darkroom["spec"]["source"]
    assert source["type"] == "S3"
    assert source["credentialsSecretRef"] == {"name": "s3-demo-credentials"}
    for field in ("bucket", "region", "endpoint", "pathPrefix"):
        assert source[field]
    text = yaml.safe_dump(darkroom)
    assert "accessKey" not in text and "secretKey" not in text and "REPLACE-ME" not in text


def test_task_sample() -> None:
    (doc,) = load(SAMPLES / "task.yaml")
    assert (doc["apiVersion"], doc["kind"]) == ("example.example.com/v1", "Task")
    assert doc["spec"]["priority"] == 5
    assert str(doc["spec"]["deadline"]).startswith("2027-")
    assert doc["spec"]["details"]
