"""OpenAPI v3 documents (devcluster.openapi, devcluster.bundled_openapi).

Behaviours covered:
- Built-in group/versions serve the bundled kube-apiserver v1.37.2 document itself (the same shared
  object every time); the bundle is up to date: every built-in kind has its schema and the document
  holds exactly the paths devcluster routes; a document for a subset of the built-ins keeps only
  their paths; a custom resource in a built-in group/version is added to the bundled document; a
  built-in kind the bundle lacks gets generated paths and an open schema.
- explain can descend the bundled schemas: deployment.spec.replicas, configmap.data,
  pod.spec.containers.ports resolve through ``$ref``s to typed fields with descriptions.
- Every group/version document is OpenAPI 3.0.0 with sorted paths, every ``$ref`` resolving inside
  the document, and serialisable with orjson; generated (custom resource) documents are titled
  Kubernetes v1.32.0.
- Paths per resource mirror kube-apiserver: namespaced collection + item, the all-namespaces list path,
  cluster-scoped collection + item, /status when declared, /scale (autoscaling/v1 Scale) for
  deployments, /finalize for namespaces; namespaces have no deletecollection.
- Operations carry operationId (kube's naming), x-kubernetes-action (get/list/post/put/patch/delete/
  deletecollection), x-kubernetes-group-version-kind; path params name/namespace and query params
  (dryRun, fieldManager, fieldValidation, pretty, force on patch, list/watch params on list);
  request bodies for post/put (kind schema) and patch (json-patch, merge-patch, apply-patch; plus
  strategic-merge-patch for built-ins); responses 200/201 referring to the kind (List kind for list).
- kubectl's field-validation check (query_param_verifier_v3.go) succeeds for every GVK, whatever
  order Go's map iteration visits paths in; kubectl apply's gvkSupportsPatchOpenAPIV3 answers
  "strategic merge patch" for built-in GVKs and "no" for custom resources, as kube-apiserver's do.
- kubectl explain's lookup (plaintext.tmpl) finds the GVK from a resource path and exactly one
  component schema with that GVK, with apiVersion/kind/metadata properties (metadata -> ObjectMeta).
- Custom resources publish the CRD openAPIV3Schema under the reversed-group key with
  x-kubernetes-group-version-kind, without mutating the ResourceType's schema; List kinds, ObjectMeta,
  ListMeta, Status, DeleteOptions and Patch are included.
- The root document points at each group/version with its hash; document_hash is stable, key-order
  independent, upper-case sha512 hex, and changes when the document changes.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from typing import Any

import orjson

from devcluster import bundled_openapi, openapi
from devcluster.resources import BUILTINS, ResourceType, from_crd

SMP = "application/strategic-merge-patch+json"
CORE_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
METHODS = ("get", "put", "post", "delete", "patch")


def darkroom_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "darkrooms.deployments.example.com"},
        "spec": {
            "group": "deployments.example.com",
            "scope": "Namespaced",
            "names": {"plural": "darkrooms", "singular": "darkroom", "kind": "Darkroom", "listKind": "DarkroomList", "shortNames": ["dr"]},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "Darkroom is an image proxy deployment.",
                            "properties": {
                                "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}},
                                "spec": {
                                    "type": "object",
                                    "description": "What the darkroom should look like.",
                                    "properties": {"replicas": {"type": "integer", "minimum": 0}, "image": {"type": "string"}},
                                    "required": ["image"],
                                },
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
            ],
        },
    }


def darkroom() -> ResourceType:
    (resource,) = from_crd(darkroom_crd())
    return resource


def all_resources() -> list[ResourceType]:
    return [*BUILTINS, darkroom()]


def group_versions() -> list[str]:
    return sorted({r.group_version for r in all_resources()})


def document(group_version: str) -> dict[str, Any]:
    return openapi.group_version_document(group_version, all_resources())


BUILTIN_GVS = sorted({r.group_version for r in BUILTINS})


def schema_of(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """A property/items node with its ``$ref`` (or ``allOf: [$ref]``) resolved, as kubectl explain reads it."""
    ref = node.get("$ref") or (node.get("allOf") or [{}])[0].get("$ref")
    return resolve(doc, ref) if ref else node


def request_schema(op: dict[str, Any]) -> dict[str, Any]:
    content = op["requestBody"]["content"]
    schema: dict[str, Any] = next(iter(content.values()))["schema"]
    return schema


def gvk_of(resource: ResourceType) -> dict[str, str]:
    return {"group": resource.group, "version": resource.version, "kind": resource.kind}


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def all_params(doc: dict[str, Any], path: str, method: str) -> dict[str, dict[str, Any]]:
    item = doc["paths"][path]
    params = [*item.get("parameters", []), *item[method].get("parameters", [])]
    names = [p["name"] for p in params]
    assert len(names) == len(set(names)), f"duplicate parameters on {method} {path}: {names}"
    return {p["name"]: p for p in params}


def supports_query_param_v3(doc: dict[str, Any], gvk: dict[str, str], param: str, seed: int) -> bool:
    """query_param_verifier_v3.go's supportsQueryParamV3, with Go's random map order simulated."""
    paths = list(doc["paths"].values())
    random.Random(seed).shuffle(paths)
    for path in paths:
        op = path.get("patch")
        if op is None:
            continue
        ext = op.get("x-kubernetes-group-version-kind")
        if not isinstance(ext, dict) or (ext.get("group"), ext.get("version"), ext.get("kind")) != (
            gvk["group"],
            gvk["version"],
            gvk["kind"],
        ):
            continue
        return any(p.get("name") == param and p.get("in") == "query" for p in op.get("parameters", []))
    return False


def gvk_supports_smp_v3(doc: dict[str, Any], gvk: dict[str, str], seed: int) -> bool:
    """patcher.go's gvkSupportsPatchOpenAPIV3, with Go's random map order simulated."""
    paths = list(doc["paths"].values())
    random.Random(seed).shuffle(paths)
    for path in paths:
        op = path.get("patch")
        if op is None or op.get("x-kubernetes-group-version-kind") != gvk:
            continue
        content = (op.get("requestBody") or {}).get("content")
        if content is None:
            return False
        return SMP in content
    return False


def explain_gvk(doc: dict[str, Any], resource: ResourceType) -> dict[str, str] | None:
    """plaintext.tmpl: the GVK of the first operation found on the resource's search paths."""
    prefix = "/api" if not resource.group else f"/apis/{resource.group}"
    base = f"{prefix}/{resource.version}"
    for path in (
        f"{base}/{resource.plural}",
        f"{base}/{resource.plural}/{{name}}",
        f"{base}/namespaces/{{namespace}}/{resource.plural}",
        f"{base}/namespaces/{{namespace}}/{resource.plural}/{{name}}",
    ):
        item = doc["paths"].get(path)
        if not item:
            continue
        for method in METHODS:
            if method in item and "x-kubernetes-group-version-kind" in item[method]:
                gvk: dict[str, str] = item[method]["x-kubernetes-group-version-kind"]
                return gvk
    return None


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):  # JSONSchemaProps has a *property* named $ref
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def resolve(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    prefix = "#/components/schemas/"
    assert ref.startswith(prefix), ref
    schema: dict[str, Any] = doc["components"]["schemas"][ref.removeprefix(prefix)]
    return schema


def test_document_envelope() -> None:
    for gv in group_versions():
        doc = document(gv)
        assert doc["openapi"] == "3.0.0"
        assert list(doc["paths"]) == sorted(doc["paths"])
        assert doc["paths"], gv
        orjson.dumps(doc)
        if gv in BUILTIN_GVS:
            assert doc is bundled_openapi.document(gv), gv  # served as bundled, parsed once
        else:
            assert doc["info"] == {"title": "Kubernetes", "version": "v1.32.0"}


def test_bundle_covers_every_builtin_and_exactly_the_served_paths() -> None:
    for gv in BUILTIN_GVS:
        bundled = bundled_openapi.document(gv)
        assert bundled is not None, f"no bundled document for {gv}: run scripts/gen_builtin_openapi.py"
        resources = [r for r in BUILTINS if r.group_version == gv]
        for resource in resources:
            assert resource.kind in bundled_openapi.kind_schemas(gv), (gv, resource.kind)
        served: set[str] = set().union(*(openapi.served_paths(r) for r in resources))
        assert set(bundled["paths"]) == served, gv
    assert "io.k8s.api.core.v1.ContainerPort" in bundled_openapi.go_types()
    readme = (bundled_openapi.DIRECTORY / "README.md").read_text()
    assert bundled_openapi.SOURCE_VERSION in readme and "gen_builtin_openapi.py" in readme


def test_subset_of_builtins_keeps_their_paths_only() -> None:
    configmaps = next(r for r in BUILTINS if r.plural == "configmaps")
    doc = openapi.group_version_document("v1", [configmaps])
    assert set(doc["paths"]) == openapi.served_paths(configmaps)
    assert doc is not bundled_openapi.document("v1")
    assert "io.k8s.api.core.v1.ConfigMap" in doc["components"]["schemas"]


def test_custom_resource_in_a_builtin_group_version_is_added() -> None:
    crd = darkroom_crd()
    crd["spec"]["group"] = "apps"
    crd["metadata"]["name"] = "darkrooms.apps"
    crd["spec"]["versions"][0]["name"] = "v1"
    (custom,) = from_crd(crd)
    doc = openapi.group_version_document("apps/v1", [*BUILTINS, custom])
    assert "/apis/apps/v1/namespaces/{namespace}/darkrooms/{name}" in doc["paths"]
    assert "/apis/apps/v1/namespaces/{namespace}/deployments/{name}" in doc["paths"]
    schemas = doc["components"]["schemas"]
    assert schemas[openapi.schema_name(custom)]["x-kubernetes-group-version-kind"] == [gvk_of(custom)]
    bundled = bundled_openapi.document("apps/v1")
    assert bundled is not None and "/apis/apps/v1/namespaces/{namespace}/darkrooms" not in bundled["paths"]
    # the bundle's (real) meta/v1 schemas win over the generated ones
    assert schemas[f"{CORE_META}.ObjectMeta"] is bundled["components"]["schemas"][f"{CORE_META}.ObjectMeta"]
    for ref in refs(doc):
        resolve(doc, ref)


def test_builtin_the_bundle_lacks_gets_a_generated_open_schema() -> None:
    jobs = ResourceType(group="batch", version="v1", plural="jobs", singular="job", kind="Job", namespaced=True)
    doc = openapi.group_version_document("batch/v1", [jobs])
    assert "/apis/batch/v1/namespaces/{namespace}/jobs/{name}" in doc["paths"]
    schema = doc["components"]["schemas"]["io.k8s.api.batch.v1.Job"]
    assert schema["x-kubernetes-preserve-unknown-fields"] is True
    assert schema["x-kubernetes-group-version-kind"] == [gvk_of(jobs)]


def test_explain_descends_into_builtin_fields() -> None:
    """kubectl explain deployment.spec.replicas / configmap.data / pod.spec.containers.ports."""
    apps = document("apps/v1")
    deployment = resolve(apps, "#/components/schemas/io.k8s.api.apps.v1.Deployment")
    spec = schema_of(apps, deployment["properties"]["spec"])
    replicas = spec["properties"]["replicas"]
    assert (replicas["type"], replicas["format"]) == ("integer", "int32")
    assert replicas["description"].startswith("Number of desired pods.")
    core = document("v1")
    data = resolve(core, "#/components/schemas/io.k8s.api.core.v1.ConfigMap")["properties"]["data"]
    assert data["type"] == "object" and data["additionalProperties"] == {"type": "string"}
    pod_spec = schema_of(core, resolve(core, "#/components/schemas/io.k8s.api.core.v1.Pod")["properties"]["spec"])
    containers = pod_spec["properties"]["containers"]
    ports = schema_of(core, containers["items"])["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert schema_of(core, ports["items"])["required"] == ["containerPort"]


def test_every_ref_resolves() -> None:
    for gv in group_versions():
        doc = document(gv)
        for ref in refs(doc):
            resolve(doc, ref)


def test_core_v1_paths() -> None:
    paths = document("v1")["paths"]
    for path in (
        "/api/v1/namespaces/{namespace}/configmaps",
        "/api/v1/namespaces/{namespace}/configmaps/{name}",
        "/api/v1/configmaps",
        "/api/v1/namespaces",
        "/api/v1/namespaces/{name}",
        "/api/v1/namespaces/{name}/status",
        "/api/v1/namespaces/{name}/finalize",
        "/api/v1/namespaces/{namespace}/pods/{name}/status",
        "/api/v1/namespaces/{namespace}/services/{name}/status",
    ):
        assert path in paths, path
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}/status" not in paths
    assert "/apis/apps/v1/namespaces/{namespace}/deployments" not in paths
    collection = paths["/api/v1/namespaces/{namespace}/configmaps"]
    assert set(collection) == {"get", "post", "delete", "parameters"}
    assert set(paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]) == {"get", "put", "patch", "delete", "parameters"}
    assert set(paths["/api/v1/configmaps"]) == {"get", "parameters"}
    # kube-apiserver has no deletecollection on namespaces
    assert set(paths["/api/v1/namespaces"]) == {"get", "post", "parameters"}
    assert set(paths["/api/v1/namespaces/{name}/status"]) == {"get", "put", "patch", "parameters"}
    assert set(paths["/api/v1/namespaces/{name}/finalize"]) == {"put", "parameters"}


def test_operation_metadata_for_configmaps() -> None:
    doc = document("v1")
    item = "/api/v1/namespaces/{namespace}/configmaps/{name}"
    collection = "/api/v1/namespaces/{namespace}/configmaps"
    expected = {
        (collection, "get"): ("listCoreV1NamespacedConfigMap", "list"),
        (collection, "post"): ("createCoreV1NamespacedConfigMap", "post"),
        (collection, "delete"): ("deleteCoreV1CollectionNamespacedConfigMap", "deletecollection"),
        (item, "get"): ("readCoreV1NamespacedConfigMap", "get"),
        (item, "put"): ("replaceCoreV1NamespacedConfigMap", "put"),
        (item, "patch"): ("patchCoreV1NamespacedConfigMap", "patch"),
        (item, "delete"): ("deleteCoreV1NamespacedConfigMap", "delete"),
        ("/api/v1/configmaps", "get"): ("listCoreV1ConfigMapForAllNamespaces", "list"),
    }
    for (path, method), (operation_id, action) in expected.items():
        op = doc["paths"][path][method]
        assert op["operationId"] == operation_id
        assert op["x-kubernetes-action"] == action
        assert op["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
        assert op["tags"] == ["core_v1"]
        assert op["responses"]["401"] == {"description": "Unauthorized"}


def test_operation_ids_are_unique() -> None:
    for gv in group_versions():
        ids = [op["operationId"] for _, _, op in operations(document(gv))]
        assert len(ids) == len(set(ids)), gv


def test_parameters() -> None:
    doc = document("v1")
    item = "/api/v1/namespaces/{namespace}/configmaps/{name}"
    collection = "/api/v1/namespaces/{namespace}/configmaps"
    patch = all_params(doc, item, "patch")
    assert {"name", "namespace", "pretty", "dryRun", "fieldManager", "fieldValidation", "force"} <= set(patch)
    assert patch["name"]["in"] == "path" and patch["name"]["required"] is True
    assert patch["namespace"]["in"] == "path" and patch["namespace"]["required"] is True
    for name in ("pretty", "dryRun", "fieldManager", "fieldValidation", "force"):
        assert patch[name]["in"] == "query"
    assert patch["force"]["schema"]["type"] == "boolean"
    put = all_params(doc, item, "put")
    assert {"dryRun", "fieldManager", "fieldValidation", "pretty"} <= set(put)
    assert "force" not in put
    post = all_params(doc, collection, "post")
    assert {"namespace", "dryRun", "fieldManager", "fieldValidation", "pretty"} <= set(post)
    list_params = {
        "labelSelector",
        "fieldSelector",
        "limit",
        "continue",
        "resourceVersion",
        "resourceVersionMatch",
        "timeoutSeconds",
        "watch",
        "allowWatchBookmarks",
        "sendInitialEvents",
    }
    assert list_params <= set(all_params(doc, collection, "get"))
    assert list_params <= set(all_params(doc, "/api/v1/configmaps", "get"))
    assert "namespace" not in all_params(doc, "/api/v1/configmaps", "get")
    delete = all_params(doc, item, "delete")
    assert {"dryRun", "gracePeriodSeconds", "propagationPolicy"} <= set(delete)
    deletecollection = all_params(doc, collection, "delete")
    assert {"labelSelector", "fieldSelector", "dryRun", "propagationPolicy"} <= set(deletecollection)
    # cluster-scoped: no namespace parameter
    assert "namespace" not in all_params(doc, "/api/v1/namespaces/{name}", "patch")
    # every declared path parameter appears in the path template
    for gv in group_versions():
        gv_doc = document(gv)
        for path, method, _ in operations(gv_doc):
            for param in all_params(gv_doc, path, method).values():
                if param["in"] == "path":
                    assert "{" + param["name"] + "}" in path


def test_request_bodies_and_responses() -> None:
    for doc, base, kind_ref, list_ref, patch_types in (
        (
            document("v1"),
            "/api/v1/namespaces/{namespace}/configmaps",
            "#/components/schemas/io.k8s.api.core.v1.ConfigMap",
            "#/components/schemas/io.k8s.api.core.v1.ConfigMapList",
            {"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml", SMP},
        ),
        (
            document("deployments.example.com/v1alpha1"),
            "/apis/deployments.example.com/v1alpha1/namespaces/{namespace}/darkrooms",
            "#/components/schemas/com.example.deployments.v1alpha1.Darkroom",
            "#/components/schemas/com.example.deployments.v1alpha1.DarkroomList",
            {"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"},
        ),
    ):
        _check_bodies(doc, base, kind_ref, list_ref, patch_types)


def _check_bodies(doc: dict[str, Any], base: str, kind_ref: str, list_ref: str, patch_types: set[str]) -> None:
    item = doc["paths"][base + "/{name}"]
    collection = doc["paths"][base]
    for op in (collection["post"], item["put"]):
        assert request_schema(op) == {"$ref": kind_ref}
        assert op["requestBody"]["required"] is True
        assert op["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": kind_ref}
        assert op["responses"]["201"]["content"]["application/json"]["schema"] == {"$ref": kind_ref}
    patch = item["patch"]
    assert set(patch["requestBody"]["content"]) == patch_types
    assert patch["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": kind_ref}
    assert patch["responses"]["201"]["content"]["application/json"]["schema"] == {"$ref": kind_ref}
    assert item["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": kind_ref}
    assert collection["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": list_ref}
    assert "application/json;stream=watch" in collection["get"]["responses"]["200"]["content"]
    assert collection["delete"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": f"#/components/schemas/{CORE_META}.Status"
    }


def test_strategic_merge_patch_is_offered_for_builtins_only() -> None:
    for gv in group_versions():
        for path, method, op in operations(document(gv)):
            content = (op.get("requestBody") or {}).get("content", {})
            if method == "patch":
                assert (SMP in content) == (gv in BUILTIN_GVS), (path, method)
            else:
                assert SMP not in content, (path, method)


def test_every_gvk_supports_field_validation_for_kubectl() -> None:
    for resource in all_resources():
        doc = document(resource.group_version)
        gvk = gvk_of(resource)
        patch_ops = [op for _, method, op in operations(doc) if method == "patch" and op["x-kubernetes-group-version-kind"] == gvk]
        assert patch_ops, gvk
        for op in patch_ops:
            assert any(p["name"] == "fieldValidation" and p["in"] == "query" for p in op["parameters"]), gvk
        for seed in range(20):
            assert supports_query_param_v3(doc, gvk, "fieldValidation", seed), (gvk, seed)
            assert gvk_supports_smp_v3(doc, gvk, seed) == (not resource.is_custom), (gvk, seed)
    # every patch operation at all (including /scale) carries the extension and fieldValidation
    for gv in group_versions():
        for _, method, op in operations(document(gv)):
            if method == "patch":
                assert set(op["x-kubernetes-group-version-kind"]) == {"group", "version", "kind"}
                assert "fieldValidation" in {p["name"] for p in op["parameters"] if p["in"] == "query"}


def test_explain_finds_a_single_schema_per_resource() -> None:
    for resource in all_resources():
        doc = document(resource.group_version)
        gvk = explain_gvk(doc, resource)
        assert gvk == gvk_of(resource)
        matches = [
            name for name, schema in doc["components"]["schemas"].items() if gvk in schema.get("x-kubernetes-group-version-kind", [])
        ]
        assert matches == [openapi.schema_name(resource)], (gvk, matches)
        schema = doc["components"]["schemas"][matches[0]]
        assert schema["type"] == "object"
        assert schema["description"]
        props = schema["properties"]
        assert props["apiVersion"]["type"] == "string"
        assert props["kind"]["type"] == "string"
        assert {"$ref": f"#/components/schemas/{CORE_META}.ObjectMeta"} in props["metadata"]["allOf"]


def test_builtin_schema_names_and_fields() -> None:
    core = document("v1")["components"]["schemas"]
    configmap = core["io.k8s.api.core.v1.ConfigMap"]
    assert configmap["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "ConfigMap", "version": "v1"}]
    assert {"data", "binaryData", "immutable"} <= set(configmap["properties"])
    assert configmap["properties"]["data"]["additionalProperties"]["type"] == "string"
    assert core["io.k8s.api.core.v1.ConfigMapList"]["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "ConfigMapList", "version": "v1"}
    ]
    items = core["io.k8s.api.core.v1.ConfigMapList"]["properties"]["items"]["items"]
    assert schema_of(document("v1"), items) is core["io.k8s.api.core.v1.ConfigMap"]
    for name in ("ObjectMeta", "ListMeta", "Status", "DeleteOptions", "Patch", "Time", "ManagedFieldsEntry", "OwnerReference"):
        assert f"{CORE_META}.{name}" in core, name
    assert "name" in core[f"{CORE_META}.ObjectMeta"]["properties"]
    assert core[f"{CORE_META}.Status"]["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Status", "version": "v1"}]
    apps = document("apps/v1")["components"]["schemas"]
    assert "io.k8s.api.apps.v1.Deployment" in apps
    assert "io.k8s.api.apps.v1.DeploymentList" in apps
    assert apps["io.k8s.api.autoscaling.v1.Scale"]["x-kubernetes-group-version-kind"] == [
        {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    ]
    assert "io.k8s.api.rbac.v1.ClusterRole" in document("rbac.authorization.k8s.io/v1")["components"]["schemas"]
    assert "io.k8s.api.networking.v1.Ingress" in document("networking.k8s.io/v1")["components"]["schemas"]
    crds = document("apiextensions.k8s.io/v1")["components"]["schemas"]
    assert "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition" in crds


def test_deployment_scale_and_status_paths() -> None:
    doc = document("apps/v1")
    scale = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["patch"]["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert scale["patch"]["operationId"] == "patchAppsV1NamespacedDeploymentScale"
    assert scale["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"
    }
    status = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status"]
    assert status["patch"]["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert status["patch"]["operationId"] == "patchAppsV1NamespacedDeploymentStatus"
    assert status["get"]["x-kubernetes-action"] == "get"
    assert status["put"]["x-kubernetes-action"] == "put"
    assert "/apis/apps/v1/deployments" in doc["paths"]


def test_crd_document() -> None:
    resource = darkroom()
    original_schema = orjson.dumps(resource.schema)
    doc = openapi.group_version_document("deployments.example.com/v1alpha1", all_resources())
    assert orjson.dumps(resource.schema) == original_schema  # not mutated
    paths = doc["paths"]
    assert set(paths) == {
        "/apis/deployments.example.com/v1alpha1/darkrooms",
        "/apis/deployments.example.com/v1alpha1/namespaces/{namespace}/darkrooms",
        "/apis/deployments.example.com/v1alpha1/namespaces/{namespace}/darkrooms/{name}",
        "/apis/deployments.example.com/v1alpha1/namespaces/{namespace}/darkrooms/{name}/status",
    }
    item = paths["/apis/deployments.example.com/v1alpha1/namespaces/{namespace}/darkrooms/{name}"]
    assert item["patch"]["operationId"] == "patchDeploymentsExampleComV1alpha1NamespacedDarkroom"
    assert item["patch"]["tags"] == ["deploymentsExampleCom_v1alpha1"]
    gvk = {"group": "deployments.example.com", "version": "v1alpha1", "kind": "Darkroom"}
    assert item["patch"]["x-kubernetes-group-version-kind"] == gvk
    schemas = doc["components"]["schemas"]
    schema = schemas["com.example.deployments.v1alpha1.Darkroom"]
    assert schema["x-kubernetes-group-version-kind"] == [gvk]
    assert schema["description"] == "Darkroom is an image proxy deployment."
    assert schema["properties"]["spec"]["properties"]["replicas"] == {"type": "integer", "minimum": 0}
    assert schema["properties"]["spec"]["required"] == ["image"]
    assert schema["properties"]["status"]["x-kubernetes-preserve-unknown-fields"] is True
    assert schema["properties"]["apiVersion"]["type"] == "string"
    assert schema["properties"]["kind"]["type"] == "string"
    assert schema["properties"]["metadata"]["allOf"] == [{"$ref": f"#/components/schemas/{CORE_META}.ObjectMeta"}]
    listing = schemas["com.example.deployments.v1alpha1.DarkroomList"]
    assert listing["x-kubernetes-group-version-kind"] == [
        {"group": "deployments.example.com", "kind": "DarkroomList", "version": "v1alpha1"}
    ]
    assert listing["properties"]["items"]["items"]["allOf"] == [{"$ref": "#/components/schemas/com.example.deployments.v1alpha1.Darkroom"}]
    for name in ("ObjectMeta", "ListMeta", "Status", "DeleteOptions", "Patch"):
        assert f"{CORE_META}.{name}" in schemas
    assert not any(name.startswith("io.k8s.api.") for name in schemas)


def test_crd_without_schema_is_preserve_unknown() -> None:
    crd = darkroom_crd()
    del crd["spec"]["versions"][0]["schema"]
    (resource,) = from_crd(crd)
    schema = openapi.kind_schema(resource)
    assert schema["x-kubernetes-preserve-unknown-fields"] is True
    assert {"apiVersion", "kind", "metadata"} <= set(schema["properties"])


def test_group_version_document_ignores_other_group_versions() -> None:
    doc = openapi.group_version_document("coordination.k8s.io/v1", all_resources())
    assert all(path.startswith("/apis/coordination.k8s.io/v1/") for path in doc["paths"])
    assert "io.k8s.api.coordination.v1.Lease" in doc["components"]["schemas"]
    assert "io.k8s.api.core.v1.ConfigMap" not in doc["components"]["schemas"]


def test_root_document() -> None:
    hashes = {gv: openapi.document_hash(document(gv)) for gv in group_versions()}
    root = openapi.root_document(group_versions(), hashes)
    assert set(root) == {"paths"}
    assert root["paths"]["api/v1"] == {"serverRelativeURL": f"/openapi/v3/api/v1?hash={hashes['v1']}"}
    assert root["paths"]["apis/apps/v1"] == {"serverRelativeURL": f"/openapi/v3/apis/apps/v1?hash={hashes['apps/v1']}"}
    assert root["paths"]["apis/deployments.example.com/v1alpha1"]["serverRelativeURL"].startswith(
        "/openapi/v3/apis/deployments.example.com/v1alpha1?hash="
    )
    assert len(root["paths"]) == len(group_versions())
    assert openapi.root_document(["v1"], {}) == {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1"}}}


def test_openapi_path_round_trip() -> None:
    assert openapi.openapi_path("v1") == "api/v1"
    assert openapi.openapi_path("apps/v1") == "apis/apps/v1"
    for gv in group_versions():
        assert openapi.group_version_for_path(openapi.openapi_path(gv)) == gv
        assert openapi.group_version_for_path("/openapi/v3/" + openapi.openapi_path(gv)) == gv
    assert openapi.group_version_for_path("apis/apps") is None
    assert openapi.group_version_for_path("version") is None


def test_document_hash() -> None:
    doc = document("v1")
    digest = openapi.document_hash(doc)
    assert digest == openapi.document_hash(document("v1"))
    assert len(digest) == 128
    assert digest == digest.upper()
    assert digest == hashlib.sha512(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest().upper()
    reordered = dict(reversed(list(doc.items())))
    assert openapi.document_hash(reordered) == digest
    assert openapi.document_hash(document("apps/v1")) != digest
    changed = openapi.group_version_document("v1", [r for r in all_resources() if r.plural != "events"])
    assert openapi.document_hash(changed) != digest
