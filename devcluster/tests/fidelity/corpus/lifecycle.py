"""Controllers at work: garbage collection under each propagationPolicy, namespace termination, CRD
deletion. Timing is the controllers' business; each sequence waits for the end state on both
servers (recorded as reached or not) and compares that state."""

from __future__ import annotations

from typing import Any

from fidelity.corpus import sequence
from fidelity.corpus.common import CRD_GONE_S, CRDS, group_of, install_crd, widget, widget_crd
from fidelity.transcript import MERGE, Side

# What the namespace controller writes on its own schedule while a namespace terminates.
_NAMESPACE_CONTROLLED = ("body.status.conditions", "body.metadata.managedFields[name=<control-plane>/Update/status]")


def _owner_ref(owner: Any, *, block: bool = False) -> dict[str, Any]:
    meta = (owner or {}).get("metadata") or {}
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": meta.get("name", ""), "uid": meta.get("uid", "")}
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def _family(s: Side, prefix: str, *, block: bool = False) -> tuple[str, str]:
    """An owner ConfigMap with two dependent ConfigMaps; returns (owner path, collection path)."""
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    owner = s.post(f"{prefix}-owner", base, {"metadata": {"name": f"{prefix}-owner", "labels": {"family": prefix}}})
    for child in ("c1", "c2"):
        s.post(
            f"{prefix}-{child}",
            base,
            {
                "metadata": {
                    "name": f"{prefix}-{child}",
                    "labels": {"family": prefix},
                    "ownerReferences": [_owner_ref(owner.json, block=block)],
                }
            },
        )
    return f"{base}/{prefix}-owner", base


@sequence("lifecycle.gc-background")
def gc_background(s: Side) -> None:
    owner, base = _family(s, "bg")
    s.delete("delete-owner", owner, {"propagationPolicy": "Background"})
    s.wait("dependents-gone", lambda: not (s.send("GET", base, query={"labelSelector": "family=bg"}).json or {}).get("items"))
    s.get("list-after", base, query={"labelSelector": "family=bg"})


@sequence("lifecycle.gc-orphan")
def gc_orphan(s: Side) -> None:
    owner, base = _family(s, "or")
    s.delete("delete-owner", owner, query={"propagationPolicy": "Orphan"})
    s.wait("owner-gone", s.gone(owner), timeout_s=30)
    s.get("list-after", base, query={"labelSelector": "family=or"})


@sequence("lifecycle.gc-foreground")
def gc_foreground(s: Side) -> None:
    owner, base = _family(s, "fg", block=True)
    s.patch("hold-child", f"{base}/fg-c1", {"metadata": {"finalizers": ["example.com/hold"]}}, MERGE)
    s.delete("delete-owner", owner, {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})
    s.wait("child-terminating", lambda: bool(((s.send("GET", f"{base}/fg-c1").json or {}).get("metadata") or {}).get("deletionTimestamp")))
    s.wait("other-child-gone", s.gone(f"{base}/fg-c2"))
    s.get("owner-waiting", owner)
    s.patch("release-child", f"{base}/fg-c1", {"metadata": {"finalizers": None}}, MERGE)
    s.wait("owner-gone", s.gone(owner), timeout_s=30)
    s.get("list-after", base, query={"labelSelector": "family=fg"})


@sequence("lifecycle.gc-dangling-and-multiple-owners")
def gc_multiple_owners(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    one = s.post("owner-one", base, {"metadata": {"name": "one"}})
    two = s.post("owner-two", base, {"metadata": {"name": "two"}})
    s.post("child", base, {"metadata": {"name": "child", "ownerReferences": [_owner_ref(one.json), _owner_ref(two.json)]}})
    s.delete("delete-one", f"{base}/one")
    s.wait(
        "ref-dropped", lambda: len(((s.send("GET", f"{base}/child").json or {}).get("metadata") or {}).get("ownerReferences") or []) == 1
    )
    s.get("child-kept", f"{base}/child")
    s.post(
        "bad-owner-ref", base, {"metadata": {"name": "bad", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}]}}
    )
    s.post(
        "two-controllers",
        base,
        {
            "metadata": {
                "name": "two-ctl",
                "ownerReferences": [{**_owner_ref(two.json), "controller": True}, {**_owner_ref(one.json), "controller": True}],
            }
        },
    )


@sequence("lifecycle.namespace-termination", namespaced=False)
def namespace_termination(s: Side) -> None:
    ns = s.ns
    s.post("create-namespace", "/api/v1/namespaces", {"metadata": {"name": ns, "labels": {"team": "a"}}})
    s.wait("settled", lambda: s.kind != "real" or s.send("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default").status == 200)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    s.post("create-held", base, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    s.post("create-plain", base, {"metadata": {"name": "plain"}})
    s.delete("delete-namespace", f"/api/v1/namespaces/{ns}")
    controlled = (
        "body.status.conditions",
        "body.metadata.resourceVersion",
        "body.metadata.managedFields[name=<control-plane>/Update/status]",
    )
    s.get("namespace-terminating", f"/api/v1/namespaces/{ns}", ignore=controlled)
    s.post("create-in-terminating", base, {"metadata": {"name": "late"}})
    s.wait("plain-gone", s.gone(f"{base}/plain"))
    s.wait("conditions-written", lambda: _condition(s, ns, "NamespaceFinalizersRemaining") == "True", timeout_s=30)
    s.get("namespace-conditions", f"/api/v1/namespaces/{ns}")
    s.get("held-terminating", f"{base}/held")
    s.delete("delete-namespace-again", f"/api/v1/namespaces/{ns}", ignore=_NAMESPACE_CONTROLLED)
    s.patch("release", f"{base}/held", {"metadata": {"finalizers": None}}, MERGE)
    s.wait("namespace-gone", s.gone(f"/api/v1/namespaces/{ns}"), timeout_s=60)
    s.get("namespace-404", f"/api/v1/namespaces/{ns}")


def _condition(s: Side, ns: str, kind: str) -> str:
    conditions = ((s.send("GET", f"/api/v1/namespaces/{ns}").json or {}).get("status") or {}).get("conditions") or []
    return next((str(c.get("status")) for c in conditions if c.get("type") == kind), "")


@sequence("lifecycle.namespace-spec-finalizers", namespaced=False)
def namespace_spec_finalizers(s: Side) -> None:
    ns = s.ns
    created = s.post("create", "/api/v1/namespaces", {"metadata": {"name": ns}, "spec": {"finalizers": ["example.com/custom"]}})
    s.delete("delete", f"/api/v1/namespaces/{ns}", ignore=_NAMESPACE_CONTROLLED)
    s.wait(
        "kubernetes-finalizer-done",
        lambda: ((s.send("GET", f"/api/v1/namespaces/{ns}").json or {}).get("spec") or {}).get("finalizers") == ["example.com/custom"],
        timeout_s=30,
    )
    current = s.send("GET", f"/api/v1/namespaces/{ns}").json or created.json or {}
    s.put(
        "finalize-wrong-body",
        f"/api/v1/namespaces/{ns}/finalize",
        {**current, "spec": {"finalizers": ["example.com/custom", "x/y"]}},
        ignore=_NAMESPACE_CONTROLLED,
    )
    current = s.send("GET", f"/api/v1/namespaces/{ns}").json or {}
    s.put("finalize", f"/api/v1/namespaces/{ns}/finalize", {**current, "spec": {"finalizers": []}}, ignore=_NAMESPACE_CONTROLLED)
    s.wait("gone", s.gone(f"/api/v1/namespaces/{ns}"))
    s.delete("protected-default", "/api/v1/namespaces/default", query={"dryRun": "All"})
    s.delete("protected-kube-system", "/api/v1/namespaces/kube-system", query={"dryRun": "All"})


@sequence("lifecycle.crd-deletion")
def crd_deletion(s: Side) -> None:
    path = install_crd(s, widget_crd(s), record=False)
    group = group_of(s)
    s.post("create-cr", path, widget("w", {"size": 1}, group))
    s.post("create-held-cr", path, widget("h", {"size": 1}, group, finalizers=["example.com/hold"]))
    name = f"widgets.{group}"
    s.delete("delete-crd", f"{CRDS}/{name}")
    s.wait("plain-cr-gone", s.gone(f"{path}/w"))
    s.get("crd-terminating", f"{CRDS}/{name}")
    s.post("create-while-terminating", path, widget("late", {"size": 1}, group))
    s.patch("release", f"{path}/h", {"metadata": {"finalizers": None}}, MERGE)
    s.wait("crd-gone", s.gone(f"{CRDS}/{name}"), timeout_s=CRD_GONE_S)
    # kube-apiserver stops serving the kind when its CRD informer sees the deletion, which may come a
    # moment after the CRD itself is gone (CI saw a 200 with an empty list there): wait for that too.
    s.wait("crs-unserved", s.gone(path))
    s.get("crs-404", path)
