"""Helpers shared by the benchmark scripts in bench/ (api, cache, reconcile, ui) and devcluster/bench/apiserver.py.

Owns what every script needs around the thing it measures: installing the product's CRDs, a minimal
keep-alive raw-socket HTTP/1.1 client (``Conn``; plain HTTP for devcluster, TLS with a bearer token
for the real control plane, both described by an ``Endpoint``), polling waits, stopping a process,
percentiles and the machine part of a report's header line. The scripts run as ``python bench/<name>.py``, so
``bench/`` is on ``sys.path`` and they import this as ``from common import ...``; this puts the repository root on
``sys.path`` too, for what the benchmarks share with the tests: the API server processes (``tests/clusters.py``, with
``Endpoint``, ``free_port``, ``cpu_seconds``, re-exported here), their audit logs (``tests/auditlog.py``) and SSE
frames (``tests/sseframes.py``). Which servers a script runs, and where, is ``servers.py``. Never imported by the
product or the tests.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

sys.path.append(str(Path(__file__).resolve().parent.parent))  # the repository root: the tests' cluster processes

from tests.clusters import HOST, ROOT, Endpoint, cpu_seconds, free_port

__all__ = ["HOST", "ROOT", "Endpoint", "cpu_seconds", "free_port"]  # used from here by the scripts; defined once there
JSON = "application/json"
CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def package_roots(root: Path) -> list[Path]:
    """Where the checkout ``root`` keeps our packages, by import name: the root (backend, aggregator), operator/
    (darkroom_operator), lib/ (cluster, kinds, envsettings) and lib/shared (labelselectors, mergepatch). A benchmark
    that runs another checkout's code puts these on ``PYTHONPATH``, which comes before this venv's editable install."""
    return [root, root / "operator", root / "lib", root / "lib" / "shared"]


def pythonpath(root: Path, *more: Path) -> str:
    """A ``PYTHONPATH`` value: :func:`package_roots` of ``root``, then ``more``."""
    return os.pathsep.join(str(p) for p in [*package_roots(root), *more])


def export_ref(ref: str, work: Path) -> Path:
    """``git archive <ref>`` of this repository unpacked into ``work/<ref>`` (a checkout to run "before" code from)."""
    target = work / ref.replace("/", "_")
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def add_baseline_arguments(parser: Any, what: str) -> None:
    """``--baseline-ref`` (whose ``what`` is "before", default main) and ``--order`` (default before,after)."""
    parser.add_argument("--baseline-ref", default="main", help=f"the git ref whose {what} is 'before' (default main)")
    parser.add_argument("--order", default="before,after", help=f"which {what}s, in order (default before,after)")


def checkouts(opts: Any, work: Path) -> dict[str, Path]:
    """``before``: ``opts.baseline_ref`` exported into ``work`` (:func:`export_ref`); ``after``: this checkout."""
    return {"before": export_ref(opts.baseline_ref, work), "after": ROOT}


def wait_until(predicate: Callable[[], Any], timeout_s: float, what: str, interval_s: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy (returned); TimeoutError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(interval_s)


def exit_on_sigterm() -> None:
    """Make SIGTERM exit through ``finally`` blocks (SystemExit), so the servers and operators a script
    started are stopped and its temp dirs removed when it is terminated, as on Ctrl-C."""

    def terminate(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)


def stop_process(proc: subprocess.Popen[bytes], timeout_s: float = 20.0, sig: int = signal.SIGTERM) -> None:
    """Signal our own child (by PID), SIGKILL it if it has not exited after ``timeout_s``."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def as_endpoint(target: int | Endpoint) -> Endpoint:
    """A bare port means plain HTTP on 127.0.0.1 (devcluster, gunicorn)."""
    return target if isinstance(target, Endpoint) else Endpoint(target)


class Conn:
    """A minimal keep-alive HTTP/1.1 client on a raw socket: far cheaper per request than http.client
    (which parses headers with the email package), so load generators stay light on 2 cores.
    Handles what devcluster, gunicorn and kube-apiserver send here: responses with a Content-Length,
    or chunked (kube-apiserver, for bodies of more than ~2 KiB). ``target`` is a port (plain HTTP)
    or an :class:`Endpoint` (TLS and a bearer token for the real control plane).
    Subclasses set ``USER_AGENT`` (the audit log tells the scripts apart by it) and ``RECV_BYTES``.

    A server may close a keep-alive connection that sat idle (kube-apiserver does, while a benchmark waits for a
    run of minutes): a request that finds its connection closed before any byte of the answer came is sent once
    more on a new one, as HTTP clients do — the server closed it without reading the request."""

    USER_AGENT = "bench/1"
    RECV_BYTES = 1 << 18

    def __init__(self, target: int | Endpoint, timeout_s: float = 60.0) -> None:
        self.endpoint = as_endpoint(target)
        self.timeout_s = timeout_s
        self.sock = self.endpoint.connect(timeout_s)
        self.prefix = self.endpoint.headers(self.USER_AGENT)
        self.buf = bytearray()

    def _send(self, message: bytes) -> None:
        """Send ``message`` and wait for the answer's first bytes, on a new connection when the idle one was closed."""
        try:
            self.sock.sendall(message)
            if not self.buf:
                self._fill()
            return
        except OSError:  # ConnectionError included: reset, broken pipe, or closed before answering
            if self.buf:
                raise
        self.sock.close()
        self.sock = self.endpoint.connect(self.timeout_s)
        self.sock.sendall(message)

    def _fill(self) -> None:
        chunk = self.sock.recv(self.RECV_BYTES)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = JSON) -> tuple[int, bytes]:
        head = b"%s %s HTTP/1.1\r\n" % (method.encode(), path.encode()) + self.prefix
        if body is not None:
            head += b"Content-Type: %s\r\nContent-Length: %d\r\n" % (content_type.encode(), len(body))
        self._send(head + b"\r\n" + (body or b""))
        buf, recv, size = self.buf, self.sock.recv, self.RECV_BYTES
        end = buf.find(b"\r\n\r\n")
        while end < 0:
            chunk = recv(size)
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk
            end = buf.find(b"\r\n\r\n")
        headers = bytes(buf[:end]).lower()
        status = int(headers[9:12])
        if status in (204, 304):  # never a body (RFC 9112, 6.3), and gunicorn sends no Content-Length with them
            del buf[: end + 4]
            return status, b""
        at = headers.find(b"\r\ncontent-length:")
        if at < 0:
            return status, self._chunked(headers, end + 4)
        eol = headers.find(b"\r\n", at + 2)
        total = end + 4 + int(headers[at + 17 : eol if eol > 0 else len(headers)])
        while len(buf) < total:
            chunk = recv(size)
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk
        data = bytes(buf[end + 4 : total])
        del buf[:total]
        return status, data

    def _chunked(self, headers: bytes, start: int) -> bytes:
        """The body of a ``Transfer-Encoding: chunked`` response whose headers end at ``start`` in the buffer."""
        if b"\r\ntransfer-encoding: chunked" not in headers:
            raise RuntimeError(f"response with neither Content-Length nor chunked encoding: {headers[:300]!r}")
        buf = self.buf
        del buf[:start]
        body = bytearray()
        while True:
            eol = buf.find(b"\r\n")
            while eol < 0:
                self._fill()
                eol = buf.find(b"\r\n")
            size = int(bytes(buf[:eol]).split(b";", 1)[0], 16)
            if size == 0:  # last chunk; no trailers are sent here, just the closing CRLF
                while len(buf) < eol + 4:
                    self._fill()
                del buf[: eol + 4]
                return bytes(body)
            while len(buf) < eol + 4 + size:
                self._fill()
            body += buf[eol + 2 : eol + 2 + size]
            del buf[: eol + 4 + size]

    def expect(self, status: int, method: str, path: str, body: Any = None) -> dict[str, Any]:
        """Send ``body`` as JSON; the parsed JSON answer ({} for an empty one), RuntimeError unless the status is ``status``."""
        code, data = self.request(method, path, None if body is None else json.dumps(body).encode())
        if code != status:
            raise RuntimeError(f"{method} {path}: expected {status}, got {code}: {data[:500]!r}")
        parsed: dict[str, Any] = json.loads(data) if data else {}
        return parsed

    def close(self) -> None:
        self.sock.close()


def join_processes(procs: Iterable[Any]) -> None:
    """Join worker processes (``multiprocessing``); SIGKILL (by PID, our own children) any still alive after 10 s."""
    for p in procs:
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join(5)


def merged_latencies(outs: Iterable[dict[str, Any]], key: str = "lat") -> list[float]:
    """The ascending union of the ``array("d")`` bytes workers sent back under ``key``."""
    latencies: list[float] = []
    for o in outs:
        a = array("d")
        a.frombytes(o[key])
        latencies.extend(a)
    latencies.sort()
    return latencies


def install_crds(conn: Conn, *, namespace: str, probe_path: str, timeout_s: float = 30.0) -> None:
    """Create the product's CRDs (crds/*.yaml) and ``namespace``; wait until ``probe_path`` (a CR list) answers 200."""
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        conn.expect(201, "POST", CRDS_PATH, yaml.safe_load(path.read_text()))
    conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    wait_until(lambda: conn.request("GET", probe_path)[0] == 200, timeout_s, "the CRDs to be served")


def ready_status(domains: list[str], *, message: str) -> dict[str, Any]:
    """A realistic Darkroom ``status`` (domains, one ready replica, observed generation 1, a Ready condition)."""
    return {
        "domains": domains,
        "readyReplicas": 1,
        "observedGeneration": 1,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "lastTransitionTime": "2025-01-01T00:00:00Z",
                "reason": "Available",
                "message": message,
            }
        ],
    }


def nearest_rank(ordered: list[float], q: float) -> float:
    """Nearest-rank ``q``-th percentile (0-100) of an ascending list (nan if empty)."""
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), math.ceil(q / 100.0 * len(ordered))))
    return ordered[rank - 1]


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``: the element at the rounded rank ``q * (n - 1)`` of the sorted values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def machine_summary() -> str:
    """``nproc=N (CPU model)``: the start of every report's machine line."""
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"nproc={nproc}{f' ({cpu})' if cpu else ''}"


def measured(argv: list[str], pythonpath: Iterable[Path]) -> dict[str, float]:
    """One run of a benchmark's measuring mode (``argv``: the script and its arguments) in a fresh process importing from
    ``pythonpath`` (a checkout's packages first); the last line it prints, a JSON object."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath)}
    out = subprocess.run([sys.executable, *argv], env=env, check=True, capture_output=True, text=True).stdout
    found: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return found


def print_medians(
    title: str,
    command: str,
    load_start: float,
    names: list[str],
    rows: Iterable[tuple[str, str, str]],
    results: dict[str, list[dict[str, float]]],
) -> None:
    """The report of a benchmark that compares checkouts: its title, the machine and load line, the command, then a
    table with a column per checkout (``names``) and a row per ``(key, label, format)`` giving the median of the runs."""
    import platform
    import statistics

    print(title)
    load = f"load average {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end"
    print(f"machine: {machine_summary()}, Python {platform.python_version()}; {load}")
    print(f"command: {command}")
    print()
    print("| " + " | ".join(["", *names]) + " |")
    print("|---|" + "---:|" * len(names))
    for key, label, form in rows:
        print(f"| {label} | " + " | ".join(form.format(statistics.median(r[key] for r in results[n])) for n in names) + " |")
