"""A CRD that moves to a new storage version: several served versions of one kind, conversion strategy None.

What an upgrade from ``v1alpha1`` to ``v1`` relies on (the product's Darkroom made that move): objects written at
the old version are served at both (only ``apiVersion`` differs), reads and writes at a deprecated version carry its
Warning (the default text and a CRD's own), a new storage version joins ``status.storedVersions`` with the CRD's
update, a write that changes nothing re-encodes an object still stored at the old version (a new resourceVersion,
once; the storage-version migration reads and writes every object back for this), and ``storedVersions`` may lose
the old version only when nothing needs it: it must list the storage version and only versions of
``spec.versions``, and a version still in it cannot leave ``spec.versions``.
"""

from __future__ import annotations

import copy
from typing import Any

from fidelity.corpus import sequence
from fidelity.corpus.common import CRDS, WIDGET_SCHEMA, established, group_of
from fidelity.transcript import MERGE, Side


def _version(name: str, *, storage: bool, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "schema": {"openAPIV3Schema": copy.deepcopy(WIDGET_SCHEMA)},
        "subresources": {"status": {}},
        **extra,
    }


def _crd(s: Side, versions: list[dict[str, Any]]) -> dict[str, Any]:
    group = group_of(s)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": versions,
        },
    }


def _gizmo(s: Side, version: str, name: str, size: int) -> dict[str, Any]:
    return {"apiVersion": f"{group_of(s)}/{version}", "kind": "Gizmo", "metadata": {"name": name}, "spec": {"size": size}}


def _path(s: Side, version: str, name: str = "") -> str:
    return f"/apis/{group_of(s)}/{version}/namespaces/{s.ns}/gizmos" + (f"/{name}" if name else "")


def _serves(s: Side, version: str) -> bool:
    return s.send("GET", _path(s, version)).status == 200


def _stored_versions(s: Side, name: str) -> list[str]:
    crd = s.send("GET", f"{CRDS}/{name}").json or {}
    return list((crd.get("status") or {}).get("storedVersions") or [])


@sequence("crds.versions")
def storage_version_moves(s: Side) -> None:
    crd = _crd(s, [_version("v1alpha1", storage=True)])
    name = crd["metadata"]["name"]
    s.cleanup(f"{CRDS}/{name}")
    s.post("crd-create", CRDS, crd)
    s.wait("crd-established", lambda: established(s, name))
    s.wait("old-served", lambda: _serves(s, "v1alpha1"))
    s.post("create-old-a", _path(s, "v1alpha1"), _gizmo(s, "v1alpha1", "a", 1))
    s.post("create-old-b", _path(s, "v1alpha1"), _gizmo(s, "v1alpha1", "b", 2))

    # v1 joins as the storage version; v1alpha1 stays served, deprecated with the default warning.
    current = s.send("GET", f"{CRDS}/{name}").json or {}
    two = [_version("v1", storage=True), _version("v1alpha1", storage=False, deprecated=True)]
    s.put("crd-add-v1", f"{CRDS}/{name}", {**current, "spec": {**current["spec"], "versions": two}})
    s.wait("new-served", lambda: _serves(s, "v1"))
    s.get("crd-two-versions", f"{CRDS}/{name}")
    s.get("group-discovery", f"/apis/{group_of(s)}")

    s.get("read-new", _path(s, "v1", "a"))
    s.get("read-old", _path(s, "v1alpha1", "a"))
    s.get("list-new", _path(s, "v1"))
    s.get("list-old", _path(s, "v1alpha1"))
    s.get("read-old-missing", _path(s, "v1alpha1", "absent"))

    # A write that changes nothing: re-encoded at v1 (a new resourceVersion), then a true no-op.
    a = s.send("GET", _path(s, "v1", "a")).json or {}
    s.put("rewrite-unchanged", _path(s, "v1", "a"), a)
    again = s.send("GET", _path(s, "v1", "a")).json or {}
    s.put("rewrite-again", _path(s, "v1", "a"), again)
    s.fact("rewrite-changed-rv", a.get("metadata", {}).get("resourceVersion") != again.get("metadata", {}).get("resourceVersion"))
    b = s.send("GET", _path(s, "v1alpha1", "b")).json or {}
    s.put("rewrite-unchanged-old", _path(s, "v1alpha1", "b"), b)

    s.post("create-old-c", _path(s, "v1alpha1"), _gizmo(s, "v1alpha1", "c", 3))
    s.patch("patch-old", _path(s, "v1alpha1", "c"), {"spec": {"size": 4}}, MERGE)
    s.patch("patch-old-status", _path(s, "v1alpha1", "c") + "/status", {"status": {"ready": True}}, MERGE)
    s.get("read-c-new", _path(s, "v1", "c"))
    s.post("create-new-d", _path(s, "v1"), _gizmo(s, "v1", "d", 5))
    s.get("read-d-old", _path(s, "v1alpha1", "d"))

    # storedVersions: the old version cannot leave spec.versions while it is listed; only valid lists are taken.
    current = s.send("GET", f"{CRDS}/{name}").json or {}
    s.put(
        "crd-drop-old-while-stored", f"{CRDS}/{name}", {**current, "spec": {**current["spec"], "versions": [_version("v1", storage=True)]}}
    )
    for label, stored in (("none", []), ("without-storage", ["v1alpha1"]), ("unknown", ["v1", "v2"])):
        current = s.send("GET", f"{CRDS}/{name}").json or {}
        s.put(f"stored-versions-{label}", f"{CRDS}/{name}/status", {**current, "status": {**current["status"], "storedVersions": stored}})
    current = s.send("GET", f"{CRDS}/{name}").json or {}
    s.put("stored-versions-new-only", f"{CRDS}/{name}/status", {**current, "status": {**current["status"], "storedVersions": ["v1"]}})
    s.fact("stored-versions", _stored_versions(s, name))

    # A CRD's own deprecation warning replaces the default one.
    current = s.send("GET", f"{CRDS}/{name}").json or {}
    own = [_version("v1", storage=True), _version("v1alpha1", storage=False, deprecated=True, deprecationWarning="gizmos v1alpha1 go away")]
    s.put("crd-own-warning", f"{CRDS}/{name}", {**current, "spec": {**current["spec"], "versions": own}})
    s.wait("own-warning-served", lambda: any("go away" in w for w in s.send("GET", _path(s, "v1alpha1")).header("warning")))
    s.get("read-old-own-warning", _path(s, "v1alpha1", "a"))
    s.delete("delete-old", _path(s, "v1alpha1", "b"))

    # Without the old version once nothing is stored at it.
    current = s.send("GET", f"{CRDS}/{name}").json or {}
    s.put("crd-drop-old", f"{CRDS}/{name}", {**current, "spec": {**current["spec"], "versions": [_version("v1", storage=True)]}})
    s.wait("old-gone", lambda: s.send("GET", _path(s, "v1alpha1")).status == 404)
    s.get("read-after-drop", _path(s, "v1", "a"))
