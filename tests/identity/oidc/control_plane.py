"""The OIDC control plane's kube-apiserver asked directly, and its audit log (helpers, no tests, no fixtures).

:class:`ControlPlane` asks kube-apiserver as its admin (what is stored) or with a person's own token (what kube
allows them: :meth:`ControlPlane.allows`, a SelfSubjectAccessReview); the conftest's ``control_plane`` (session) is
one. :class:`AuditLog` reads kube-apiserver's audit log (the conftest's ``audit``: access reviews with their bodies,
as :class:`AccessReview`); :func:`requests_of` picks one request kind on one object out of its events.
:func:`task_event` writes an Event about a Task the way the reconciler marks them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from tests.clusters import RealclusterProcess
from tests.support import wait_for

from .kinds_and_bodies import Kind, unique


@dataclass
class ControlPlane:
    """kube-apiserver of the OIDC control plane, over HTTPS verified against its CA."""

    cluster: RealclusterProcess
    http: requests.Session = field(default_factory=requests.Session, repr=False)

    def __post_init__(self) -> None:
        self.http.trust_env = False
        self.http.verify = str(self.cluster.ca_path)

    def request(self, method: str, path: str, *, token: str | None = None, **kwargs: Any) -> requests.Response:
        """A request as the admin (``token`` None) or as whoever ``token`` authenticates."""
        headers = {"Authorization": f"Bearer {token or self.cluster.token('admin')}", **kwargs.pop("headers", {})}
        return self.http.request(method, f"{self.cluster.url}{path}", headers=headers, timeout=30, **kwargs)

    def allows(self, token: str, verb: str, resource: str, group: str = "", namespace: str = "", name: str = "") -> bool:
        """What kube-apiserver allows the person of ``token``: a SelfSubjectAccessReview made with that token."""
        attributes = {"verb": verb, "resource": resource, "group": group, "namespace": namespace, "name": name}
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {k: v for k, v in attributes.items() if v}},
        }
        answer = self.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", token=token, json=review)
        assert answer.status_code == 201, answer.text
        return bool(answer.json()["status"].get("allowed"))

    def whoami(self, token: str) -> dict[str, Any]:
        """Who kube-apiserver takes ``token`` for (a SelfSubjectReview's ``userInfo``)."""
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        answer = self.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", token=token, json=review)
        assert answer.status_code == 201, answer.text
        user: dict[str, Any] = answer.json()["status"]["userInfo"]
        return user

    def names(self, kind: Kind, namespace: str) -> set[str]:
        """The names of ``kind`` stored in ``namespace`` (as the admin)."""
        answer = self.request("GET", kind.kube_path(namespace))
        assert answer.status_code == 200, answer.text
        return {item["metadata"]["name"] for item in answer.json()["items"]}

    def get(self, path: str) -> dict[str, Any] | None:
        answer = self.request("GET", path)
        if answer.status_code == 404:
            return None
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        return found

    def secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.get(f"/api/v1/namespaces/{namespace}/secrets/{name}")


@dataclass(frozen=True)
class AccessReview:
    """One SubjectAccessReview kube-apiserver received (its request, from the audit log)."""

    requester: str  # who asked (the panel's own identity)
    user: str  # whom it is about
    groups: tuple[str, ...]
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    allowed: bool

    @property
    def attributes(self) -> tuple[str, str, str, str, str, str]:
        return (self.verb, self.group, self.resource, self.subresource, self.namespace, self.name)


@dataclass
class AuditLog:
    """kube-apiserver's audit log (JSON lines): :meth:`mark` a place, then read the events written after it."""

    path: Path

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        """Every complete event written after ``since`` (stage ResponseComplete, or ResponseStarted of a watch)."""
        with self.path.open("rb") as f:
            f.seek(since)
            data = f.read()
        lines = data.split(b"\n")[:-1]  # the last one may still be being written
        return [entry for entry in map(json.loads, lines) if entry.get("stage") in ("ResponseComplete", "ResponseStarted")]

    def wait(
        self, since: int, predicate: Callable[[dict[str, Any]], bool], *, count: int = 1, timeout_s: float = 10.0
    ) -> list[dict[str, Any]]:
        """The events after ``since`` that ``predicate`` accepts, once there are at least ``count`` of them."""

        def found() -> list[dict[str, Any]] | None:
            matching = [entry for entry in self.events(since) if predicate(entry)]
            return matching if len(matching) >= count else None

        return wait_for(found, timeout_s=timeout_s, interval_s=0.05, message=f"{count} matching audit events")

    def access_reviews(self, since: int, *, about: str | None = None) -> list[AccessReview]:
        """The SubjectAccessReviews received after ``since`` (about the user ``about``, if given)."""
        reviews = []
        for entry in self.events(since):
            ref = entry.get("objectRef") or {}
            if ref.get("resource") != "subjectaccessreviews" or entry.get("stage") != "ResponseComplete":
                continue
            spec = (entry.get("requestObject") or {}).get("spec") or {}
            attributes = spec.get("resourceAttributes") or {}
            if about is not None and spec.get("user") != about:
                continue
            reviews.append(
                AccessReview(
                    requester=(entry.get("user") or {}).get("username", ""),
                    user=spec.get("user", ""),
                    groups=tuple(spec.get("groups") or ()),
                    verb=attributes.get("verb", ""),
                    group=attributes.get("group", ""),
                    resource=attributes.get("resource", ""),
                    subresource=attributes.get("subresource", ""),
                    namespace=attributes.get("namespace", ""),
                    name=attributes.get("name", ""),
                    allowed=bool(((entry.get("responseObject") or {}).get("status") or {}).get("allowed")),
                )
            )
        return reviews


def requests_of(events: list[dict[str, Any]], *, resource: str, verb: str, name: str) -> list[dict[str, Any]]:
    """The audit events of one request kind on one object."""
    return [
        e
        for e in events
        if (e.get("objectRef") or {}).get("resource") == resource
        and e.get("verb") == verb
        and (e.get("objectRef") or {}).get("name") == name
    ]


def task_event(control_plane: ControlPlane, namespace: str, task_uid: str, *, about: tuple[str, str, str]) -> str:
    """An Event in ``namespace`` labelled with ``task_uid`` (how the reconciler marks a Task's Events), its
    ``involvedObject`` the Task ``about`` = (namespace, name, uid) — which kube requires to be in the Event's namespace;
    its name."""
    from kinds.tasks import TASK_UID_LABEL

    name = unique("event")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace, "labels": {TASK_UID_LABEL: task_uid}},
        "involvedObject": {
            "apiVersion": "example.example.com/v1",
            "kind": "Task",
            "namespace": about[0],
            "name": about[1],
            "uid": about[2],
        },
        "reason": "Tested",
        "message": f"identity test event {name}",
        "type": "Normal",
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": {"component": "identity-tests"},
    }
    created = control_plane.request("POST", f"/api/v1/namespaces/{namespace}/events", json=event)
    assert created.status_code == 201, created.text
    return name
