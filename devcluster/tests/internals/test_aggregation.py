"""devcluster's aggregation layer without a server: Service resolution, identities, reviews, forwarded headers.

Behaviours: :func:`resolve` follows kube's ``ResolveEndpoint`` (the Service's port by number, the
EndpointSlice port of the same name, the first endpoint not marked unready) and names the failing
condition (ServiceNotFound, ServicePortError, EndpointsNotFound, MissingEndpoints) in kube's words; the
kubeconfig's token is ``kubernetes-admin``, no credentials ``system:unsecured``, any other token 401;
TokenReview authenticates issued tokens only; SubjectAccessReview allows known users and system:masters,
needs a user or group and exactly one kind of attributes (422); forwarded headers drop the caller's
credentials and X-Remote-*/Impersonate-* and carry the authenticated user; the published ConfigMap names
the front proxy; aggregated versions sort in kube's priority order; the availability controller stops when a
change and the stop arrive together.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from devcluster.aggregation import Identity, Pki
from devcluster.aggregation.identity import authentication_configmap
from devcluster.aggregation.layer import _version_key
from devcluster.aggregation.proxy import forwarded_headers
from devcluster.aggregation.registry import APISERVICES, ENDPOINT_SLICES, SERVICES, Registry, resolve
from devcluster.errors import StatusError
from devcluster.store import Change, Store


class _Store:
    def __init__(self, objects: dict[str, list[dict[str, Any]]]) -> None:
        self.objects = objects

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return next((o for o in self.items(resource, namespace) if o["metadata"]["name"] == name), None)

    def items(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return [o for o in self.objects.get(resource, []) if namespace is None or o["metadata"].get("namespace") == namespace]

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        self.listeners = [*getattr(self, "listeners", []), listener]


SERVICE = {"metadata": {"name": "agg", "namespace": "sys"}, "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}}


def _slice(name: str, endpoints: list[dict[str, Any]], port_name: str = "https", service: str = "agg") -> dict[str, Any]:
    labels = {"kubernetes.io/service-name": service}
    return {
        "metadata": {"name": name, "namespace": "sys", "labels": labels},
        "ports": [{"name": port_name, "port": 9443}],
        "endpoints": endpoints,
    }


def _resolve(objects: dict[str, list[dict[str, Any]]], port: int = 443) -> tuple[str, int, str, str]:
    return resolve(cast(Store, _Store(objects)), {"namespace": "sys", "name": "agg", "port": port})


def test_resolve_follows_the_endpoint_slices() -> None:
    unready = {"addresses": ["10.0.0.1"], "conditions": {"ready": False}}
    ready = {"addresses": ["127.0.0.1"], "conditions": {"ready": True}}
    found = _resolve({SERVICES: [SERVICE], ENDPOINT_SLICES: [_slice("a", [unready, ready]), _slice("other", [unready], service="x")]})
    assert found == ("127.0.0.1", 9443, "", "")


@pytest.mark.parametrize(
    ("objects", "port", "reason", "message"),
    [
        ({}, 443, "ServiceNotFound", 'service/agg in "sys" is not present'),
        ({SERVICES: [SERVICE]}, 444, "ServicePortError", 'service/agg in "sys" is not listening on port 444'),
        ({SERVICES: [SERVICE]}, 443, "EndpointsNotFound", 'cannot find endpoints for service/agg in "sys"'),
        (
            {SERVICES: [SERVICE], ENDPOINT_SLICES: [_slice("a", [{"addresses": ["127.0.0.1"]}], port_name="metrics")]},
            443,
            "MissingEndpoints",
            'endpoints for service/agg in "sys" have no addresses with port name "https"',
        ),
    ],
)
def test_resolve_names_the_failing_condition(objects: dict[str, list[dict[str, Any]]], port: int, reason: str, message: str) -> None:
    assert _resolve(objects, port) == ("", 0, reason, message)


@pytest.fixture(scope="module")
def identity(tmp_path_factory: pytest.TempPathFactory) -> Identity:
    return Identity(Pki.load_or_create(tmp_path_factory.mktemp("pki")))


def test_pki_is_kept_across_restarts(tmp_path: Path) -> None:
    first = Pki.load_or_create(tmp_path)
    again = Pki.load_or_create(tmp_path)
    assert first.admin_token == again.admin_token and first.front_proxy_ca_pem == again.front_proxy_ca_pem
    assert (tmp_path / "admin.token").stat().st_mode & 0o777 == 0o600


def test_who_calls(identity: Identity) -> None:
    admin = identity.authenticate({"Authorization": f"Bearer {identity.pki.admin_token}"})
    assert (admin.name, admin.groups) == ("kubernetes-admin", ("system:masters", "system:authenticated"))
    assert identity.authenticate({}).name == "system:unsecured"
    with pytest.raises(StatusError) as refused:
        identity.authenticate({"Authorization": "Bearer forged"})
    assert (refused.value.code, refused.value.reason) == (401, "Unauthorized")


def test_token_review(identity: Identity) -> None:
    ours = identity.token_review(
        {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "spec": {"token": identity.pki.admin_token}}
    )
    assert ours["status"]["authenticated"] is True and ours["status"]["user"]["username"] == "kubernetes-admin"
    other = identity.token_review({"spec": {"token": "forged"}})
    assert "authenticated" not in other["status"] and other["status"]["user"] == {}
    with pytest.raises(StatusError) as missing:
        identity.token_review({"spec": {}})
    assert missing.value.code == 422


def test_subject_access_review(identity: Identity) -> None:
    attributes = {"nonResourceAttributes": {"path": "/apis", "verb": "get"}}
    assert identity.subject_access_review({"spec": {"user": "kubernetes-admin", **attributes}})["status"]["allowed"] is True
    assert identity.subject_access_review({"spec": {"user": "system:unsecured", **attributes}})["status"]["allowed"] is True
    assert identity.subject_access_review({"spec": {"user": "x", "groups": ["system:masters"], **attributes}})["status"]["allowed"] is True
    assert identity.subject_access_review({"spec": {"user": "alice", **attributes}})["status"]["allowed"] is False
    for spec in ({"user": "alice"}, attributes):
        with pytest.raises(StatusError) as invalid:
            identity.subject_access_review({"spec": spec})
        assert invalid.value.code == 422


def test_forwarded_headers_carry_the_authenticated_caller(identity: Identity) -> None:
    sent = CIMultiDict(
        [("Authorization", "Bearer x"), ("X-Remote-User", "mallory"), ("Impersonate-User", "bob"), ("Accept", "application/json")]
    )
    request = make_mocked_request("GET", "/apis/g/v1/things?limit=1", headers=sent)
    headers = forwarded_headers(request, identity.authenticate({}))
    assert headers.getall("X-Remote-User") == ["system:unsecured"]
    assert headers.getall("X-Remote-Group") == ["system:masters", "system:authenticated"]
    assert "Authorization" not in headers and "Impersonate-User" not in headers and headers["Accept"] == "application/json"


def test_authentication_configmap_names_the_front_proxy(identity: Identity) -> None:
    data = authentication_configmap(identity.pki)["data"]
    assert json.loads(data["requestheader-allowed-names"]) == ["front-proxy-client"]
    assert json.loads(data["requestheader-username-headers"]) == ["X-Remote-User"]
    assert data["requestheader-client-ca-file"].startswith("-----BEGIN CERTIFICATE-----")


def test_versions_sort_in_kube_priority_order() -> None:
    assert sorted(["v1alpha1", "v2beta1", "v1", "v2", "v1beta2", "foo"], key=_version_key) == [
        "v2",
        "v1",
        "v2beta1",
        "v1beta2",
        "v1alpha1",
        "foo",
    ]


def test_the_availability_controller_stops_when_a_change_and_the_stop_arrive_together() -> None:
    """devcluster's shutdown awaits Registry.stop(); a change in the same tick used to leave it looping forever."""

    async def scenario(ticks: int) -> None:
        store = _Store({})
        registry = Registry(store=cast(Store, store), catalog=cast(Any, None), writer=cast(Any, None), pki=cast(Any, None), clock=str)
        registry.start()
        await asyncio.sleep(0.01)  # the controller has synced (no APIServices) and waits for a change
        change = Change(1, "ADDED", APISERVICES, "", "v1.example.com", {}, None)
        for listener in store.listeners:
            listener(change)
        for _ in range(ticks):
            await asyncio.sleep(0)
        stopping = asyncio.ensure_future(registry.stop())
        await asyncio.wait({stopping}, timeout=10)  # a generous deadline: stopping takes one tick, the bug never ends
        assert stopping.done(), f"the controller ignored the stop ({ticks} ticks after the change)"

    # Each scenario on a thread of its own: in the whole suite the browser tests' Playwright (sync API) keeps an
    # event loop running on the main thread, where asyncio.run refuses to start another.
    with ThreadPoolExecutor(max_workers=1) as thread:
        for ticks in range(4):  # 0-2: the change's wait has finished, the controller has not resumed yet
            thread.submit(asyncio.run, scenario(ticks)).result(timeout=30)
