"""Pod logs of a Darkroom or a Postgresql: a page, its live stream, and a download — read as the person.

Installed by :mod:`backend.dashboard` (:func:`install`). Routes, for each workload of :data:`WORKLOADS`
(``<plural>``: ``darkrooms``, ``postgresqls``):

- ``GET /ui/<plural>/<ns>/<name>/logs`` — the page (template ``pod_logs.html``, ``static/podlogs.js``): the object's
  pods, the controls (pod, container, tail, since, previous, follow, wrap) as a GET form, the log lines as they come
  from the stream, Pause/Resume, a wrap toggle and the download link.
- ``GET /ui/<plural>/<ns>/<name>/logs/stream`` — Server-Sent Events of the lines (:mod:`.logstreams`); ``done`` when
  every log ended (without ``follow``, once the tail is sent).
- ``GET /ui/<plural>/<ns>/<name>/logs/download`` — the lines as ``text/plain`` (``Content-Disposition: attachment``).

The parameters (:data:`PARAMETERS`, defined once: the parser, the OpenAPI document and the user guide's table) are the
same for the three, less what one does not take (the stream no ``wrap``, the download neither ``wrap`` nor ``follow``).
A parameter that does not parse, or one the route does not take, is a 400 naming it — on the page too (a logs page is
reached by its own links and form; a misspelt ``tial=5`` would otherwise show something other than asked).

Decisions:

- **Which pods.** The object's controller — its Deployment (a Darkroom) or StatefulSet (a Postgresql), named after it
  and found by its controller UID in the API's cache (:func:`.darkroompages.child`) — says which pods are its own: its
  ``spec.selector``, with which the pods are listed *as the person* (the API does not cache pods). ``kubectl logs
  deployment/x`` picks them the same way. At most :data:`PODS_MAX` pods are read at once (the page says when more
  exist): each costs a reader thread and an API server connection.
- **As the person.** Each pod's log is read through the official client as the person
  (:meth:`cluster.acting.ActingClient.pod_log`: kube-apiserver authorizes ``get pods/log``). The page and the stream
  ask that of each pod first (``ActingClient.require``), so a person who may not gets the 403 page naming the verb,
  the resource ``pods/log`` and the namespace — not a page whose stream silently fails.
- **Bounded.** Open streams are capped by ``settings.log_stream_max`` (and per client by ``stream_max_per_client``)
  apart from ``/watch``'s caps: over it, 503 with ``Retry-After`` (``stream_retry_after_s``). A stream's buffer is
  bounded and lossy (:mod:`.logstreams`). ``tail`` is at most :data:`TAIL_MAX`; without ``tail`` or ``since`` the page
  shows the last :data:`DEFAULT_TAIL` lines of each pod. A download reads at most :data:`DOWNLOAD_MAX_BYTES` in all.
- **Interleaving.** A stream of several pods interleaves their lines as they arrive, each marked with its pod; a
  download of several pods asks the kubelet for timestamps, orders the lines by them and marks each ``[pod]`` (the
  timestamps are then dropped: the log as written, in order).
- **Nothing of ours logs a log.** The lines go from the API server to the client; the server's own log never has them
  (a reader's failure becomes a note in the stream). Secrets *in* a container's log are the container's to avoid.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar
from urllib.parse import urlencode

import yaml
from flask import Blueprint, Response, request
from werkzeug.datastructures import MultiDict

import labelselectors
from backend.api.problems import Problem
from backend.api.watch.limits import LimitReached, StreamLimits
from backend.api.watch.streams import Streams, pushed_response
from backend.core.services import KindService, Services
from backend.dashboard import darkroompages, rendering
from backend.dashboard.logstreams import LineBuffer, LogStream, OpenLogStreams, PodReader
from cluster import DEPLOYMENTS, PODS, STATEFULSETS, FrozenDict, Resource
from cluster.acting import ActingClient

TAIL_MAX = 10_000
DEFAULT_TAIL = 500
SINCE_MAX_S = 30 * 24 * 3600
PODS_MAX = 20
DOWNLOAD_MAX_BYTES = 10 * 1024 * 1024
TRUE, FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no", "")
SINCE = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
SINCE_UNITS = (86400, 3600, 60, 1)
T = TypeVar("T")
STAMP = re.compile(r"^(\S+?)(?:\.(\d+))?Z? (.*)$", re.S)


@dataclass(frozen=True)
class Parameter:
    """One query parameter of the logs routes: its name and what it means (the OpenAPI document, the guide)."""

    name: str
    description: str
    type: str = "string"


PARAMETERS: Mapping[str, Parameter] = {
    p.name: p
    for p in (
        Parameter("pod", "One pod of the object (default: all of them, interleaved, each line marked with its pod)."),
        Parameter("container", "The container (default: each pod's first)."),
        Parameter(
            "tail",
            f"The last N lines of each pod, 1 to {TAIL_MAX} (default on the page: {DEFAULT_TAIL}; a download: the whole log).",
            "integer",
        ),
        Parameter("since", "Only lines newer than this: a duration such as 30s, 5m, 1h or 1h30m (at most 30 days)."),
        Parameter("previous", "The log of the previous, terminated container (1/true/on or 0/false/off).", "boolean"),
        Parameter("follow", "Keep reading as lines arrive (1/true/on or 0/false/off).", "boolean"),
        Parameter("wrap", "Wrap long lines (the page's display; 1/true/on or 0/false/off).", "boolean"),
    )
}
PAGE_TAKES = tuple(PARAMETERS)
STREAM_TAKES = tuple(name for name in PARAMETERS if name != "wrap")
DOWNLOAD_TAKES = tuple(name for name in PARAMETERS if name not in ("wrap", "follow"))


@dataclass(frozen=True)
class LogQuery:
    """What a logs request asks for (parsed and validated: :func:`parse`)."""

    pod: str = ""
    container: str = ""
    tail: int | None = None
    since: str = ""  # as given (shown back in the form)
    since_s: int | None = None
    previous: bool = False
    follow: bool = False
    wrap: bool = False

    def args(self, takes: Sequence[str]) -> dict[str, str]:
        """The query of this request for a route taking ``takes`` (the defaults left out)."""
        values = {
            "pod": self.pod,
            "container": self.container,
            "tail": "" if self.tail is None else str(self.tail),
            "since": self.since,
            "previous": "1" if self.previous else "",
            "follow": "1" if self.follow else "",
            "wrap": "1" if self.wrap else "",
        }
        return {name: value for name, value in values.items() if name in takes and value}

    def effective_tail(self) -> int | None:
        """The tail a page's stream reads: the one asked for, else :data:`DEFAULT_TAIL` unless ``since`` bounds it."""
        if self.tail is not None or self.since_s is not None:
            return self.tail
        return DEFAULT_TAIL


def _flag(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    raise ValueError("must be 1/true/on or 0/false/off")


def _tail(text: str) -> int:
    tail = int(text) if text.isdigit() else 0
    if not 1 <= tail <= TAIL_MAX:
        raise ValueError(f"must be a whole number from 1 to {TAIL_MAX}")
    return tail


def since_seconds(text: str) -> int:
    """Seconds of a duration such as ``90s``, ``5m``, ``1h30m`` or ``2d``; ValueError saying what is accepted."""
    match = SINCE.fullmatch(text.strip())
    if not text.strip() or match is None:
        raise ValueError("must be a duration such as 30s, 5m, 1h or 1h30m")
    seconds = sum(int(part) * unit for part, unit in zip(match.groups(), SINCE_UNITS, strict=True) if part)
    if not 0 < seconds <= SINCE_MAX_S:
        raise ValueError("must be more than 0s and at most 30 days")
    return seconds


def parse(args: MultiDict[str, str], takes: Sequence[str]) -> LogQuery:
    """The query of ``args`` for a route taking ``takes``; a 400 :class:`Problem` naming every parameter that is
    unknown, repeated or invalid."""
    errors: dict[str, list[str]] = {}
    for name in args:
        if name not in takes:
            errors[name] = [f"unknown query parameter: this route takes {', '.join(takes)}"]
        elif len(args.getlist(name)) > 1:
            errors[name] = ["given more than once"]
    text = {name: args.get(name, "").strip() for name in takes if name in args and name not in errors}

    def checked(name: str, parse_one: Callable[[str], T], default: T) -> T:
        if not text.get(name):
            return default
        try:
            return parse_one(text[name])
        except ValueError as e:
            errors[name] = [str(e)]
            return default

    query = LogQuery(
        pod=text.get("pod", ""),
        container=text.get("container", ""),
        tail=checked("tail", _tail, None),
        since=text.get("since", ""),
        since_s=checked("since", since_seconds, None),
        previous=checked("previous", _flag, False),
        follow=checked("follow", _flag, False),
        wrap=checked("wrap", _flag, False),
    )
    if errors:
        named = "; ".join(f"{name}: {messages[0]}" for name, messages in errors.items())
        raise Problem(400, f"invalid query parameter {named}", errors=errors)
    return query


@dataclass(frozen=True)
class Workload:
    """A kind whose objects have pods: the URL segment, its service's kind, and its controller's resource (named after
    the object, controlled by it)."""

    plural: str
    kind: str
    controller: Resource
    list_path: str  # its list page (the breadcrumbs)
    list_title: str

    def base(self, namespace: str, name: str) -> str:
        return f"/ui/{self.plural}/{namespace}/{name}"


WORKLOADS = (
    Workload("darkrooms", "Darkroom", DEPLOYMENTS, "/", "Darkrooms"),
    Workload("postgresqls", "Postgresql", STATEFULSETS, "/ui/postgresqls", "Databases"),
)


@dataclass(frozen=True)
class Pods:
    """An object's pods as the person may list them, and which of them a request reads."""

    obj: Mapping[str, Any]
    controller: FrozenDict | None
    why: str  # why there are no pods to show ("" when there are)
    all: tuple[FrozenDict, ...]
    chosen: tuple[FrozenDict, ...] = field(default=())
    more: int = 0  # pods left out over PODS_MAX

    @property
    def names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.all]

    @property
    def containers(self) -> list[str]:
        """The containers of the chosen pods, in their order (first seen first)."""
        names: list[str] = []
        for pod in self.chosen or self.all:
            for container in (pod.get("spec") or {}).get("containers") or ():
                if container.get("name") and container["name"] not in names:
                    names.append(container["name"])
        return names


def find_pods(service: KindService, workload: Workload, namespace: str, name: str) -> Pods:
    """The object (404 when the person cannot see it), its controller and the pods its selector selects, listed as the
    person (a refusal is raised)."""
    obj = service.fetch(namespace, name)
    client = service.client
    controller, why = darkroompages.child(client, workload.controller, namespace, name, str(obj["metadata"]["uid"]))
    if controller is None:
        return Pods(obj, None, f"its {workload.controller.kind} is {why}", ())
    selector = str(labelselectors.from_dict((controller.get("spec") or {}).get("selector") or {}))
    if not selector:  # an empty selector would select every pod of the namespace: none of them is known to be its own
        return Pods(obj, controller, f"its {workload.controller.kind} selects no pods", ())
    pods = client.list(PODS, namespace=namespace, label_selector=selector)
    live = tuple(p for p in pods if not p["metadata"].get("deletionTimestamp"))
    return Pods(obj, controller, "" if live else f"its {workload.controller.kind} has no pods yet", live)


def choose(pods: Pods, query: LogQuery) -> Pods:
    """The pods ``query`` reads (one, or all up to :data:`PODS_MAX`), checking its pod and container (400 naming them)."""
    if query.pod:
        chosen = tuple(p for p in pods.all if p["metadata"]["name"] == query.pod)
        if not chosen:
            known = ", ".join(pods.names) or "none"
            raise Problem(
                400, f"invalid query parameter pod: no such pod of this object (its pods: {known})", errors={"pod": ["no such pod"]}
            )
        picked = replace(pods, chosen=chosen)
    else:
        picked = replace(pods, chosen=pods.all[:PODS_MAX], more=max(0, len(pods.all) - PODS_MAX))
    if query.container and picked.chosen and query.container not in picked.containers:
        known = ", ".join(picked.containers)
        raise Problem(
            400,
            f"invalid query parameter container: no such container (the pods have {known})",
            errors={"container": ["no such container"]},
        )
    return picked


def require_logs(client: ActingClient, namespace: str, pods: Pods) -> None:
    """A refusal (403 naming ``get`` ``pods/log`` and the namespace) unless the person may read each chosen pod's log."""
    for pod in pods.chosen:
        client.require("get", PODS, namespace=namespace, name=pod["metadata"]["name"], subresource="log")


def container_of(pod: Mapping[str, Any], query: LogQuery) -> str | None:
    """The container a pod's log is read from: the one asked for, else the pod's first."""
    if query.container:
        return query.container
    containers = (pod.get("spec") or {}).get("containers") or ()
    return str(containers[0]["name"]) if containers else None


def timestamp_key(line: str) -> tuple[str, str, str]:
    """A timestamped line (``<RFC 3339> <text>``) as (seconds, nanoseconds, text): the fraction padded, so lines of
    several pods order by time whatever the number of digits their stamps have."""
    match = STAMP.match(line)
    if match is None:
        return ("", "", line)
    return (match.group(1), (match.group(2) or "").ljust(9, "0"), match.group(3))


def merged(logs: Sequence[tuple[str, str]]) -> str:
    """The ``(pod, timestamped log text)`` pairs as one text: ordered by time (stable: a pod's lines keep their order),
    each line ``[pod] text``."""
    keyed = [(timestamp_key(line), pod, line) for pod, text in logs for line in text.splitlines()]
    keyed.sort(key=lambda entry: entry[0][:2])
    return "".join(f"[{pod}] {key[2]}\n" for key, pod, _ in keyed)


def _operation(summary: str, description: str, takes: Sequence[str], responses: Mapping[str, Any]) -> str:
    """A view's docstring: summary, then its OpenAPI operation (``backend.api.openapi`` and the parameter check read it)."""
    parameters = [
        {
            "name": name,
            "in": "query",
            "required": False,
            "schema": {"type": PARAMETERS[name].type},
            "description": PARAMETERS[name].description,
        }
        for name in takes
    ]
    operation = {
        "get": {
            "tags": ["Dashboard (HTML)"],
            "summary": summary,
            "description": description,
            "parameters": parameters,
            "responses": dict(responses),
        }
    }
    return f"{summary}\n---\n{yaml.safe_dump(operation, sort_keys=False)}"


def _problem(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}


class LogPages:
    """The logs views of one app (see the module docstring)."""

    def __init__(self, services: Services, streams: Streams, limits: StreamLimits) -> None:
        self.services = services
        self.streams = streams
        self.limits = limits
        self.open = OpenLogStreams()
        streams.broadcaster.on_close(self.open.close_all)  # a server shutdown ends them with the /watch streams

    def _found(self, workload: Workload, namespace: str, name: str, query: LogQuery) -> tuple[ActingClient, Pods]:
        service = self.services[workload.kind]
        pods = choose(find_pods(service, workload, namespace, name), query)
        require_logs(service.client, namespace, pods)
        return service.client, pods

    def page(self, workload: Workload, namespace: str, name: str) -> Response:
        query = parse(request.args, PAGE_TAKES)
        _, pods = self._found(workload, namespace, name, query)
        base = workload.base(namespace, name)
        stream_query = replace(query, tail=query.effective_tail())
        context = {
            "workload": workload,
            "namespace": namespace,
            "name": name,
            "base_path": base,
            "query": query,
            "tail_shown": stream_query.tail,
            "pods": pods,
            "stream_url": f"{base}/logs/stream?" + urlencode(stream_query.args(STREAM_TAKES)) if pods.chosen else "",
            "download_url": f"{base}/logs/download" + _query(query.args(DOWNLOAD_TAKES)),
            "tail_max": TAIL_MAX,
            "default_tail": DEFAULT_TAIL,
            "pods_max": PODS_MAX,
        }
        return rendering.page("pod_logs.html", context)

    def stream(self, workload: Workload, namespace: str, name: str) -> Response:
        query = parse(request.args, STREAM_TAKES)
        client, pods = self._found(workload, namespace, name, query)
        settings = self.streams.settings
        if self.open.closed:
            raise Problem(503, "the server is shutting down; try again", headers={"Retry-After": str(settings.stream_retry_after_s)})
        try:
            lease = self.limits.acquire(request.remote_addr or "-")
        except LimitReached as e:
            if self.streams.refused is not None:
                self.streams.refused.labels(f"logs-{e.cap}").inc()
            message = str(e).replace("open streams", "open log streams")
            raise Problem(503, message, headers={"Retry-After": str(settings.stream_retry_after_s)}) from e
        buffer = LineBuffer()
        readers = [
            PodReader(
                pod["metadata"]["name"],
                _opener(client, namespace, pod["metadata"]["name"], container_of(pod, query), query),
                buffer,
            )
            for pod in pods.chosen
        ]
        notes = [pods.why] if not readers and pods.why else []
        if pods.more:
            notes.append(f"showing the logs of {len(readers)} of {len(pods.all)} pods (choose a pod to read another)")
        marked = not query.pod
        log_stream = LogStream(readers, buffer, marked=marked, heartbeat_s=settings.sse_heartbeat_s, notes=notes)
        self.open.add(log_stream)
        return pushed_response(log_stream.start(), lease)

    def download(self, workload: Workload, namespace: str, name: str) -> Response:
        query = parse(request.args, DOWNLOAD_TAKES)
        client, pods = self._found(workload, namespace, name, query)
        several = len(pods.chosen) > 1
        budget = max(1, DOWNLOAD_MAX_BYTES // max(1, len(pods.chosen)))
        logs: list[tuple[str, str]] = []
        for pod in pods.chosen:
            pod_name = pod["metadata"]["name"]
            response = client.pod_log(
                namespace,
                pod_name,
                container=container_of(pod, query),
                tail_lines=query.tail,
                since_seconds=query.since_s,
                previous=query.previous,
                timestamps=several,
                limit_bytes=budget,
            )
            try:
                logs.append((pod_name, response.read().decode("utf-8", "replace")))
            finally:
                response.release_conn()
        text = merged(logs) if several else "".join(text for _, text in logs)
        filename = f"{name}-{query.pod or 'all-pods'}{'-previous' if query.previous else ''}.log"
        return Response(
            text,
            mimetype="text/plain",
            headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
        )


def _query(args: Mapping[str, str]) -> str:
    return "?" + urlencode(args) if args else ""


def _opener(client: ActingClient, namespace: str, pod: str, container: str | None, query: LogQuery) -> Any:
    def open_log() -> Any:
        return client.pod_log(
            namespace,
            pod,
            container=container,
            follow=query.follow,
            tail_lines=query.tail,
            since_seconds=query.since_s,
            previous=query.previous,
        )

    return open_log


def install(blueprint: Blueprint, services: Services, *, streams: Streams) -> None:
    """Add the logs page, stream and download of every workload of :data:`WORKLOADS`, with the app's log stream caps."""
    settings = services.settings
    limits = StreamLimits(max_total=settings.log_stream_max, max_per_client=settings.stream_max_per_client)
    pages = LogPages(services, streams, limits)
    html = {"content": {"text/html": {"schema": {"type": "string"}}}}

    def either(description: str) -> dict[str, Any]:  # the error page for browsers, problem+json for other clients
        return {"description": description, "content": {**html["content"], **_problem(description)["content"]}}

    page_responses = {
        "200": {"description": "The logs page.", **html},
        "400": either("A query parameter that is unknown or invalid (named)."),
        "403": either("The person may not list the pods or get their pods/log (named)."),
        "404": either("No such object."),
    }
    stream_responses = {
        "200": {
            "description": "Server-Sent Events: ``lines`` (HTML fragments, one per data line), ``done`` once every log ended.",
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/ServerSentEvent"}}},
        },
        "400": _problem("A query parameter that is unknown or invalid (named)."),
        "403": _problem("The person may not list the pods or get their pods/log."),
        "404": _problem("No such object."),
        "503": _problem("Too many open log streams; try again after Retry-After seconds."),
    }
    download_responses = {
        "200": {"description": "The log as text (an attachment).", "content": {"text/plain": {"schema": {"type": "string"}}}},
        "400": _problem("A query parameter that is unknown or invalid (named), or the kubelet's refusal (a previous container not found)."),
        "403": _problem("The person may not list the pods or get their pods/log."),
        "404": _problem("No such object."),
    }
    for workload in WORKLOADS:
        base = f"/ui/{workload.plural}/<namespace>/<name>/logs"
        singular = workload.kind.lower()

        def page(namespace: str, name: str, workload: Workload = workload) -> Response:
            return pages.page(workload, namespace, name)

        def stream(namespace: str, name: str, workload: Workload = workload) -> Response:
            return pages.stream(workload, namespace, name)

        def download(namespace: str, name: str, workload: Workload = workload) -> Response:
            return pages.download(workload, namespace, name)

        page.__doc__ = _operation(f"{workload.kind} pod logs page", "The pods' logs, live.", PAGE_TAKES, page_responses)
        stream.__doc__ = _operation(
            f"{workload.kind} pod logs stream",
            "The pods' log lines as Server-Sent Events (HTML-escaped). Capped apart from /watch (LOG_STREAM_MAX).",
            STREAM_TAKES,
            stream_responses,
        )
        download.__doc__ = _operation(
            f"{workload.kind} pod logs download", "The pods' logs as a text file.", DOWNLOAD_TAKES, download_responses
        )
        for view, suffix, endpoint in ((page, "", "logs"), (stream, "/stream", "logs_stream"), (download, "/download", "logs_download")):
            view.__name__ = view.__qualname__ = f"{singular}_{endpoint}"
            blueprint.add_url_rule(base + suffix, f"{singular}_{endpoint}", view, methods=["GET"])
