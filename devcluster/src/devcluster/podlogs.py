"""Simulated container logs: the text ``pods/log`` serves (:meth:`devcluster.serving.api.Api` streams it).

No container runs, so a container's log states what a real one would have been started with — image,
command, args and the *names* of its env variables (never their values, nothing read from a Secret) —
stamped with the container's start, then, while following, one line every :data:`FOLLOW_INTERVAL_S`.
The text and the errors are those of realcluster's simulated kubelet (``realcluster/kubelet.go``), so a
client reads the same on both: kubelet errors (``previous terminated container ... not found``, a container
still waiting) come back as kube-apiserver passes them on, 400 BadRequest with the kubelet's text.

:func:`log_request` validates the request as kube-apiserver's pod log REST does (pod, container, options);
:func:`select_lines` applies ``sinceSeconds``/``sinceTime``, ``tailLines``, ``timestamps``; the caller applies
``limitBytes`` and ``follow``.

**A log rate** (for tests and benchmarks of busy logs): a pod annotated :data:`RATE_ANNOTATION` (``"1000"``) has a
container that, after those startup lines, writes that many lines a second — ``simulated: line <i> of a container
writing <rate> lines/s on <node>`` — and the log is a function of time: line ``i`` (from 1) is stamped the container's
start plus ``i / rate`` seconds (cut to the microsecond), and is there once that time has come (a pod that ran 1 s at
1,000 lines/s has 1,000 of them). Nothing holds the lines: :class:`Rate` computes which indexes a request selects
(``sinceSeconds``/``sinceTime`` by their stamps, ``tailLines`` across the startup lines and these) and writes them
in chunks of at most :data:`RATE_CHUNK_LINES`; while following it writes the lines whose time came since its last
write, every :data:`RATE_TICK_S` at most (batched per write), instead of the every-3-s line. Only the last
:data:`RATE_RETAINED_LINES` of them are kept (older ones are gone, as a kubelet's rotated log files are). The value
must be decimal digits (a positive integer; no sign, no spaces): anything else, ``0`` included, is as if the
annotation were absent; above :data:`RATE_MAX` it counts as :data:`RATE_MAX`. realcluster's kubelet
(``realcluster/kubelet.go``) reads the same annotation the same way and writes the same text and stamps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from devcluster import errors

FOLLOW_INTERVAL_S = 3.0
RATE_ANNOTATION = "simulation.example.com/log-lines-per-second"  # on the pod (a pod template's annotations reach it)
RATE_MAX = 10_000  # lines a second: a higher value counts as this
RATE_RETAINED_LINES = 100_000  # rate lines a log keeps (older ones rotated away)
RATE_CHUNK_LINES = 5_000  # rate lines a write carries at most
RATE_TICK_S = 0.1  # while following at a rate: the shortest wait between two writes
_DIGITS = re.compile(r"[0-9]+")
_US = timedelta(microseconds=1)


@dataclass(frozen=True)
class LogOptions:
    """PodLogOptions as the kubelet reads them; ``None`` is unset."""

    container: str
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since: datetime | None = None
    stream: str = "All"


def follow_line(node: str) -> str:
    return f"simulated: no container runs on {node}"


def simulated_log(pod: dict[str, Any], container: dict[str, Any], node: str) -> list[str]:
    """The lines a container of ``pod`` on ``node`` wrote when it started (realcluster's simulatedLog)."""

    def json_list(values: list[str]) -> str:
        return json.dumps(values, ensure_ascii=False, separators=(",", ":")) if values else "(none)"

    command = json_list(container.get("command") or []) if container.get("command") else "(the image's entrypoint)"
    names = [str(e.get("name", "")) for e in container.get("env") or []]
    env = ", ".join(names) + " (names only, values are not shown)" if names else "(none)"
    lines = [
        f"simulated: no container runs on {node}; container {json.dumps(container.get('name', ''))} of pod "
        f"{json.dumps(pod['metadata']['name'])} would have been started with",
        f"image: {container.get('image', '')}",
        f"command: {command}",
        f"args: {json_list(container.get('args') or [])}",
        f"env: {env}",
    ]
    sources = []
    for source in container.get("envFrom") or []:
        if source.get("configMapRef"):
            text = f"configMap {source['configMapRef'].get('name', '')}"
        elif source.get("secretRef"):
            text = f"secret {source['secretRef'].get('name', '')}"
        else:
            continue
        sources.append(text + (f" (prefix {source['prefix']})" if source.get("prefix") else ""))
    if sources:
        lines.append(f"envFrom: {', '.join(sources)} (variables not shown)")
    return lines


def _parse_time(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def format_time(at: datetime) -> str:
    """The kubelet's timestamps: RFC 3339 with nine fraction digits."""
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond * 1000:09d}Z"


def _number(query: Mapping[str, str], name: str, *, minimum: int) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None
    if value < minimum:
        path = {"tailLines": "tailLines", "limitBytes": "limitBytes", "sinceSeconds": "sinceSeconds"}[name]
        detail = "must be greater than or equal to 0" if minimum == 0 else "must be greater than 0"
        raise errors.invalid("PodLogOptions", "", "", [errors.invalid_value(path, value, detail)])
    return value


def log_request(pod: dict[str, Any], query: Mapping[str, str], now: datetime) -> LogOptions:
    """The options of a pods/log request, refused as kube-apiserver refuses them (container, options)."""
    spec = pod.get("spec") or {}
    containers = spec.get("containers") or []
    name = query.get("container", "")
    if not name:
        if len(containers) != 1:
            names = " ".join(c.get("name", "") for c in containers)
            raise errors.bad_request(f"a container name must be specified for pod {pod['metadata']['name']}, choose one of: [{names}]")
        name = containers[0].get("name", "")
    all_names = [c.get("name") for key in ("containers", "initContainers", "ephemeralContainers") for c in spec.get(key) or []]
    if name not in all_names:
        raise errors.bad_request(f"container {name} is not valid for pod {pod['metadata']['name']}")
    truthy = {"true", "1"}
    tail = query.get("tailLines")
    since_seconds = _number(query, "sinceSeconds", minimum=1)
    since = now - timedelta(seconds=since_seconds) if since_seconds is not None else None
    if query.get("sinceTime"):
        try:
            since = datetime.fromisoformat(query["sinceTime"].replace("Z", "+00:00"))
        except ValueError:
            raise errors.bad_request(f'parsing time "{query["sinceTime"]}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
    stream = query.get("stream") or "All"
    if stream not in ("All", "Stdout", "Stderr"):
        raise errors.invalid("PodLogOptions", "", "", [errors.not_supported("stream", stream, ["All", "Stderr", "Stdout"])])
    return LogOptions(
        container=name,
        follow=query.get("follow", "").lower() in truthy,
        previous=query.get("previous", "").lower() in truthy,
        timestamps=query.get("timestamps", "").lower() in truthy,
        tail_lines=_number(query, "tailLines", minimum=0) if tail is not None else None,
        limit_bytes=_number(query, "limitBytes", minimum=1),
        since=since,
        stream=stream,
    )


def container_started(pod: dict[str, Any], name: str, *, previous: bool) -> datetime:
    """When the container's simulated process started, or the kubelet's error (400) for one without a log."""
    status = pod.get("status") or {}
    entries = [*(status.get("containerStatuses") or []), *(status.get("initContainerStatuses") or [])]
    found = next((s for s in entries if s.get("name") == name), None)
    pod_name = pod["metadata"]["name"]
    if found is None:
        raise errors.bad_request(f'container "{name}" in pod "{pod_name}" is waiting to start: ContainerCreating')
    if previous:
        raise errors.bad_request(f'previous terminated container "{name}" in pod "{pod_name}" not found')
    state = found.get("state") or {}
    for key in ("running", "terminated"):
        if state.get(key):
            return _parse_time(str(state[key].get("startedAt")))
    reason = (state.get("waiting") or {}).get("reason", "")
    raise errors.bad_request(f'container "{name}" in pod "{pod_name}" is waiting to start: {reason}')


def select_lines(lines: list[tuple[datetime, str]], options: LogOptions) -> str:
    """The text of the lines ``since`` and ``tailLines`` keep, stamped when ``timestamps``."""
    kept = [(at, text) for at, text in lines if options.since is None or at >= options.since]
    if options.tail_lines is not None:
        kept = kept[len(kept) - options.tail_lines :] if options.tail_lines else []
    if options.stream == "Stderr":  # the simulated lines are all on stdout
        kept = []
    return "".join(f"{format_time(at)} {text}\n" if options.timestamps else f"{text}\n" for at, text in kept)


def log_rate(pod: Mapping[str, Any]) -> int | None:
    """The lines a second :data:`RATE_ANNOTATION` asks of ``pod``'s containers, or None (absent, or not a positive
    integer in decimal digits); at most :data:`RATE_MAX`."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(RATE_ANNOTATION)
    if not isinstance(raw, str) or not _DIGITS.fullmatch(raw):
        return None
    value = int(raw)
    return min(value, RATE_MAX) if value > 0 else None


def _micros(delta: timedelta) -> int:
    return delta // _US


@dataclass(frozen=True)
class Rate:
    """The rate lines of a container started at ``started`` writing ``per_second`` lines a second on ``node``: line
    ``i`` (from 1) is stamped ``started + i / per_second`` s, cut to the microsecond (realcluster's ``rateLog``)."""

    per_second: int
    started: datetime
    node: str

    def stamp(self, index: int) -> datetime:
        return self.started + timedelta(microseconds=index * 1_000_000 // self.per_second)

    def text(self, index: int) -> str:
        return f"simulated: line {index} of a container writing {self.per_second} lines/s on {self.node}"

    def written(self, now: datetime) -> int:
        """How many lines were written by ``now`` (the index of the last one; 0: none yet)."""
        elapsed = _micros(now - self.started)
        return max(0, ((elapsed + 1) * self.per_second - 1) // 1_000_000) if elapsed >= 0 else 0

    def first_since(self, since: datetime) -> int:
        """The first index stamped at or after ``since`` (may be past the lines written yet)."""
        wait = -(-(since - self.started) // _US)  # whole microseconds, rounded up
        return max(1, -(-wait * self.per_second // 1_000_000))

    def chunks(self, first: int, last: int, *, timestamps: bool) -> Iterator[str]:
        """The lines ``first`` to ``last`` (inclusive) as text, :data:`RATE_CHUNK_LINES` lines a chunk at most."""
        for start in range(first, last + 1, RATE_CHUNK_LINES):
            end = min(last, start + RATE_CHUNK_LINES - 1)
            if timestamps:
                yield "".join(f"{format_time(self.stamp(i))} {self.text(i)}\n" for i in range(start, end + 1))
            else:
                yield "".join(f"{self.text(i)}\n" for i in range(start, end + 1))


def select_rate(
    lines: list[tuple[datetime, str]], rate: Rate, options: LogOptions, now: datetime
) -> tuple[list[tuple[datetime, str]], int, int]:
    """What a request reads of a log at ``rate``: the startup ``lines`` it keeps, and the first and last index of the
    rate lines it reads (first > last: none) — ``since`` by their stamps, ``tailLines`` across both, the retained ones
    only."""
    last = rate.written(now)
    first = max(1, last - RATE_RETAINED_LINES + 1)
    if options.since is not None:
        first = max(first, rate.first_since(options.since))
        lines = [(at, text) for at, text in lines if at >= options.since]
    if options.stream == "Stderr":  # the simulated lines are all on stdout
        return [], last + 1, last
    if options.tail_lines is not None:
        count = max(0, last - first + 1)
        if options.tail_lines <= count:
            first, lines = last - options.tail_lines + 1, []
        else:
            keep = options.tail_lines - count
            lines = lines[len(lines) - keep :] if keep < len(lines) else lines
    return lines, first, last
