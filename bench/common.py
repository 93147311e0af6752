"""Helpers shared by the benchmark scripts in bench/ (api, cache, reconcile, ui) and devcluster/bench/apiserver.py.

Owns what every script needs around the thing it measures: a free 127.0.0.1 port, a devcluster
subprocess (start, wait for ``/readyz``, stop) with the product's CRDs installed, a minimal
keep-alive raw-socket HTTP/1.1 client (``Conn``; plain HTTP for devcluster, TLS with a bearer token
for the real control plane, both described by an ``Endpoint``), polling waits, per-process CPU
time, percentiles and the machine part of a report's header line. The real control plane itself
(realcluster) and the audit logs of both servers are in ``servers.py``. The scripts run as ``python bench/<name>.py``, so
``bench/`` is on ``sys.path`` and they import this as ``from common import ...``. Never imported by
the product or the tests.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


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


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (from /proc; 0 where unavailable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


@functools.cache
def tls_context(ca_file: str) -> ssl.SSLContext:
    """A client context trusting only ``ca_file``, HTTP/1.1 by ALPN (one per process and CA file)."""
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["http/1.1"])
    return context


@dataclass(frozen=True)
class Endpoint:
    """Where an API server listens and how to reach it: plain HTTP (devcluster), or TLS verified
    against ``ca_file`` with a bearer ``token`` (the real control plane). Picklable: worker
    processes build their own TLS context from the file."""

    port: int
    ca_file: str = ""
    token: str = ""
    host: str = HOST

    def connect(self, timeout_s: float) -> socket.socket:
        """A connected socket (TCP_NODELAY), TLS-wrapped (handshake done) when ``ca_file`` is set."""
        sock = socket.create_connection((self.host, self.port), timeout=timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self.ca_file:
            return sock
        try:
            return tls_context(self.ca_file).wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise

    def headers(self, user_agent: str) -> bytes:
        """The request headers every request carries (Host, User-Agent, Accept, Authorization)."""
        auth = f"Authorization: Bearer {self.token}\r\n" if self.token else ""
        return f"Host: {self.host}:{self.port}\r\nUser-Agent: {user_agent}\r\nAccept: application/json\r\n{auth}".encode()


def as_endpoint(target: int | Endpoint) -> Endpoint:
    """A bare port means plain HTTP on 127.0.0.1 (devcluster, gunicorn)."""
    return target if isinstance(target, Endpoint) else Endpoint(target)


class Conn:
    """A minimal keep-alive HTTP/1.1 client on a raw socket: far cheaper per request than http.client
    (which parses headers with the email package), so load generators stay light on 2 cores.
    Handles what devcluster, gunicorn and kube-apiserver send here: responses with a Content-Length,
    or chunked (kube-apiserver, for bodies of more than ~2 KiB). ``target`` is a port (plain HTTP)
    or an :class:`Endpoint` (TLS and a bearer token for the real control plane).
    Subclasses set ``USER_AGENT`` (the audit log tells the scripts apart by it) and ``RECV_BYTES``."""

    USER_AGENT = "bench/1"
    RECV_BYTES = 1 << 18

    def __init__(self, target: int | Endpoint, timeout_s: float = 60.0) -> None:
        endpoint = as_endpoint(target)
        self.sock = endpoint.connect(timeout_s)
        self.prefix = endpoint.headers(self.USER_AGENT)
        self.buf = bytearray()

    def _fill(self) -> None:
        chunk = self.sock.recv(self.RECV_BYTES)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = JSON) -> tuple[int, bytes]:
        head = b"%s %s HTTP/1.1\r\n" % (method.encode(), path.encode()) + self.prefix
        if body is not None:
            head += b"Content-Type: %s\r\nContent-Length: %d\r\n" % (content_type.encode(), len(body))
        self.sock.sendall(head + b"\r\n" + (body or b""))
        buf, recv, size = self.buf, self.sock.recv, self.RECV_BYTES
        end = buf.find(b"\r\n\r\n")
        while end < 0:
            chunk = recv(size)
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk
            end = buf.find(b"\r\n\r\n")
        headers = bytes(buf[:end]).lower()
        at = headers.find(b"\r\ncontent-length:")
        if at < 0:
            return int(headers[9:12]), self._chunked(headers, end + 4)
        eol = headers.find(b"\r\n", at + 2)
        total = end + 4 + int(headers[at + 17 : eol if eol > 0 else len(headers)])
        while len(buf) < total:
            chunk = recv(size)
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk
        data = bytes(buf[end + 4 : total])
        del buf[:total]
        return int(headers[9:12]), data

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
        """Send ``body`` as JSON; the parsed JSON answer, RuntimeError unless the status is ``status``."""
        code, data = self.request(method, path, None if body is None else json.dumps(body).encode())
        if code != status:
            raise RuntimeError(f"{method} {path}: expected {status}, got {code}: {data[:500]!r}")
        parsed: dict[str, Any] = json.loads(data)
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


def start_devcluster(
    *, port: int, data_dir: Path, log_path: Path, extra_args: Sequence[str] = (), kubeconfig: Path | None = None, timeout_s: float = 30.0
) -> subprocess.Popen[bytes]:
    """``python -m devcluster serve`` on ``port`` (log level WARNING, output to ``log_path``), once it answers
    ``/readyz`` (and ``kubeconfig``, if given, exists). Stopped again if it does not become ready."""
    cmd = [sys.executable, "-m", "devcluster", "serve", "--host", HOST, "--port", str(port), "--data-dir", str(data_dir)]
    cmd += [*extra_args, "--log-level", "WARNING"]
    with log_path.open("ab") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)

    def ready() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"devcluster exited with {proc.returncode}: {log_path.read_text(errors='replace')[-3000:]}")
        try:
            conn = Conn(port, timeout_s=1.0)
            try:
                return conn.request("GET", "/readyz")[0] == 200 and (kubeconfig is None or kubeconfig.exists())
            finally:
                conn.close()
        except OSError:
            return False

    try:
        wait_until(ready, timeout_s, "devcluster /readyz")
    except BaseException:
        stop_process(proc)
        raise
    return proc


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
