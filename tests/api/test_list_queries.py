"""Query parameters of the JSON API: none is silently ignored, and the collections select with ``fieldSelector``,
``q`` and ``sort``.

Behaviours: a query parameter an operation does not take — on a list, an item, a write (nothing is written), /watch,
/namespaces, /healthz, /openapi.json — is a 400 problem+json naming it in ``errors``, while the dashboard's pages and
/docs (a browser's navigation) still show; ``fieldSelector`` selects by ``metadata.name`` / ``metadata.namespace`` on
every kind and by the Task CRD's selectableFields (``spec.priority``, ``spec.taskState``, the default state counting),
with ``=``, ``==``, ``!=`` and commas, as kube-apiserver does; a field the kind does not support is kube's "field label
not supported"; ``q`` keeps names containing it and ``sort`` orders by the dashboard's keys, paging with ``continue``.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from .payloads import task, webfolder


def _names(http: FlaskClient, url: str) -> list[str]:
    response = http.get(url)
    assert response.status_code == 200, response.get_data(as_text=True)
    return [item["metadata"]["name"] if "metadata" in item else item["name"] for item in response.get_json()["items"]]


def _refused(response: Any, parameter: str, words: str) -> None:
    assert response.status_code == 400, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert parameter in problem["errors"] and words in " ".join(problem["errors"][parameter]), problem


def test_unknown_query_parameters_are_refused_not_ignored(http: FlaskClient, namespace: str) -> None:
    assert http.post("/darkrooms", json=webfolder("kept", namespace)).status_code == 201
    item = f"/darkrooms/{namespace}/kept"

    _refused(http.get(f"/darkrooms?namespace={namespace}&fieldselector=metadata.name=x"), "fieldselector", "unknown query parameter")
    listed = http.get(f"/darkrooms?namespace={namespace}&selector=a&limit=5&verbose=1")
    _refused(listed, "selector", "unknown query parameter")
    assert set(listed.get_json()["errors"]) == {"selector", "verbose"}  # every one named, the known ones not
    assert "labelSelector" in listed.get_json()["detail"]  # and what the list takes
    _refused(http.get(f"{item}?pretty=true"), "pretty", "unknown query parameter")
    _refused(http.delete(f"{item}?dryrun=All"), "dryrun", "unknown query parameter")
    assert http.get(item).status_code == 200  # a misspelled dryRun deleted nothing
    _refused(http.post("/darkrooms?dry_run=All", json=webfolder("never", namespace)), "dry_run", "unknown query parameter")
    assert http.get(f"/darkrooms/{namespace}/never").status_code == 404
    _refused(http.patch(f"{item}?force=1", json={"version": "0.2.0"}), "force", "unknown query parameter")
    assert http.get(item).get_json()["version"] == "0.1.0"
    for url in ("/tasks?x=1", "/combinedtasks?x=1", "/namespaces?x=1", "/watch?kinds=Task", "/healthz?x=1", "/openapi.json?x=1"):
        _refused(http.get(url), url.split("?")[1].split("=")[0], "unknown query parameter")

    # what the operations take still works
    assert _names(http, f"/darkrooms?namespace={namespace}&limit=1") == ["kept"]
    assert http.delete(f"{item}?dryRun=All").status_code in (202, 204) and http.get(item).status_code == 200
    # a browser's pages take what they know and ignore the rest (backend/dashboard/browsing.py says so)
    assert http.get(f"/ui/tasks?namespace={namespace}&utm_source=mail", headers={"Accept": "text/html"}).status_code == 200
    assert http.get("/docs?x=1").status_code == 200


def test_field_selectors_select_as_kube_does(http: FlaskClient, namespace: str) -> None:
    for name in ("alpha", "beta"):
        assert http.post("/darkrooms", json=webfolder(name, namespace)).status_code == 201
    for name, priority, state in (("open", 9, None), ("done", 9, "Finished"), ("low", 2, "Pending")):
        body = task(name, namespace, priority=priority, **({"state": state} if state else {}))
        assert http.post("/tasks", json=body).status_code == 201

    assert _names(http, f"/darkrooms?fieldSelector=metadata.name=beta,metadata.namespace={namespace}") == ["beta"]
    assert _names(http, f"/darkrooms?namespace={namespace}&fieldSelector=metadata.name!=beta") == ["alpha"]
    assert _names(http, f"/darkrooms?fieldSelector=metadata.namespace%3D%3D{namespace}") == ["alpha", "beta"]
    assert _names(http, f"/darkrooms?namespace={namespace}&fieldSelector=metadata.name=nothing") == []
    in_namespace = f"/tasks?namespace={namespace}&fieldSelector="
    assert _names(http, in_namespace + "spec.taskState=Pending") == ["low", "open"]  # the default state counts
    assert _names(http, in_namespace + "spec.taskState=Finished") == ["done"]
    assert _names(http, in_namespace + "spec.priority=9") == ["done", "open"]
    assert _names(http, in_namespace + "spec.priority!=9,spec.taskState==Pending") == ["low"]
    assert _names(http, f"/combinedtasks?namespace={namespace}&fieldSelector=spec.priority=9") == ["done", "open"]

    _refused(http.get(in_namespace + "spec.details=x"), "fieldSelector", "field label not supported: spec.details")
    _refused(http.get("/darkrooms?fieldSelector=spec.priority=9"), "fieldSelector", "field label not supported: spec.priority")
    _refused(http.get(in_namespace + "spec.priority"), "fieldSelector", "invalid selector")


def test_q_and_sort_select_and_order_as_the_dashboard_lists_do(http: FlaskClient, namespace: str) -> None:
    for name, priority in (("write-a", 3), ("write-b", 7), ("read-c", 5), ("write-d", 1)):
        assert http.post("/tasks", json=task(name, namespace, priority=priority)).status_code == 201
    base = f"/tasks?namespace={namespace}"
    assert _names(http, base + "&q=WRITE") == ["write-a", "write-b", "write-d"]
    assert _names(http, base + "&sort=-priority") == ["write-b", "read-c", "write-a", "write-d"]
    assert _names(http, base + "&sort=priority&q=write") == ["write-d", "write-a", "write-b"]
    assert _names(http, base + "&sort=-name") == ["write-d", "write-b", "write-a", "read-c"]

    first = http.get(base + "&sort=-priority&limit=3").get_json()
    assert [t["name"] for t in first["items"]] == ["write-b", "read-c", "write-a"] and first["total"] == 4
    rest = http.get(base + f"&sort=-priority&limit=3&continue={first['continue']}").get_json()
    assert [t["name"] for t in rest["items"]] == ["write-d"] and rest["continue"] is None

    _refused(http.get(base + "&sort=colour"), "sort", 'unknown sort key "colour"')
    _refused(http.get(base + "&sort="), "sort", 'unknown sort key ""')
    _refused(http.get("/darkrooms?sort=priority"), "sort", 'unknown sort key "priority"')  # a Task's key only
    unsorted = http.get(base + "&limit=1").get_json()["continue"]
    assert http.get(base + f"&sort=name&limit=1&continue={unsorted}").status_code == 400  # a token of another order


@pytest.mark.parametrize("limit", ["0", "x"])
def test_a_bad_limit_names_the_parameter(http: FlaskClient, limit: str) -> None:
    _refused(http.get(f"/darkrooms?limit={limit}"), "limit", "must be an integer")
