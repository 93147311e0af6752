"""What the identity suites share: the control plane as its admin and as each person, its audit log, more people, the
bodies of the three kinds, ID tokens per person, an impersonating panel, and a reader of Server-Sent Events streams.

Everything runs on the ``oidc_realcluster`` (real kube-apiserver trusting the session's ORY Hydra) with the ``teams``
of :mod:`identityfixtures` (alice edits team-a; bob views team-a and edits team-b; carol has nothing) and these people
added to the provider (:func:`more_people`):

- **erin** (group ``darkroom-makers``): a custom Role in team-a that may do everything with Darkrooms and Postgresqls
  and nothing with Secrets;
- **mallory** (group ``system:masters`` at the provider): kube and the panel must make that ``oidc:system:masters``,
  which has no rights at all;
- **dave** (group ``revocable``): no bindings; a test grants and revokes his rights.

:class:`ControlPlane` asks kube-apiserver directly — as its admin (what is stored) or with a person's own token (what
kube allows them: :meth:`ControlPlane.allows`, a SelfSubjectAccessReview). :class:`AuditLog` reads kube-apiserver's
audit log (``oidc_audit_log``: access reviews with their bodies). :class:`EventStream` reads one SSE stream (``/watch``
or a dashboard live list) in a thread, keeping every frame and the id the stream has reached.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from identityfixtures import GROUP_PREFIX, TEAM_A, TEAM_B, Panel, Teams
from identityprovider import HydraProcess, User
from support import RealclusterProcess, wait_for

from backend.core.kinds.registry import KINDS
from cluster.resources import Resource

RUN = uuid.uuid4().hex[:5]  # in every name this session makes, so lists can be narrowed to it
PEOPLE = ("alice", "bob", "carol")
NAMESPACES = (TEAM_A, TEAM_B)
MORE_PEOPLE = {
    "erin": User("erin", "erin-password", ("darkroom-makers",)),
    "mallory": User("mallory", "mallory-password", ("system:masters",)),
    "dave": User("dave", "dave-password", ("revocable",)),
}
DARKROOM_MAKER_ROLE = f"""\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: darkroom-maker, namespace: {TEAM_A}}}
rules:
  - apiGroups: [deployments.example.com, database.db.example.com]
    resources: [darkrooms, postgresqls]
    verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: darkroom-makers, namespace: {TEAM_A}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: darkroom-maker}}
subjects: [{{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "{GROUP_PREFIX}darkroom-makers"}}]
"""


# --- the kinds ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """One of our kinds as the tests address it: the API's ``/<plural>`` and kube's resource."""

    title: str
    plural: str
    resource: Resource

    @property
    def group(self) -> str:
        return self.resource.group

    def kube_path(self, namespace: str, name: str = "") -> str:
        path = f"/apis/{self.group}/{self.resource.version}/namespaces/{namespace}/{self.plural}"
        return f"{path}/{name}" if name else path


KIND_LIST = tuple(Kind(kind.title, kind.plural, kind.resource) for kind in KINDS)
BY_PLURAL = {kind.plural: kind for kind in KIND_LIST}


def unique(prefix: str) -> str:
    """A fresh DNS label of this session: ``<prefix>-<run>-<random>``."""
    return f"{prefix}-{RUN}-{uuid.uuid4().hex[:5]}"


def body(plural: str, name: str, namespace: str, **changes: Any) -> dict[str, Any]:
    """A valid create/replace body of the kind (friendly form)."""
    if plural == "darkrooms":
        shape: dict[str, Any] = {
            "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": [f"{name}-{namespace}"],  # sub-domains are one namespace for the whole cluster
        }
    elif plural == "tasks":
        shape = {"priority": 5, "deadline": "2031-03-31T17:00:00Z", "details": "Write notes."}
    else:
        shape = {}
    return {"name": name, "namespace": namespace, **shape, **changes}


def changed(plural: str) -> dict[str, Any]:
    """A merge patch that changes something of the kind (also valid as extra fields of :func:`body`)."""
    if plural == "darkrooms":
        return {"version": "0.2.0"}
    if plural == "tasks":
        return {"priority": 7}
    return {"resources": {"requests": {"cpu": "100m"}}}


def s3_darkroom(name: str, namespace: str, keys: tuple[str, str]) -> dict[str, Any]:
    source = {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "accessKey": keys[0], "secretKey": keys[1]}
    return {"name": name, "namespace": namespace, "source": source, "subDomains": [f"{name}-{namespace}"]}


# --- the control plane, asked directly -----------------------------------------------------------------------------


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


@pytest.fixture(scope="session")
def control_plane(teams: Teams) -> Iterator[ControlPlane]:
    found = ControlPlane(teams.cluster)
    yield found
    found.http.close()


# --- the audit log -------------------------------------------------------------------------------------------------


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


@pytest.fixture(scope="session")
def audit(oidc_audit_log: Path) -> AuditLog:
    return AuditLog(oidc_audit_log)


def requests_of(events: list[dict[str, Any]], *, resource: str, verb: str, name: str) -> list[dict[str, Any]]:
    """The audit events of one request kind on one object."""
    return [
        e
        for e in events
        if (e.get("objectRef") or {}).get("resource") == resource
        and e.get("verb") == verb
        and (e.get("objectRef") or {}).get("name") == name
    ]


# --- people --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def more_people(teams: Teams, identity_provider: HydraProcess) -> Mapping[str, User]:
    """erin, mallory and dave at the provider, erin's Role in team-a (see the module docstring)."""
    identity_provider.users.update(MORE_PEOPLE)
    teams.kubectl("apply", "-f", "-", input_text=DARKROOM_MAKER_ROLE)
    return MORE_PEOPLE


@dataclass
class Tokens:
    """ID tokens of the panel client per person, signed in once each (an hour's lifetime: the session's)."""

    panel: Panel
    _tokens: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __getitem__(self, person: str) -> str:
        with self._lock:
            if person not in self._tokens:
                self._tokens[person] = self.panel.id_token(person)
            return self._tokens[person]

    def bearer(self, person: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self[person]}", "Accept": "application/json"}


@pytest.fixture(scope="session")
def tokens(panel: Panel, more_people: Mapping[str, User]) -> Tokens:
    return Tokens(panel)


@pytest.fixture(scope="session")
def impersonating_panel(panel_factory: Callable[..., Panel]) -> Panel:
    """A control panel that verifies ID tokens itself and impersonates their people (``identity=impersonate``)."""
    return panel_factory("impersonate")


def loopback() -> requests.Session:
    """An HTTP session for the panels on 127.0.0.1: no proxy, CA bundle or netrc from the environment."""
    session = requests.Session()
    session.trust_env = False
    return session


# --- Server-Sent Events --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    id: int | None
    event: str
    data: str

    def json(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.data)
        return loaded


class EventStream:
    """One SSE response read in a thread: every frame (heartbeats too) and the last ``id`` seen (the stream's cursor).

    ``close`` shuts the connection's socket (waking the reader) and joins the thread.
    """

    def __init__(self, http: requests.Session, url: str, headers: Mapping[str, str] | None = None) -> None:
        self.http = http
        self.response = http.get(url, headers={"Accept": "text/event-stream", **(headers or {})}, stream=True, timeout=(5, 60))
        self.status = self.response.status_code
        self.frames: list[Frame] = []
        self.last_id = -1
        self.ended = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name=f"sse-{url[-40:]}", daemon=True)
        if self.status == 200:
            self._thread.start()
        else:
            self.body = self.response.text
            self.response.close()
            self.ended.set()

    def _read(self) -> None:
        buffer = b""
        try:
            for chunk in self.response.iter_content(chunk_size=None):
                buffer += chunk
                while b"\n\n" in buffer:
                    raw, buffer = buffer.split(b"\n\n", 1)
                    self._take(raw.decode())
        except (requests.RequestException, OSError, ValueError, AttributeError):
            pass  # closed by close(), or the server ended the stream
        finally:
            self.ended.set()

    def _take(self, raw: str) -> None:
        frame_id: int | None = None
        event, data = "message", []
        for line in raw.split("\n"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "id":
                frame_id = int(value)
            elif name == "event":
                event = value
            elif name == "data":
                data.append(value)
            elif name == "" and value.strip() == "heartbeat":
                event = "heartbeat"
        with self._lock:
            self.frames.append(Frame(frame_id, event, "\n".join(data)))
            if frame_id is not None:
                self.last_id = max(self.last_id, frame_id)

    def events(self) -> list[Frame]:
        """The frames that are changes (no ready, heartbeat or reset)."""
        with self._lock:
            return [f for f in self.frames if f.event not in ("ready", "heartbeat", "reset")]

    def wait_until(self, event_id: int, timeout_s: float = 15.0) -> None:
        """Until the stream's cursor has reached ``event_id`` (every change up to it was shown or withheld)."""
        wait_for(lambda: self.last_id >= event_id or None, timeout_s=timeout_s, message=f"the stream to reach event {event_id}")

    def close(self) -> None:
        # the socket under the response (urllib3's http.client response reads it through a SocketIO): shutting it
        # down wakes the reader now, where closing the response would wait for the server's next frame
        fp = getattr(getattr(self.response.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.response.close()
        if self._thread.is_alive():
            self._thread.join(10)


@pytest.fixture
def open_streams() -> Iterator[Callable[..., EventStream]]:
    """Factory of :class:`EventStream` (``open(http, url, headers)``); every one closed at teardown."""
    opened: list[EventStream] = []

    def open_stream(http: requests.Session, url: str, headers: Mapping[str, str] | None = None) -> EventStream:
        stream = EventStream(http, url, headers)
        opened.append(stream)
        return stream

    yield open_stream
    for stream in opened:
        stream.close()


def wait_until_epoch(moment: float, *, message: str) -> None:
    """Until the wall clock passes ``moment`` (a token's ``exp``: what the test waits for is time itself)."""
    wait_for(lambda: time.time() > moment or None, timeout_s=max(1.0, moment - time.time() + 5), interval_s=0.1, message=message)


def problem(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, f"{response.request.method} {response.url}: {response.status_code} {response.text[:600]}"
    found: dict[str, Any] = response.json()
    return found


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


def session_secret(panel: Panel, browser: requests.Session) -> str | None:
    """The name of the Secret that holds ``browser``'s session at ``panel`` (None without a session cookie): the cookie
    read with the panel's own signing serializer (it holds only the session id)."""
    from backend.identity.authenticating import SESSION_ID
    from backend.identity.sessions import secret_name

    cookie = browser.cookies.get(panel.app.config["SESSION_COOKIE_NAME"])
    if cookie is None:
        return None
    serializer = panel.app.session_interface.get_signing_serializer(panel.app)  # type: ignore[attr-defined]
    return secret_name(serializer.loads(cookie)[SESSION_ID])


def stored_login(panel: Panel, browser: requests.Session, control_plane: ControlPlane) -> dict[str, Any] | None:
    """What the panel stores for ``browser``'s session (the Login of :mod:`backend.identity.sessions`, tokens included),
    read as the admin from its Secret; None when the session has ended."""
    import base64

    from backend.identity.sessions import DATA_KEY

    name = session_secret(panel, browser)
    secret = control_plane.secret(panel.settings.session_namespace, name) if name else None
    if secret is None:
        return None
    login: dict[str, Any] = json.loads(base64.b64decode(secret["data"][DATA_KEY]))
    return login
