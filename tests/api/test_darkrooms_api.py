"""``/darkrooms`` against devcluster: create (seed payload) → read-your-writes → list → replace → merge patch →
delete (204, or 202 while a finalizer holds it); ETag/If-Match (412), stale resourceVersion (409), existing
name (409); every client mistake as problem+json (400, 404, 413, 415, 422 with friendly field paths, also
for the API server's own checks); responses conform to the published schemas; a namespace without a
name (``/darkrooms/<ns>``, also ``/tasks/<ns>``, ``/postgresqls/<ns>``) is a 404 pointing at ``?namespace=``.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from backend.api.problems import problem_of
from backend.core import errors, writing
from backend.core.access import ClusterAccess
from backend.core.kinds import darkrooms
from kinds import darkrooms as darkroom_kind
from tests.core import conformance
from tests.support import Kubectl, wait_for

from .payloads import webfolder

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"
MERGE = "application/merge-patch+json"


def problem(response: TestResponse, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    assert body["status"] == status
    conformance.validate(body, "Problem")
    return body


def created(http: FlaskClient, payload: dict[str, Any]) -> dict[str, Any]:
    response = http.post("/darkrooms", json=payload)
    assert response.status_code == 201, response.get_data(as_text=True)
    body: dict[str, Any] = response.get_json()
    return body


def merge_patch(http: FlaskClient, url: str, patch: Any, **headers: str) -> TestResponse:
    return http.patch(url, data=orjson.dumps(patch), content_type=MERGE, headers=headers)


def test_seed_payload_create_then_read_your_writes(http: FlaskClient, namespace: str, custom: Any) -> None:
    response = http.post("/darkrooms", json=webfolder("darkroom-sample", namespace))
    assert response.status_code == 201
    body = response.get_json()
    conformance.validate(body, "Darkroom")
    assert response.headers["Location"] == f"/darkrooms/{namespace}/darkroom-sample"
    assert response.headers["ETag"] == f'"{body["resourceVersion"]}"'
    assert (body["version"], body["replicas"], body["cacheTime"]) == ("0.1.0", 1, 31536000)  # CRD defaults shown
    assert body["source"] == {
        "type": "WebFolder",
        "baseUrl": "https://ajatprabha.in/assets",
        "bucket": None,
        "region": None,
        "endpoint": None,
        "pathPrefix": None,
        "credentialsSet": False,
        "credentialsSecret": None,
    }
    assert body["status"] == {
        "state": "Reconciling",
        "stateMessage": "the reconciler has not caught up with the latest change yet",
        "ready": False,
        "domains": [],
        "tls": False,
        "readyReplicas": 0,
        "conditions": [],
        "observedGeneration": None,
    }
    got = http.get(f"/darkrooms/{namespace}/darkroom-sample")  # immediately: read-your-writes through the cache
    assert got.status_code == 200
    assert got.get_json() == body
    assert got.headers["ETag"] == response.headers["ETag"]
    listed = http.get(f"/darkrooms?namespace={namespace}").get_json()
    conformance.validate(listed, "DarkroomList")
    assert (listed["items"], listed["continue"], listed["total"]) == ([body], None, 1)
    assert body in http.get("/darkrooms").get_json()["items"]
    stored = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "darkroom-sample")
    assert stored["spec"]["source"] == {"type": "WebFolder", "baseUrl": "https://ajatprabha.in/assets"}


def test_existing_name_is_409(http: FlaskClient, namespace: str) -> None:
    created(http, webfolder("twice", namespace))
    assert "already exists" in problem(http.post("/darkrooms", json=webfolder("twice", namespace)), 409)["detail"]


def test_missing_namespace_is_a_field_error(http: FlaskClient) -> None:
    body = problem(http.post("/darkrooms", json=webfolder("lost", "no-such-namespace-here")), 422)
    assert body["errors"] == {"namespace": ['namespace "no-such-namespace-here" does not exist']}


def test_validation_errors_name_friendly_fields(http: FlaskClient, namespace: str) -> None:
    payload = webfolder("Bad_Name", namespace, subDomains=["ok", "ok", "No"], source={"type": "WebFolder", "baseUrl": "ftp://x"}, colour=1)
    errors = problem(http.post("/darkrooms", json=payload), 422)["errors"]
    assert set(errors) == {"name", "subDomains.1", "subDomains.2", "source.baseUrl", "colour"}
    assert errors["colour"] == ["unknown field"]
    assert http.get(f"/darkrooms?namespace={namespace}").get_json()["items"] == []


def test_api_server_validation_maps_onto_friendly_fields(access: ClusterAccess, namespace: str) -> None:
    # Our schema mirrors the CRD, so reach the server's own checks with a payload that skipped it.
    friendly = {**webfolder("server-checked", namespace), "replicas": 500, "subDomains": ["a", "a"]}
    with pytest.raises(errors.Invalid) as caught:
        writing.create_with_owned(darkrooms.KIND, access.client, friendly)
    assert problem_of(caught.value).status == 422
    assert set(caught.value.errors) == {"replicas", "subDomains.1"}
    assert "replicas in body should be less than or equal to 100" in caught.value.errors["replicas"][0]


@pytest.mark.parametrize(
    ("data", "content_type", "status"),
    [
        (b"{not json", "application/json", 400),
        (b"", "application/json", 400),
        (b"   ", "application/json", 400),
        (b'{"name": "x"}', "text/plain", 415),
        (b'{"name": "x"}', "application/x-www-form-urlencoded", 415),
        (b"[1, 2]", "application/json", 422),
        (b'"text"', "application/json", 422),
        (b'{"name": "' + b"x" * 1_100_000 + b'"}', "application/json", 413),
    ],
    ids=["malformed", "empty", "blank", "text", "form", "array", "string", "too-large"],
)
def test_bad_bodies(http: FlaskClient, data: bytes, content_type: str, status: int) -> None:
    problem(http.post("/darkrooms", data=data, content_type=content_type), status)


def test_unknown_object_is_404_for_every_verb(http: FlaskClient, namespace: str) -> None:
    url = f"/darkrooms/{namespace}/nothing"
    problem(http.get(url), 404)
    problem(http.put(url, json=webfolder("nothing", namespace)), 404)
    problem(merge_patch(http, url, {"replicas": 2}), 404)
    problem(http.delete(url), 404)


def test_put_replaces_the_whole_friendly_object(http: FlaskClient, namespace: str) -> None:
    first = created(
        http,
        webfolder(
            "replaced",
            namespace,
            replicas=3,
            cacheTime=60,
            source={"type": "WebFolder", "baseUrl": "https://a.example", "pathPrefix": "p/"},
        ),
    )
    host = f"b-{namespace}"  # hosts are one namespace for the whole cluster: not one another test's Darkroom asks for
    response = http.put(f"/darkrooms/{namespace}/replaced", json={"source": {"baseUrl": "https://b.example"}, "subDomains": [host]})
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    conformance.validate(body, "Darkroom")
    assert response.headers["ETag"] == f'"{body["resourceVersion"]}"' != f'"{first["resourceVersion"]}"'
    assert (body["replicas"], body["cacheTime"], body["version"], body["subDomains"]) == (1, 31536000, "latest", [host])
    assert (body["source"]["baseUrl"], body["source"]["pathPrefix"]) == ("https://b.example", None)
    assert body["uid"] == first["uid"]
    assert http.get(f"/darkrooms/{namespace}/replaced").get_json() == body


def test_put_body_must_name_the_url_object(http: FlaskClient, namespace: str) -> None:
    created(http, webfolder("named", namespace))
    errors = problem(http.put(f"/darkrooms/{namespace}/named", json=webfolder("other", "elsewhere")), 422)["errors"]
    assert set(errors) == {"name", "namespace"}


def test_merge_patch_changes_only_what_it_names(http: FlaskClient, namespace: str) -> None:
    url = f"/darkrooms/{namespace}/patched"
    created(http, webfolder("patched", namespace, cacheTime=60))
    response = merge_patch(http, url, {"replicas": 4, "version": None, "source": {"pathPrefix": "img/"}})
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    assert (body["replicas"], body["cacheTime"], body["version"], body["source"]["pathPrefix"]) == (4, 60, "latest", "img/")
    assert body["source"]["baseUrl"] == "https://ajatprabha.in/assets"
    plain = http.patch(url, json={"subDomains": ["x", "y"]})  # application/json is taken as a merge patch too
    assert plain.status_code == 200
    assert http.get(url).get_json()["subDomains"] == ["x", "y"]
    assert problem(merge_patch(http, url, {"source": {"baseUrl": None}}), 422)["errors"].keys() == {"source.baseUrl"}
    assert problem(merge_patch(http, url, {"extra": True, "replicas": "2"}), 422)["errors"].keys() == {"extra", "replicas"}
    json_patch = http.patch(url, data=b'[{"op": "remove", "path": "/replicas"}]', content_type="application/json-patch+json")
    assert problem(json_patch, 415)
    assert json_patch.headers["Accept-Patch"] == MERGE


def test_if_match_guards_writes(http: FlaskClient, namespace: str) -> None:
    url = f"/darkrooms/{namespace}/guarded"
    old = created(http, webfolder("guarded", namespace))
    old_etag = f'"{old["resourceVersion"]}"'
    changed = merge_patch(http, url, {"replicas": 2}, **{"If-Match": old_etag})
    assert changed.status_code == 200
    new_etag = changed.headers["ETag"]
    stale = problem(merge_patch(http, url, {"replicas": 3}, **{"If-Match": old_etag}), 412)
    assert "re-read" in stale["detail"]
    problem(http.put(url, json=webfolder("guarded", namespace), headers={"If-Match": old_etag}), 412)
    problem(http.delete(url, headers={"If-Match": old_etag}), 412)
    assert http.get(url).get_json()["replicas"] == 2
    assert http.put(url, json=webfolder("guarded", namespace), headers={"If-Match": new_etag}).status_code == 200
    assert merge_patch(http, url, {"replicas": 5}, **{"If-Match": "*"}).status_code == 200


def test_stale_resource_version_in_the_body_is_409(http: FlaskClient, namespace: str) -> None:
    url = f"/darkrooms/{namespace}/stale"
    old = created(http, webfolder("stale", namespace))
    assert merge_patch(http, url, {"replicas": 2}).status_code == 200
    body = {**webfolder("stale", namespace), "resourceVersion": old["resourceVersion"]}
    assert "resourceVersion" in problem(http.put(url, json=body), 409)["detail"]
    problem(merge_patch(http, url, {"replicas": 3, "resourceVersion": old["resourceVersion"]}), 409)
    current = http.get(url).get_json()
    assert current["replicas"] == 2
    fresh = merge_patch(http, url, {"replicas": 3, "resourceVersion": current["resourceVersion"]})
    assert fresh.status_code == 200


def test_delete_without_finalizers_is_204_and_gone_at_once(http: FlaskClient, namespace: str) -> None:
    url = f"/darkrooms/{namespace}/short-lived"
    created(http, webfolder("short-lived", namespace))
    response = http.delete(url)
    assert (response.status_code, response.data) == (204, b"")
    problem(http.get(url), 404)  # read-your-writes holds for deletes too
    assert http.get(f"/darkrooms?namespace={namespace}").get_json()["items"] == []


def test_delete_held_by_a_finalizer_is_202_until_released(http: FlaskClient, namespace: str, custom: Any) -> None:
    url = f"/darkrooms/{namespace}/held"
    created(http, webfolder("held", namespace))
    custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "held", {"metadata": {"finalizers": ["example.com/hold"]}})
    response = http.delete(url)
    assert response.status_code == 202
    body = response.get_json()
    conformance.validate(body, "Darkroom")
    assert body["terminating"] is True and body["deletionTimestamp"]
    assert http.get(url).get_json()["terminating"] is True
    assert http.delete(url).status_code == 202  # asking again changes nothing
    custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "held", {"metadata": {"finalizers": None}})
    wait_for(lambda: http.get(url).status_code == 404, timeout_s=10, message="the released Darkroom disappears")


def test_list_filters_and_pages(http: FlaskClient, namespace: str, custom: Any) -> None:
    names = [f"page-{i:02d}" for i in range(7)]
    for name in names:
        created(http, webfolder(name, namespace))
    custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "page-03", {"metadata": {"labels": {"tier": "gold"}}})
    wait_for(
        lambda: (
            [i["name"] for i in http.get(f"/darkrooms?namespace={namespace}&labelSelector=tier%3Dgold").get_json()["items"]] == ["page-03"]
        ),
        timeout_s=10,
        message="the label reaches the cache",
    )
    assert http.get(f"/darkrooms?namespace={namespace}&labelSelector=tier!%3Dgold").get_json()["total"] == 6
    seen, token = [], None
    while True:
        page = http.get(f"/darkrooms?namespace={namespace}&limit=3" + (f"&continue={token}" if token else "")).get_json()
        conformance.validate(page, "DarkroomList")
        assert page["total"] == 7
        seen += [i["name"] for i in page["items"]]
        token = page["continue"]
        if token is None:
            break
    assert seen == names
    for bad in ("limit=0", "limit=abc", "limit=100000", "continue=garbage", "labelSelector=a+in+(b"):
        problem(http.get(f"/darkrooms?{bad}"), 400)
    assert http.get("/darkrooms?namespace=no-such-namespace").get_json() == {"items": [], "continue": None, "total": 0}


def test_list_reflects_each_change_and_repeats_unchanged_bytes(http: FlaskClient, namespace: str) -> None:
    url = f"/darkrooms?namespace={namespace}"
    created(http, webfolder("listed", namespace))
    first = http.get(url).data
    assert http.get(url).data == first
    assert merge_patch(http, f"/darkrooms/{namespace}/listed", {"replicas": 7}).status_code == 200
    assert [i["replicas"] for i in http.get(url).get_json()["items"]] == [7]


def test_writes_never_lose_a_concurrent_change_by_another_client(http: FlaskClient, namespace: str, custom: Any) -> None:
    url = f"/darkrooms/{namespace}/shared"
    created(http, webfolder("shared", namespace))
    # Another client changes the object; our cache may not have seen it yet when the next requests arrive.
    other = custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "shared", {"metadata": {"labels": {"team": "a"}}})
    assert merge_patch(http, url, {"replicas": 2}).status_code == 200  # unconditional: rebuilt on the fresh object if needed
    body = http.get(url).get_json()
    assert (body["labels"], body["replicas"]) == ({"team": "a"}, 2)
    other = custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "shared", {"metadata": {"labels": {"team": "b"}}})
    etag = f'"{other["metadata"]["resourceVersion"]}"'  # a version the client saw elsewhere, maybe newer than our cache
    response = http.put(url, json=webfolder("shared", namespace, replicas=3), headers={"If-Match": etag})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert (response.get_json()["labels"], response.get_json()["replicas"]) == ({"team": "b"}, 3)


def test_a_create_asking_for_a_taken_sub_domain_is_refused(http: FlaskClient, namespace: str, api_client: Any) -> None:
    """One host, one Darkroom: the older claim would keep the host; the API says so at once (409), in any namespace."""
    from kubernetes import client

    other = f"o-{namespace}"
    client.CoreV1Api(api_client).create_namespace({"metadata": {"name": other}})
    try:
        shared = f"shared-{namespace}"
        assert http.post("/darkrooms", json=webfolder("first", other, subDomains=[shared])).status_code == 201
        refused = http.post("/darkrooms", json=webfolder("second", namespace, subDomains=["mine", shared]))
        assert refused.status_code == 409, refused.get_data(as_text=True)
        assert refused.get_json()["detail"] == f'sub-domain "{shared}" is already served by Darkroom {other}/first'
        assert http.get(f"/darkrooms/{namespace}/second").status_code == 404
    finally:
        client.CoreV1Api(api_client).delete_namespace(other)


@pytest.mark.parametrize("url", ["https://e.com/\x00", "https://e.com/a\x1b[31m", "https://e.com/\x7f", "https://e.com/a\nb"])
def test_a_base_url_with_control_characters_is_refused(http: FlaskClient, namespace: str, custom: Any, url: str) -> None:
    """Control characters: nothing copies a NUL or a terminal escape into a ConfigMap — neither the API nor the CRD."""
    response = http.post("/darkrooms", json=webfolder("ctl", namespace, source={"type": "WebFolder", "baseUrl": url}))
    assert response.status_code == 422, response.get_data(as_text=True)
    assert "source.baseUrl" in response.get_json()["errors"]
    from kubernetes.client import ApiException

    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "ctl", "namespace": namespace},
        "spec": {"source": {"type": "WebFolder", "baseUrl": url}, "subDomains": [f"ctl-{namespace}"]},
    }
    with pytest.raises(ApiException) as refused:  # written straight to the API server: the CRD's pattern refuses it too
        custom.create_namespaced_custom_object("deployments.example.com", "v1", namespace, "darkrooms", body)
    assert refused.value.status == 422 and "spec.source.baseUrl" in (refused.value.body or "")


def test_a_repeated_json_field_is_a_400(http: FlaskClient, namespace: str) -> None:
    """Repeated fields: ``{"replicas": 1, "replicas": 9}`` is ambiguous; kube's strict decoding refuses it too."""
    source = '"source": {"type": "WebFolder", "baseUrl": "https://e.com/x"}'
    raw = f'{{"name": "dup", "namespace": "{namespace}", "replicas": 1, "replicas": 9, {source}, "subDomains": ["dup-{namespace}"]}}'
    response = http.post("/darkrooms", data=raw, content_type="application/json")
    assert response.status_code == 400, response.get_data(as_text=True)
    assert response.get_json()["detail"] == 'the request body repeats the field "replicas"; send each field once'
    nested = raw.replace('"type": "WebFolder",', '"type": "WebFolder", "type": "S3",').replace(
        '"replicas": 1, "replicas": 9', '"replicas": 1'
    )
    assert http.post("/darkrooms", data=nested, content_type="application/json").status_code == 400
    assert http.get(f"/darkrooms/{namespace}/dup").status_code == 404


@pytest.mark.parametrize("plural", ["darkrooms", "tasks", "postgresqls"])
def test_a_namespace_without_a_name_points_at_the_namespace_list(http: FlaskClient, namespace: str, plural: str) -> None:
    for method in ("GET", "PUT", "PATCH", "DELETE", "POST"):
        for path in (f"/{plural}/{namespace}", f"/{plural}/{namespace}/"):
            body = problem(http.open(path, method=method), 404)
            listed = f"/{plural}?namespace={namespace}"
            assert listed in body["detail"] and f"/{plural}/{namespace}/<name>" in body["detail"], body
            assert body["list"] == listed
    assert http.get(f"/{plural}?namespace={namespace}").status_code == 200  # where it points is a list
    other = problem(http.get(f"/{plural}-typo/{namespace}"), 404)
    assert "?namespace=" not in other.get("detail", "")


def test_no_version_shows_the_crd_default_in_kubectl_the_api_and_the_dashboard(
    http: FlaskClient, namespace: str, custom: Any, kubectl: Kubectl
) -> None:
    payload = webfolder("no-version", namespace)
    del payload["version"]
    assert created(http, payload)["version"] == darkroom_kind.DEFAULT_VERSION
    stored = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "no-version")
    assert stored["spec"]["version"] == darkroom_kind.DEFAULT_VERSION  # filled in by the API server, not by us
    assert http.get(f"/darkrooms/{namespace}/no-version").get_json()["version"] == darkroom_kind.DEFAULT_VERSION
    columns = kubectl.run("get", "dr", "no-version", "-n", namespace, "-o", "custom-columns=V:.spec.version", "--no-headers").stdout
    assert columns.strip() == darkroom_kind.DEFAULT_VERSION
    page = http.get(f"/ui/darkrooms/{namespace}/no-version").get_data(as_text=True)
    assert f">{darkroom_kind.DEFAULT_VERSION}<" in page
    # A replace without a version is defaulted the same way (never left empty, never our rewrite).
    replaced = http.put(f"/darkrooms/{namespace}/no-version", json=payload)
    assert replaced.status_code == 200, replaced.get_data(as_text=True)
    assert replaced.get_json()["version"] == darkroom_kind.DEFAULT_VERSION


def test_set_based_and_integer_label_selectors_answer_what_the_server_answers(http: FlaskClient, namespace: str, custom: Any) -> None:
    for name, size in (("small", "1"), ("large", "3")):
        created(http, webfolder(name, namespace))
        custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name, {"metadata": {"labels": {"a": size}}})
    wait_for(lambda: http.get(f"/darkrooms?namespace={namespace}&labelSelector=a").get_json()["total"] == 2, message="labels cached")
    for selector in ("a>1", "a<3", "a in (1,3),!b", "a notin (1)"):
        served = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, label_selector=selector)["items"]
        answer = http.get("/darkrooms", query_string={"namespace": namespace, "labelSelector": selector})
        assert answer.status_code == 200, (selector, answer.get_data(as_text=True))
        assert [i["name"] for i in answer.get_json()["items"]] == sorted(i["metadata"]["name"] for i in served), selector
    assert "the value must be an integer" in problem(http.get(f"/darkrooms?namespace={namespace}&labelSelector=a%3Ex"), 400)["detail"]


def test_an_s3_region_is_optional_as_the_crd_and_the_form_say(http: FlaskClient, namespace: str, custom: Any) -> None:
    """The reconciler needs only the bucket (it passes a region on when there is one): the API asks no more."""
    body = created(http, {"name": "minio", "namespace": namespace, "source": {"type": "S3", "bucket": "pics", "endpoint": "https://minio.example"},
                          "subDomains": [f"minio-{namespace}"]})  # fmt: skip
    assert body["source"]["region"] is None
    cr = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "minio")
    assert "region" not in cr["spec"]["source"]
    added = merge_patch(http, f"/darkrooms/{namespace}/minio", {"source": {"region": "eu-west-1"}})
    assert added.status_code == 200 and added.get_json()["source"]["region"] == "eu-west-1"
    document = http.get("/openapi.json").get_json()
    s3_variant = next(
        v for v in document["components"]["schemas"]["DarkroomCreate"]["properties"]["source"]["oneOf"] if v["title"] == "S3 source"
    )
    assert s3_variant["required"] == ["type", "bucket"]
    assert "(optional)" in document["components"]["schemas"]["DarkroomSourceInput"]["properties"]["region"]["description"]
