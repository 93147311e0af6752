"""Writes that clash with other objects, through the Flask app, on devcluster and the real control plane.

Behaviours covered:

- a sub-domain another Darkroom asks for: the 409 names the Darkroom that *holds* its host by the reconciler's
  rule (the older claim), not the first one found that asks for it (one written around the API too), and
  ``errors`` puts it on its ``subDomains.<i>`` path (so a form shows it at Sub-domains);
- PUT and PATCH check the same: adding a taken sub-domain to a healthy Darkroom is a 409 and nothing changes —
  also for an older Darkroom, which would otherwise take the host away from the one serving it — while an edit
  that keeps a sub-domain it already asked for (and lost) is not refused; a dry run answers the same;
- a create with field errors and a taken sub-domain reports everything at once: one 422 with the clash beside
  the field errors;
- a Postgresql create that finds the data volume of a former Postgresql of that name (kept: deletionPolicy
  Retain): its answer says so (``status.dataVolume``: reused, the claim, the sentence), a password given with it
  is refused (409 on ``password``, nothing created, the password nowhere), and beside field errors the same is
  one more entry of a 422; a create without a kept volume says nothing of the kind.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.core import conformance
from tests.support import wait_for

from .payloads import webfolder
from .test_darkroom_credentials import secret_exists

MERGE = "application/merge-patch+json"
SENTINEL = "clash-sentinel-password-4242"


def answer(response: TestResponse, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    body: dict[str, Any] = response.get_json()
    if status >= 400:
        assert response.mimetype == "application/problem+json"
        conformance.validate(body, "Problem")
    return body


def merge_patch(http: FlaskClient, url: str, patch: Any, query: str = "") -> TestResponse:
    return http.patch(url + query, data=orjson.dumps(patch), content_type=MERGE)


def around_the_api(custom: Any, http: FlaskClient, namespace: str, name: str, *subs: str) -> None:
    """A Darkroom written with the cluster's own API (as kubectl would: the API's checks do not run), once the API sees it."""
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": list(subs)},
    }
    custom.create_namespaced_custom_object("deployments.example.com", "v1", namespace, "darkrooms", body)
    wait_for(lambda: http.get(f"/darkrooms/{namespace}/{name}").status_code == 200, message=f"the API's cache to see {name}")


def a_second_later(created: dict[str, Any]) -> None:
    """Wait until the clock is past the second ``created`` was stamped in (creationTimestamp has one-second
    resolution, and the older claim must be unambiguous)."""
    stamp = datetime.strptime(created["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    wait_for(lambda: (datetime.now(UTC) - stamp).total_seconds() >= 1.05, timeout_s=5, message="the next second")


def test_a_taken_sub_domain_names_the_darkroom_that_holds_its_host(http: FlaskClient, namespace: str, custom: Any) -> None:
    shared = f"held-{namespace}"
    older = answer(http.post("/darkrooms", json=webfolder("zeta-old", namespace, subDomains=[shared])), 201)
    a_second_later(older)
    around_the_api(custom, http, namespace, "alpha-new", shared)  # newer, and first by name: it holds nothing
    refused = answer(http.post("/darkrooms", json=webfolder("third", namespace, subDomains=["own", shared])), 409)
    held = f'sub-domain "{shared}" is already served by Darkroom {namespace}/zeta-old'
    assert refused["detail"] == held
    assert refused["errors"] == {"subDomains.1": [held]}
    assert http.get(f"/darkrooms/{namespace}/third").status_code == 404


def test_edits_may_not_add_a_taken_sub_domain(http: FlaskClient, namespace: str, custom: Any) -> None:
    shared = f"held-{namespace}"
    older = answer(http.post("/darkrooms", json=webfolder("old", namespace, subDomains=[shared])), 201)
    a_second_later(older)
    mine = answer(http.post("/darkrooms", json=webfolder("mine", namespace)), 201)
    url = f"/darkrooms/{namespace}/mine"
    held = f'sub-domain "{shared}" is already served by Darkroom {namespace}/old'
    for response in (
        merge_patch(http, url, {"subDomains": [f"mine-{namespace}", shared]}),
        merge_patch(http, url, {"subDomains": [f"mine-{namespace}", shared]}, "?dryRun=All"),
        http.put(url, json={**webfolder("mine", namespace), "subDomains": [f"mine-{namespace}", shared]}),
    ):
        assert answer(response, 409)["errors"] == {"subDomains.1": [held]}
    assert http.get(url).get_json()["resourceVersion"] == mine["resourceVersion"]
    # Older does not mean it may take a host: "old" would take "mine"'s away from it.
    taking = answer(merge_patch(http, f"/darkrooms/{namespace}/old", {"subDomains": [shared, f"mine-{namespace}"]}), 409)
    assert taking["errors"] == {"subDomains.1": [f'sub-domain "mine-{namespace}" is already served by Darkroom {namespace}/mine']}
    # A Darkroom that already asks for a sub-domain it lost is not refused other edits.
    around_the_api(custom, http, namespace, "late", shared)
    assert answer(merge_patch(http, f"/darkrooms/{namespace}/late", {"replicas": 2}), 200)["replicas"] == 2


def test_field_errors_and_a_taken_sub_domain_are_reported_at_once(http: FlaskClient, namespace: str) -> None:
    shared = f"held-{namespace}"
    answer(http.post("/darkrooms", json=webfolder("holder", namespace, subDomains=[shared])), 201)
    bad = webfolder("Bad_Name", namespace, subDomains=["fine", shared], source={"type": "WebFolder", "baseUrl": "ftp://x"}, replicas=-1)
    errors = answer(http.post("/darkrooms", json=bad), 422)["errors"]
    assert set(errors) == {"name", "source.baseUrl", "replicas", "subDomains.1"}
    assert errors["subDomains.1"] == [f'sub-domain "{shared}" is already served by Darkroom {namespace}/holder']
    answer(http.post("/darkrooms", json=webfolder("other", namespace)), 201)
    patch = {"replicas": -1, "subDomains": [f"other-{namespace}", shared]}
    errors = answer(merge_patch(http, f"/darkrooms/{namespace}/other", patch), 422)["errors"]
    assert set(errors) == {"replicas", "subDomains.1"}


# -- a Postgresql on kept data -------------------------------------------------------------------------------------


def kept_volume(core: Any, namespace: str, name: str) -> None:
    """A data volume as deletionPolicy Retain leaves it when its Postgresql is deleted (the PVC of pod 0)."""
    labels = {
        "app.kubernetes.io/name": "postgresql",
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/managed-by": "darkroom-operator",
    }
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    core.create_namespaced_persistent_volume_claim(namespace, {"metadata": {"name": f"data-{name}-0", "labels": labels}, "spec": spec})


def test_a_create_on_kept_data_says_so_and_refuses_a_password(http: FlaskClient, namespace: str, core: Any) -> None:
    kept_volume(core, namespace, "kept")
    refused = answer(http.post("/postgresqls", json={"name": "kept", "namespace": namespace, "password": SENTINEL}), 409)
    assert set(refused["errors"]) == {"password"}
    (why,) = refused["errors"]["password"]
    assert "the data volume data-kept-0 of a former Postgresql of this name was kept" in why
    assert "a password given now would not take effect" in why and f"kubectl delete pvc data-kept-0 -n {namespace}" in why
    assert SENTINEL not in str(refused)
    assert http.get(f"/postgresqls/{namespace}/kept").status_code == 404 and not secret_exists(core, namespace, "kept-credentials")
    # Beside field errors: one 422 with everything.
    both = answer(http.post("/postgresqls", json={"name": "kept", "namespace": namespace, "password": SENTINEL, "version": "9"}), 422)
    assert set(both["errors"]) == {"version", "password"}
    # Without a password: created, and the answer says what it runs on.
    created = answer(http.post("/postgresqls", json={"name": "kept", "namespace": namespace}), 201)
    conformance.validate(created, "Postgresql")
    data = created["status"]["dataVolume"]
    assert (data["claim"], data["reused"], data["password"]) == ("data-kept-0", True, None)
    assert data["message"].startswith('the database runs on the data volume data-kept-0 kept from a former Postgresql "kept"')
    assert http.get(f"/postgresqls/{namespace}/kept").get_json()["status"]["dataVolume"] == data
    fresh = answer(http.post("/postgresqls", json={"name": "fresh", "namespace": namespace, "password": SENTINEL}), 201)
    assert fresh["status"]["dataVolume"] is None
