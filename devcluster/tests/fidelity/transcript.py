"""One server's run of one corpus sequence: the requests it sent and what it observed, step by step.

A sequence (``corpus/``) is a function of a :class:`Side`; the suite runs the same function once
against devcluster and once against the real kube-apiserver, each in a namespace of the same name,
and compares the two :class:`Step` lists (``comparing.py``). Sequence code may use what a response
returned (a uid for a precondition, a resourceVersion to watch from), so the two runs send the same
requests *in meaning* while the literal values differ; normalisation (``normalising.py``) maps
those values to placeholders before comparing.

Steps are HTTP exchanges (status, Content-Type and Warning headers, body), watch streams (events
with consecutive BOOKMARKs collapsed, whether the server ended the stream), kubectl runs (exit
code, stdout, stderr), waits for an end state (reached or not) and facts (a value the sequence
derives, e.g. "the no-op update kept the resourceVersion", compared like any other step).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from fidelity.wire import Endpoint, Query, Reply, WatchStream

JSON = "application/json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
COMPARED_HEADERS = ("content-type", "warning")
# What the real Deployment controller writes moments after every change of a Deployment.
DEPLOYMENT_CONTROLLED = (
    "body.status",
    "body.metadata.resourceVersion",
    "body.metadata.annotations[deployment.kubernetes.io/revision]",
    "body.metadata.managedFields[name=<control-plane>/Update/status]",  # (normalising.CONTROL_PLANE_MANAGERS)
)


@dataclass
class Step:
    """One observation; ``view`` is what gets normalised and compared, ``request`` is for reports."""

    label: str
    kind: str  # http | watch | kubectl | wait | fact
    request: str
    view: dict[str, Any]
    # paths (below the step, e.g. "body.status") that controllers change on their own schedule: removed
    # from both sides before comparing (with any map or list left empty by that)
    ignore: tuple[str, ...] = ()
    # containers (e.g. "body.resources") whose members only kube has are not differences: devcluster
    # serves a subset of kube's resources by design, and discovery is compared for what it claims
    subset: tuple[str, ...] = ()


def _body_view(reply_body: bytes, content_type: str) -> Any:
    """The body as data: JSON whatever the Content-Type says (kube serves some JSON as text/plain; the
    header is compared on its own), YAML under ``yaml``, anything else under ``text``."""
    if not reply_body:
        return None
    if reply_body[:1] in (b"{", b"["):
        try:
            return orjson.loads(reply_body)
        except orjson.JSONDecodeError:
            pass
    if content_type.startswith("application/yaml"):
        try:
            return {"yaml": yaml.safe_load(reply_body)}
        except yaml.YAMLError:
            pass
    return {"text": reply_body.decode("utf-8", "replace")}


def http_view(reply: Reply) -> dict[str, Any]:
    headers = {name: reply.header(name) for name in COMPARED_HEADERS if reply.header(name)}
    content_type = (reply.header("content-type") or [""])[0]
    return {"status": reply.status, "headers": headers, "body": _body_view(reply.body, content_type)}


def _collapse_bookmarks(events: list[Any]) -> list[Any]:
    """Consecutive BOOKMARKs count as one: when they come is timer-driven and differs by design."""
    out: list[Any] = []
    for event in events:
        if isinstance(event, dict) and event.get("type") == "BOOKMARK" and out and out[-1].get("type") == "BOOKMARK":
            if _initial_events_end(event):  # the one that ends the initial events is the one that matters
                out[-1] = event
            continue
        out.append(event)
    return out


def _initial_events_end(event: dict[str, Any]) -> bool:
    annotations = ((event.get("object") or {}).get("metadata") or {}).get("annotations") or {}
    return annotations.get("k8s.io/initial-events-end") == "true"


class Watching:
    """A watch a sequence opened; :meth:`finish` records it as a step."""

    def __init__(self, side: Side, label: str, request: str, stream: WatchStream) -> None:
        self.side, self.label, self.request, self.stream = side, label, request, stream

    def wait_for(self, predicate: Callable[[list[Any]], bool], timeout_s: float = 10.0) -> bool:
        return self.stream.wait_for(predicate, timeout_s)

    def wait_events(
        self, count: int, timeout_s: float = 10.0, *, kinds: tuple[str, ...] = ("ADDED", "MODIFIED", "DELETED", "ERROR")
    ) -> bool:
        return self.wait_for(lambda events: sum(1 for e in events if e.get("type") in kinds) >= count, timeout_s)

    def finish(self, *, wait_end_s: float = 0.0) -> list[Any]:
        """Stop (after letting the server end the stream within ``wait_end_s``) and record the step."""
        if wait_end_s:
            self.stream.wait_end(wait_end_s)
        ended = self.stream.done and self.stream.ended_by_server
        self.stream.close()
        events = list(self.stream.events)
        content_type = [v for k, v in self.stream.headers if k == "content-type"]
        view = {
            "status": self.stream.status,
            "headers": {"content-type": content_type} if content_type else {},
            "events": _collapse_bookmarks(events),
            "ended_by_server": ended,
        }
        self.side.steps.append(Step(self.label, "watch", self.request, view))
        return events


@dataclass
class Side:
    """One server's run of a sequence (see the module docstring)."""

    endpoint: Endpoint
    ns: str
    kubectl_cache: Path
    steps: list[Step] = field(default_factory=list)
    cleanups: list[str] = field(default_factory=list)
    # ``ignore`` added to every later request's (a sequence about Deployments sets it once)
    default_ignore: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.endpoint.kind

    # -- HTTP --------------------------------------------------------------------------------

    def send(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: Any = None,
        content_type: str = JSON,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """A request that is not recorded (setup, polling)."""
        raw = body if isinstance(body, bytes) or body is None else _encode(body, content_type)
        all_headers = {"Content-Type": content_type} if raw is not None else {}
        all_headers.update(headers or {})
        return self.endpoint.request(method, path, query=query, body=raw, headers=all_headers)

    def req(
        self,
        label: str,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: Any = None,
        content_type: str = JSON,
        headers: Mapping[str, str] | None = None,
        ignore: tuple[str, ...] = (),
        subset: tuple[str, ...] = (),
    ) -> Reply:
        """A recorded request; returns the reply so the sequence can use what it says.

        ``ignore``: paths of the response that controllers write on their own schedule (e.g. a
        Deployment's ``body.status`` right after a write); they are compared in end-state steps.
        """
        reply = self.send(method, path, query=query, body=body, content_type=content_type, headers=headers)
        shown_query = "&".join(f"{k}={v}" for k, v in (query.items() if isinstance(query, Mapping) else query))
        request = f"{method} {path}" + (f"?{shown_query}" if shown_query else "")
        view = http_view(reply)
        if isinstance(body, dict) and isinstance(body.get("metadata"), dict) and body["metadata"].get("generateName"):
            view["generateName"] = body["metadata"]["generateName"]  # so normalising knows names made from it
        self.steps.append(Step(label, "http", request, view, (*self.default_ignore, *ignore), subset))
        return reply

    def get(self, label: str, path: str, **kw: Any) -> Reply:
        return self.req(label, "GET", path, **kw)

    def post(self, label: str, path: str, body: Any, **kw: Any) -> Reply:
        return self.req(label, "POST", path, body=body, **kw)

    def put(self, label: str, path: str, body: Any, **kw: Any) -> Reply:
        return self.req(label, "PUT", path, body=body, **kw)

    def patch(self, label: str, path: str, body: Any, content_type: str, **kw: Any) -> Reply:
        return self.req(label, "PATCH", path, body=body, content_type=content_type, **kw)

    def delete(self, label: str, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.req(label, "DELETE", path, body=body, **kw)

    # -- watch, kubectl, waits, facts --------------------------------------------------------

    def watch(self, label: str, path: str, query: Query = (), headers: Mapping[str, str] | None = None) -> Watching:
        stream = self.endpoint.watch(path, query, headers)
        shown_query = "&".join(f"{k}={v}" for k, v in (query.items() if isinstance(query, Mapping) else query))
        return Watching(self, label, f"WATCH {path}?{shown_query}", stream)

    def _kubectl(self, args: tuple[str, ...], input_text: str | None, timeout_s: float) -> subprocess.CompletedProcess[str]:
        argv = ["kubectl", "--kubeconfig", str(self.endpoint.kubeconfig), "--cache-dir", str(self.kubectl_cache), *args]
        return subprocess.run(argv, capture_output=True, text=True, input=input_text, timeout=timeout_s)

    def kubectl(self, label: str, *args: str, input_text: str | None = None, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
        result = self._kubectl(args, input_text, timeout_s)
        view = {"exit": result.returncode, "stdout": result.stdout, "stderr": result.stderr}
        self.steps.append(Step(label, "kubectl", "kubectl " + " ".join(args), view))
        return result

    def kubectl_output(self, *args: str, timeout_s: float = 60) -> str:
        """kubectl's stdout, not recorded (the sequence records what it derives from it)."""
        return self._kubectl(args, None, timeout_s).stdout

    def wait(self, label: str, predicate: Callable[[], bool], timeout_s: float = 30.0, interval_s: float = 0.1) -> bool:
        """Wait for an end state (controllers at work); records whether it was reached, not when."""
        deadline = time.monotonic() + timeout_s
        reached = predicate()
        while not reached and time.monotonic() < deadline:
            time.sleep(interval_s)
            reached = predicate()
        self.steps.append(Step(label, "wait", f"wait up to {timeout_s}s", {"reached": reached}))
        return reached

    def fact(self, label: str, value: Any) -> None:
        self.steps.append(Step(label, "fact", "fact", {"value": value}))

    def cleanup(self, path: str) -> None:
        """Delete ``path`` (a cluster-scoped object the sequence made) when the sequence ends."""
        self.cleanups.append(path)

    def gone(self, path: str) -> Callable[[], bool]:
        return lambda: self.send("GET", path).status == 404


def _encode(body: Any, content_type: str) -> bytes:
    if isinstance(body, str):
        return body.encode()
    if content_type == APPLY and not isinstance(body, (dict, list)):
        return json.dumps(body).encode()
    return orjson.dumps(body)
