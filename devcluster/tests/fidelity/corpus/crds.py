"""CustomResourceDefinitions and their resources: CRD validation, the CRD's status once Established,
defaulting, pruning, schema validation errors, printer-column Tables, update rules of custom
resources."""

from __future__ import annotations

import copy
from typing import Any

from fidelity.corpus import sequence
from fidelity.corpus.common import CRD_GONE_S, CRDS, WIDGET_SCHEMA, group_of, install_crd, widget, widget_crd
from fidelity.transcript import MERGE, TABLE, Side


def _with_schema(crd: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    crd = copy.deepcopy(crd)
    crd["spec"]["versions"][0]["schema"] = {"openAPIV3Schema": schema}
    return crd


@sequence("crds.validation", namespaced=True)
def crd_validation(s: Side) -> None:
    base = widget_crd(s)
    name = base["metadata"]["name"]
    s.cleanup(f"{CRDS}/{name}")
    meta_props = {
        **WIDGET_SCHEMA,
        "properties": {**WIDGET_SCHEMA["properties"], "metadata": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    s.post("metadata-with-properties", CRDS, _with_schema(base, meta_props), query={"dryRun": "All"})
    meta_desc = {**WIDGET_SCHEMA, "properties": {**WIDGET_SCHEMA["properties"], "metadata": {"type": "object", "description": "m"}}}
    s.post("metadata-with-description", CRDS, _with_schema(base, meta_desc), query={"dryRun": "All"})
    meta_plain = {**WIDGET_SCHEMA, "properties": {**WIDGET_SCHEMA["properties"], "metadata": {"type": "object"}}}
    s.post("metadata-type-object-dry-run", CRDS, _with_schema(base, meta_plain), query={"dryRun": "All"})
    s.post("no-type-at-root", CRDS, _with_schema(base, {"properties": {"spec": {"type": "object"}}}), query={"dryRun": "All"})
    s.post(
        "not-structural",
        CRDS,
        _with_schema(base, {"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}),
        query={"dryRun": "All"},
    )
    bad_default = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}}}
    s.post("bad-default", CRDS, _with_schema(base, bad_default), query={"dryRun": "All"})
    wrong_name = copy.deepcopy(base)
    wrong_name["metadata"]["name"] = f"gadgets.{group_of(s)}"
    s.post("name-mismatch", CRDS, wrong_name, query={"dryRun": "All"})
    no_storage = copy.deepcopy(base)
    no_storage["spec"]["versions"][0]["storage"] = False
    s.post("no-storage-version", CRDS, no_storage, query={"dryRun": "All"})
    bad_column = copy.deepcopy(base)
    bad_column["spec"]["versions"][0]["additionalPrinterColumns"] = [{"name": "X", "type": "widget", "jsonPath": ".spec.size"}]
    s.post("bad-printer-column", CRDS, bad_column, query={"dryRun": "All"})
    bad_scope = copy.deepcopy(base)
    bad_scope["spec"]["scope"] = "Galaxy"
    s.post("bad-scope", CRDS, bad_scope, query={"dryRun": "All"})
    created = s.post("create", CRDS, base)
    s.wait("established", lambda: _established(s, name))
    s.get("established-crd", f"{CRDS}/{name}")
    body = s.send("GET", f"{CRDS}/{name}").json or created.json or {}
    s.put("change-scope", f"{CRDS}/{name}", {**body, "spec": {**body.get("spec", {}), "scope": "Cluster"}})
    s.delete("delete", f"{CRDS}/{name}")
    s.wait("crd-gone", s.gone(f"{CRDS}/{name}"), timeout_s=CRD_GONE_S)


def _established(s: Side, name: str) -> bool:
    crd = s.send("GET", f"{CRDS}/{name}").json or {}
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in (crd.get("status") or {}).get("conditions") or [])


@sequence("crds.defaulting-and-pruning")
def defaulting_and_pruning(s: Side) -> None:
    path = install_crd(s, widget_crd(s))
    group = group_of(s)
    s.post("create-defaults", path, widget("d", {"size": 1, "ports": [{"port": 80}]}, group))
    s.post(
        "create-pruned",
        path,
        {**widget("p", {"size": 1, "unknown": {"a": 1}, "free": {"anything": [1, 2]}, "nested": {"deep": {}}}, group), "extraTop": 1},
        query={"fieldValidation": "Ignore"},
    )
    s.post("create-null-default", path, widget("n", {"size": 1, "color": None, "maybe": None}, group))
    s.patch("patch-remove-defaulted", f"{path}/d", {"spec": {"color": None}}, MERGE)
    s.post("create-status-dropped", path, {**widget("st", {"size": 1}, group), "status": {"ready": True}})
    s.get("list", path)


@sequence("crds.schema-errors")
def schema_errors(s: Side) -> None:
    path = install_crd(s, widget_crd(s), record=False)
    group = group_of(s)
    for label, spec in (
        ("missing-required", {}),
        ("wrong-type", {"size": "big"}),
        ("too-small", {"size": 0}),
        ("too-large", {"size": 11}),
        ("enum", {"size": 1, "color": "purple"}),
        ("pattern", {"size": 1, "name": "ABC"}),
        ("max-length", {"size": 1, "name": "abcdefghij"}),
        ("duplicate-set", {"size": 1, "tags": ["a", "a"]}),
        ("duplicate-map-key", {"size": 1, "ports": [{"port": 1}, {"port": 1}]}),
        ("map-item-missing-key", {"size": 1, "ports": [{"protocol": "UDP"}]}),
        ("number-type", {"size": 1, "ratio": "half"}),
        ("format", {"size": 1, "when": "yesterday"}),
        ("int-or-string", {"size": 1, "intOrString": 1.5}),
        ("additional-properties", {"size": 1, "labels": {"a": 1}}),
        ("spec-not-object", "nope"),
    ):
        s.post(f"create-{label}", path, widget(f"e-{label}"[:40], spec, group))  # type: ignore[arg-type]
    s.post("create-bad-name", path, widget("Bad_Name", {"size": 1}, group))
    created = s.post("create-ok", path, widget("ok", {"size": 1}, group))
    s.put("update-without-rv", f"{path}/ok", {**(created.json or {}), "metadata": {"name": "ok"}, "spec": {"size": 2}})
    s.patch("patch-invalid", f"{path}/ok", {"spec": {"size": 100}}, MERGE)
    s.patch("strategic-on-cr", f"{path}/ok", {"spec": {"size": 3}}, "application/strategic-merge-patch+json")
    s.post("wrong-api-version", path, {**widget("wv", {"size": 1}, group), "apiVersion": f"{group}/v2"})


@sequence("crds.printer-columns")
def printer_columns(s: Side) -> None:
    path = install_crd(s, widget_crd(s), record=False)
    group = group_of(s)
    s.send("POST", path, body=widget("b", {"size": 2, "tags": ["x", "y"]}, group))
    s.send("POST", path, body=widget("a", {"size": 3, "color": "blue"}, group))
    s.send("PATCH", f"{path}/a/status", body={"status": {"ready": True}}, content_type=MERGE)
    s.get("table", path, headers={"Accept": TABLE})
    s.get("table-one", f"{path}/a", headers={"Accept": TABLE})
    s.get("table-include-object", path, query={"includeObject": "Object"}, headers={"Accept": TABLE})
    s.get("table-all-namespaces", f"/apis/{group}/v1/widgets", headers={"Accept": TABLE})
