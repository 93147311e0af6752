"""Server-side Table printing matches kube-apiserver.

Behaviours covered:

- ``human_duration`` reproduces apimachinery's HumanDuration at every boundary;
- custom resources: Name column first (format "name"), then each additionalPrinterColumn with its
  type, format, priority and description (default description for columns without one); cells are
  the first JSONPath match converted per type (a string column shows other values as JSON, so arrays
  print ``["a","b"]``;
  integer/number/boolean conversion; date → age; ``<invalid>``/``<unknown>`` dates); missing
  values are null; CRDs without printer columns get Name + Age; an unparseable jsonPath drops that
  column and the ones after it;
- built-ins: column names/types/priorities and cells for namespaces, configmaps, secrets,
  services (ports, node ports, external IPs, selector), deployments, ingresses, events (object,
  count, source, first/last seen), leases, serviceaccounts, networkpolicies, rolebindings; CRDs,
  roles and pods (devcluster runs none) get the default "Name / Created At" (RFC3339, not an age);
- the Table envelope: kind/apiVersion/metadata, columnDefinitions null when headers are suppressed,
  includeObject None/Metadata/Object shapes (PartialObjectMetadata carries the Table's group
  version), unknown includeObject rejected.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from devcluster.printing import Column, columns_for, human_duration, table
from devcluster.resources import BUILTINS, ResourceType, from_crd

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def builtin(plural: str) -> ResourceType:
    return next(r for r in BUILTINS if r.plural == plural)


def darkroom_crd(columns: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if columns is None:
        columns = [
            {"name": "Version", "type": "string", "jsonPath": ".spec.version", "description": "Darkroom image tag."},
            {"name": "Type", "type": "string", "jsonPath": ".spec.source.type"},
            {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
            {"name": "Domains", "type": "string", "jsonPath": ".status.domains", "priority": 1},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]
    version: dict[str, Any] = {"name": "v1alpha1", "served": True, "storage": True, "subresources": {"status": {}}}
    if columns:
        version["additionalPrinterColumns"] = columns
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "darkrooms.deployments.example.com"},
        "spec": {
            "group": "deployments.example.com",
            "names": {"plural": "darkrooms", "singular": "darkroom", "kind": "Darkroom", "listKind": "DarkroomList"},
            "scope": "Namespaced",
            "versions": [version],
        },
    }


def darkroom(name: str = "web", **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "deployments.example.com/v1alpha1",
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": ago(hours=3, minutes=4), "uid": "u1"},
        "spec": {"version": "v2.0.1", "source": {"type": "S3"}},
        "status": status,
    }


def cells(resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    return {c.name: c.cell(obj, NOW) for c in columns_for(resource)}


def defs(resource: ResourceType) -> list[tuple[str, str, str, int]]:
    return [(c.name, c.type, c.format, c.priority) for c in columns_for(resource)]


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1.5, "0s"),
        (0, "0s"),
        (59, "59s"),
        (119.9, "119s"),
        (120, "2m"),
        (123, "2m3s"),
        (9 * 60 + 59, "9m59s"),
        (10 * 60 + 30, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 4 * 60, "3h4m"),
        (8 * 3600 + 59 * 60, "8h"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (2 * 86400 + 3 * 3600, "2d3h"),
        (7 * 86400 + 23 * 3600, "7d23h"),
        (8 * 86400, "8d"),
        (729 * 86400, "729d"),
        (730 * 86400, "2y"),
        (3 * 365 * 86400 + 24 * 86400, "3y24d"),
        (8 * 365 * 86400, "8y"),
        (20 * 365 * 86400 + 5 * 86400, "20y"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


# -- custom resources --------------------------------------------------------------------------


def test_custom_resource_column_definitions() -> None:
    (resource,) = from_crd(darkroom_crd())
    columns = columns_for(resource)
    assert all(isinstance(c, Column) for c in columns)
    assert defs(resource) == [
        ("Name", "string", "name", 0),
        ("Version", "string", "", 0),
        ("Type", "string", "", 0),
        ("Ready", "string", "", 0),
        ("Domains", "string", "", 1),
        ("Age", "date", "", 0),
    ]
    assert columns[0].description.startswith("Name must be unique within a namespace.")
    assert columns[1].description == "Darkroom image tag."
    assert columns[2].description == "Custom resource definition column (in JSONPath format): .spec.source.type"


def test_custom_resource_cells() -> None:
    (resource,) = from_crd(darkroom_crd())
    obj = darkroom(
        conditions=[{"type": "Available", "status": "False"}, {"type": "Ready", "status": "True"}],
        domains=["a.example.com", "b.example.com"],
    )
    assert [c.cell(obj, NOW) for c in columns_for(resource)] == ["web", "v2.0.1", "S3", "True", '["a.example.com","b.example.com"]', "3h4m"]


def test_custom_resource_missing_values_are_null() -> None:
    (resource,) = from_crd(darkroom_crd())
    obj = darkroom()
    del obj["spec"]["source"]
    assert [c.cell(obj, NOW) for c in columns_for(resource)] == ["web", "v2.0.1", None, None, None, "3h4m"]


def test_custom_resource_type_conversions() -> None:
    columns = [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
        {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
        {"name": "Label", "type": "string", "jsonPath": ".spec.replicas"},
        {"name": "Float", "type": "string", "jsonPath": ".spec.ratio"},
        {"name": "Obj", "type": "string", "jsonPath": ".spec.nested"},
        {"name": "Null", "type": "string", "jsonPath": ".spec.nothing"},
        {"name": "WrongType", "type": "integer", "jsonPath": ".spec.paused"},
        {"name": "Array", "type": "array", "jsonPath": ".spec.items"},
        {"name": "Bad", "type": "date", "jsonPath": ".spec.when"},
        {"name": "Empty", "type": "date", "jsonPath": ".spec.never"},
        {"name": "First", "type": "string", "jsonPath": ".spec.items[*]", "format": "byte"},
    ]
    (resource,) = from_crd(darkroom_crd(columns))
    obj = darkroom()
    obj["spec"] = {
        "replicas": 3,
        "ratio": 2.5,
        "paused": True,
        "nested": {"b": [1, None], "a": "x"},
        "nothing": None,
        "items": ["one", "two"],
        "when": "yesterday",
        "never": "",
    }
    got = cells(resource, obj)
    assert got["Replicas"] == 3
    assert got["Ratio"] == 2.5 and isinstance(got["Ratio"], float)
    assert got["Paused"] is True
    assert got["Label"] == "3"
    assert got["Float"] == "2.5"
    assert got["Obj"] == '{"a":"x","b":[1,null]}'  # JSON, keys sorted (checked against kube 1.37)
    assert got["Null"] is None
    assert got["WrongType"] is None
    assert got["Array"] is None
    assert got["Bad"] == "<invalid>"
    assert got["Empty"] == "<unknown>"
    assert got["First"] == "one"
    assert columns_for(resource)[-1].format == "byte"
    obj["spec"]["ratio"] = 3
    obj["spec"]["replicas"] = 4.9
    got = cells(resource, obj)
    assert got["Ratio"] == 3.0 and isinstance(got["Ratio"], float)
    assert got["Replicas"] == 4
    obj["spec"]["ratio"] = 1234567.0
    assert cells(resource, obj)["Float"] == "1234567"  # Go JSON: no exponent below 1e21


def test_custom_resource_without_printer_columns_gets_age() -> None:
    (resource,) = from_crd(darkroom_crd([]))
    assert defs(resource) == [("Name", "string", "name", 0), ("Age", "date", "", 0)]
    assert columns_for(resource)[1].description.startswith("CreationTimestamp is a timestamp")
    assert [c.cell(darkroom(), NOW) for c in columns_for(resource)] == ["web", "3h4m"]


def test_custom_resource_bad_jsonpath_drops_remaining_columns() -> None:
    columns = [
        {"name": "Version", "type": "string", "jsonPath": ".spec.version"},
        {"name": "Broken", "type": "string", "jsonPath": ".spec[oops"},
        {"name": "Later", "type": "string", "jsonPath": ".spec.version"},
    ]
    (resource,) = from_crd(darkroom_crd(columns))
    assert [c.name for c in columns_for(resource)] == ["Name", "Version"]


# -- built-ins ---------------------------------------------------------------------------------


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "creationTimestamp": ago(minutes=10, seconds=30), **extra}


def test_namespaces_configmaps_secrets_serviceaccounts_leases() -> None:
    assert defs(builtin("namespaces")) == [("Name", "string", "name", 0), ("Status", "string", "", 0), ("Age", "string", "", 0)]
    assert [c.cell({"metadata": meta("ns"), "status": {"phase": "Terminating"}}, NOW) for c in columns_for(builtin("namespaces"))] == [
        "ns",
        "Terminating",
        "10m",
    ]
    assert [c.name for c in columns_for(builtin("configmaps"))] == ["Name", "Data", "Age"]
    assert cells(builtin("configmaps"), {"metadata": meta("cm"), "data": {"a": "1"}, "binaryData": {"b": "AA=="}})["Data"] == 2
    assert [c.name for c in columns_for(builtin("secrets"))] == ["Name", "Type", "Data", "Age"]
    secret = {"metadata": meta("s"), "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}}
    assert [c.cell(secret, NOW) for c in columns_for(builtin("secrets"))] == ["s", "kubernetes.io/tls", 2, "10m"]
    assert [c.name for c in columns_for(builtin("serviceaccounts"))] == ["Name", "Age"]  # kube 1.34 dropped SECRETS
    assert [c.name for c in columns_for(builtin("leases"))] == ["Name", "Holder", "Age"]
    assert cells(builtin("leases"), {"metadata": meta("l"), "spec": {"holderIdentity": "me_1"}})["Holder"] == "me_1"
    assert cells(builtin("leases"), {"metadata": meta("l"), "spec": {}})["Holder"] == ""


def test_services() -> None:
    resource = builtin("services")
    assert defs(resource) == [
        ("Name", "string", "name", 0),
        ("Type", "string", "", 0),
        ("Cluster-IP", "string", "", 0),
        ("External-IP", "string", "", 0),
        ("Port(s)", "string", "", 0),
        ("Age", "string", "", 0),
        ("Selector", "string", "", 1),
    ]
    svc = {
        "metadata": meta("web"),
        "spec": {
            "type": "NodePort",
            "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"],
            "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}, {"port": 53, "protocol": "UDP"}],
            "selector": {"tier": "edge", "app": "web"},
        },
    }
    assert [c.cell(svc, NOW) for c in columns_for(resource)] == [
        "web",
        "NodePort",
        "10.96.0.10",
        "<none>",
        "80:30080/TCP,53/UDP",
        "10m",
        "app=web,tier=edge",
    ]
    headless = {
        "metadata": meta("h"),
        "spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"], "externalIPs": ["1.2.3.4"]},
    }
    assert [c.cell(headless, NOW) for c in columns_for(resource)][1:5] == ["ClusterIP", "None", "1.2.3.4", "<none>"]
    assert cells(resource, headless)["Selector"] == "<none>"
    lb = {"metadata": meta("lb"), "spec": {"type": "LoadBalancer", "ports": [{"port": 443, "protocol": "TCP"}]}, "status": {}}
    assert cells(resource, lb)["External-IP"] == "<pending>"
    lb["status"] = {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}, {"hostname": "lb.example.com"}]}}
    assert cells(resource, lb)["External-IP"] == "203.0.113.9,lb.example.com"
    assert cells(resource, lb)["Cluster-IP"] == "<none>"
    ext = {"metadata": meta("x"), "spec": {"type": "ExternalName", "externalName": "db.example.com"}}
    assert cells(resource, ext)["External-IP"] == "db.example.com"


def test_deployments() -> None:
    resource = builtin("deployments")
    assert defs(resource) == [
        ("Name", "string", "name", 0),
        ("Ready", "string", "", 0),
        ("Up-to-date", "string", "", 0),
        ("Available", "string", "", 0),
        ("Age", "string", "", 0),
        ("Containers", "string", "", 1),
        ("Images", "string", "", 1),
        ("Selector", "string", "", 1),
    ]
    deploy = {
        "metadata": meta("web"),
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]}]},
            "template": {"spec": {"containers": [{"name": "proxy", "image": "darkroom:2"}, {"name": "sidecar", "image": "envoy:1"}]}},
        },
        "status": {"readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1},
    }
    assert [c.cell(deploy, NOW) for c in columns_for(resource)] == [
        "web",
        "1/3",
        2,
        1,
        "10m",
        "proxy,sidecar",
        "darkroom:2,envoy:1",
        "app=web,env in (dev,prod)",
    ]
    fresh = {"metadata": meta("new"), "spec": {"template": {"spec": {"containers": []}}}}
    assert [c.cell(fresh, NOW) for c in columns_for(resource)][1:4] == ["0/1", 0, 0]


def test_ingresses() -> None:
    resource = builtin("ingresses")
    assert [c.name for c in columns_for(resource)] == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    ing = {
        "metadata": meta("web"),
        "spec": {
            "ingressClassName": "nginx",
            "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}],
            "tls": [{"hosts": ["a.example.com"]}],
        },
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}},
    }
    assert [c.cell(ing, NOW) for c in columns_for(resource)] == [
        "web",
        "nginx",
        "a.example.com,b.example.com",
        "10.0.0.1",
        "80, 443",
        "10m",
    ]
    bare = {"metadata": meta("bare"), "spec": {"rules": [{"http": {}}]}}
    assert [c.cell(bare, NOW) for c in columns_for(resource)][1:5] == ["<none>", "*", "", "80"]
    many = {"metadata": meta("m"), "spec": {"rules": [{"host": f"h{i}.example.com"} for i in range(5)]}}
    assert cells(resource, many)["Hosts"] == "h0.example.com,h1.example.com,h2.example.com + 2 more..."


def test_events() -> None:
    resource = builtin("events")
    assert defs(resource) == [
        ("Last Seen", "string", "", 0),
        ("Type", "string", "", 0),
        ("Reason", "string", "", 0),
        ("Object", "string", "", 0),
        ("Subobject", "string", "", 1),
        ("Source", "string", "", 1),
        ("Message", "string", "", 0),
        ("First Seen", "string", "", 1),
        ("Count", "string", "", 1),
        ("Name", "string", "name", 1),
    ]
    event = {
        "metadata": meta("foo.17a"),
        "involvedObject": {"kind": "Darkroom", "name": "foo", "namespace": "darkroom", "fieldPath": "spec.version"},
        "reason": "Reconciled",
        "message": "  all good \n",
        "type": "Normal",
        "source": {"component": "darkroom-controller"},
        "firstTimestamp": ago(hours=2),
        "lastTimestamp": ago(seconds=30),
        "count": 4,
    }
    assert [c.cell(event, NOW) for c in columns_for(resource)] == [
        "30s",
        "Normal",
        "Reconciled",
        "darkroom/foo",
        "spec.version",
        "darkroom-controller",
        "all good",
        "120m",
        4,
        "foo.17a",
    ]
    new_style = {
        "metadata": meta("bar"),
        "involvedObject": {"kind": "Node"},
        "eventTime": (NOW - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "reportingComponent": "kubelet",
        "reportingInstance": "node-1",
    }
    got = cells(resource, new_style)
    assert (got["Last Seen"], got["First Seen"], got["Count"], got["Object"], got["Source"]) == ("5s", "5s", 1, "node", "kubelet, node-1")
    series = dict(new_style, series={"count": 7, "lastObservedTime": ago(seconds=1)})
    assert (cells(resource, series)["Last Seen"], cells(resource, series)["Count"]) == ("1s", 7)


def test_pods_print_as_kubectl_shows_them() -> None:
    # printPod's columns; the status in short (phase, a container's waiting/terminated reason, Terminating); no row conditions.
    resource = builtin("pods")
    names = ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]
    assert [c.name for c in columns_for(resource)] == names
    running = {
        "metadata": meta("web"),
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "devcluster-node"},
        "status": {
            "phase": "Running",
            "podIP": "10.244.0.9",
            "containerStatuses": [{"name": "a", "ready": True, "restartCount": 1}, {"name": "b", "ready": False, "restartCount": 2}],
        },
    }
    assert cells(resource, running) | {"Age": ""} == {
        "Name": "web",
        "Ready": "1/2",
        "Status": "Running",
        "Restarts": "3",
        "Age": "",
        "IP": "10.244.0.9",
        "Node": "devcluster-node",
        "Nominated Node": "<none>",
        "Readiness Gates": "<none>",
    }
    waiting = {"metadata": meta("w"), "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending"}}
    assert (cells(resource, waiting)["Status"], cells(resource, waiting)["Node"]) == ("Pending", "<none>")
    waiting["status"]["containerStatuses"] = [{"name": "a", "state": {"waiting": {"reason": "ContainerCreating"}}}]
    assert cells(resource, waiting)["Status"] == "ContainerCreating"
    waiting["metadata"]["deletionTimestamp"] = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert cells(resource, waiting)["Status"] == "Terminating"


def test_replicasets_print_desired_current_ready() -> None:
    resource = builtin("replicasets")
    assert [c.name for c in columns_for(resource)] == ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"]
    rs = {
        "metadata": meta("web-abc"),
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}},
        },
        "status": {"replicas": 2, "readyReplicas": 1},
    }
    got = cells(resource, rs)
    assert (got["Desired"], got["Current"], got["Ready"], got["Selector"]) == (3, 2, 1, "app=web")


def test_networkpolicies_and_rolebindings() -> None:
    netpol = builtin("networkpolicies")
    assert [c.name for c in columns_for(netpol)] == ["Name", "Pod-Selector", "Age"]
    assert cells(netpol, {"metadata": meta("deny"), "spec": {"podSelector": {}}})["Pod-Selector"] == "<none>"
    assert cells(netpol, {"metadata": meta("web"), "spec": {"podSelector": {"matchLabels": {"app": "web"}}}})["Pod-Selector"] == "app=web"
    bindings = builtin("rolebindings")
    assert defs(bindings) == [
        ("Name", "string", "name", 0),
        ("Role", "string", "", 0),
        ("Age", "string", "", 0),
        ("Users", "string", "", 1),
        ("Groups", "string", "", 1),
        ("ServiceAccounts", "string", "", 1),
    ]
    rb = {
        "metadata": meta("rb"),
        "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "User", "name": "bob"},
            {"kind": "ServiceAccount", "name": "ctl", "namespace": "darkroom"},
        ],
    }
    assert [c.cell(rb, NOW) for c in columns_for(bindings)] == ["rb", "ClusterRole/view", "10m", "alice, bob", "", "darkroom/ctl"]


def test_default_columns_for_crds_and_roles() -> None:
    for plural in ("customresourcedefinitions", "roles", "clusterroles"):
        resource = builtin(plural)
        assert defs(resource) == [("Name", "string", "name", 0), ("Created At", "date", "", 0)], plural
    crd = {"metadata": {"name": "darkrooms.deployments.example.com", "creationTimestamp": "2024-05-31T10:00:00+02:00"}}
    assert [c.cell(crd, NOW) for c in columns_for(builtin("customresourcedefinitions"))] == [
        "darkrooms.deployments.example.com",
        "2024-05-31T08:00:00Z",
    ]


# -- the Table envelope ------------------------------------------------------------------------


def test_table_envelope_and_include_object() -> None:
    (resource,) = from_crd(darkroom_crd())
    obj = darkroom(domains=["a.example.com"])
    list_meta = {"resourceVersion": "42"}
    result = table(resource, [obj], include_object="Metadata", now=NOW, list_meta=list_meta)
    assert result["kind"] == "Table"
    assert result["apiVersion"] == "meta.k8s.io/v1"
    assert result["metadata"] == list_meta
    assert [d["name"] for d in result["columnDefinitions"]] == ["Name", "Version", "Type", "Ready", "Domains", "Age"]
    assert set(result["columnDefinitions"][0]) == {"name", "type", "format", "description", "priority"}
    assert result["rows"] == [
        {
            "cells": ["web", "v2.0.1", "S3", None, '["a.example.com"]', "3h4m"],
            "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]},
        }
    ]
    assert table(resource, [obj], include_object="", now=NOW, list_meta={})["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    beta = table(resource, [obj], include_object="Metadata", now=NOW, list_meta={}, api_version="meta.k8s.io/v1beta1")
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"
    assert beta["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
    assert table(resource, [obj], include_object="Object", now=NOW, list_meta={})["rows"][0]["object"] == obj
    # Go marshals the emptied RawExtension as null
    assert table(resource, [obj], include_object="None", now=NOW, list_meta={})["rows"][0] == {
        "cells": ["web", "v2.0.1", "S3", None, '["a.example.com"]', "3h4m"],
        "object": None,
    }


def test_table_without_headers_and_empty_lists() -> None:
    resource = builtin("configmaps")
    result = table(resource, [], include_object="Metadata", now=NOW, list_meta={}, include_definitions=False)
    assert result["columnDefinitions"] is None
    assert result["rows"] == []


def test_unknown_include_object_is_rejected() -> None:
    with pytest.raises(ValueError, match='unrecognized includeObject value: "Everything"'):
        table(builtin("configmaps"), [], include_object="Everything", now=NOW, list_meta={})


def test_naive_now_is_utc() -> None:
    naive = NOW.replace(tzinfo=None)
    assert cells(builtin("configmaps"), {"metadata": meta("cm")})["Age"] == columns_for(builtin("configmaps"))[2].cell(
        {"metadata": meta("cm")}, naive
    )
