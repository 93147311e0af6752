"""Discovery (``/api``, ``/apis``, group and group-version documents, aggregated discovery) and the
OpenAPI v3 documents, compared for what devcluster claims to serve: kube's extra groups, resources,
paths and schemas are not differences (``Step.subset``); a field missing from something devcluster
does list is."""

from __future__ import annotations

from fidelity.corpus import sequence
from fidelity.corpus.common import group_of, install_crd, openapi_published, widget_crd
from fidelity.transcript import Side

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
GROUPS = ("apps", "networking.k8s.io", "coordination.k8s.io", "policy", "rbac.authorization.k8s.io", "apiextensions.k8s.io")


@sequence("discovery.documents", namespaced=False)
def documents(s: Side) -> None:
    s.get("api", "/api")
    s.get("api-v1", "/api/v1", subset=("body.resources",))
    s.get("apis", "/apis", subset=("body.groups",))
    for group in GROUPS:
        s.get(f"group-{group}", f"/apis/{group}")
        s.get(f"group-version-{group}", f"/apis/{group}/v1", subset=("body.resources",))
    s.get("unknown-version", "/apis/apps/v2")
    s.get("unknown-core-version", "/api/v2")
    s.get("unknown-group", "/apis/nothing.example.com")
    version = s.send("GET", "/version").json or {}
    s.fact("version-keys", sorted(version))
    s.fact("version", f"{version.get('major')}.{version.get('minor')}")
    s.get("aggregated-apis", "/apis", headers={"Accept": AGGREGATED}, subset=("body.items", "body.groups"))
    s.get("aggregated-api", "/api", headers={"Accept": AGGREGATED}, subset=("body.items[name=].versions[0].resources",))


@sequence("discovery.custom-resources")
def custom_resources(s: Side) -> None:
    install_crd(s, widget_crd(s), record=False)
    group = group_of(s)
    s.get("group", f"/apis/{group}")
    s.get("group-version", f"/apis/{group}/v1")
    s.get("apis-has-group", "/apis", subset=("body.groups",))
    s.fact("openapi-published", openapi_published(s, f"apis/{group}/v1"))
    s.get("openapi-custom", f"/openapi/v3/apis/{group}/v1", subset=("body.components.schemas",))


@sequence("discovery.openapi", namespaced=False)
def openapi(s: Side) -> None:
    s.get("root", "/openapi/v3", subset=("body.paths",))
    s.get("core", "/openapi/v3/api/v1", subset=("body.paths", "body.components.schemas"))
    s.get("apps", "/openapi/v3/apis/apps/v1", subset=("body.paths", "body.components.schemas"))
    s.get("unknown", "/openapi/v3/apis/nothing.example.com/v1")
    s.get("v2", "/openapi/v2", headers={"Accept": "application/json"}, ignore=("body",))
