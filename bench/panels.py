"""The product as production serves it, in either identity mode, for ``bench/identity.py``; and the review counters.

:class:`Panel` is ``gunicorn -c backend/server/gunicorn_conf.py backend.server.wsgi:app`` (one worker of the
configuration's class: the event loop front, Flask in request threads, ``/watch`` streams on the loop) with the
API's ServiceAccount kubeconfig, in the login mode (every request carries a person's bearer token, reviewed
with a TokenReview; reads of the shared cache authorized with SubjectAccessReviews) or in the local mode (the
one-person mode: no credentials, no reviews, the API's own identity — the shared identity of earlier releases).
Started and stopped by PID, on a free 127.0.0.1 port; its CPU is the gunicorn process tree's.

:class:`Reviews` is what was asked of kube-apiserver and what the caches answered, from two sides: the API's own
``darkroom_api_reviews_total{review, answer}`` (``/metrics``) and kube-apiserver's ``apiserver_request_total``
for ``tokenreviews`` and ``subjectaccessreviews`` (POST, every user: the API is the only one that sends them here).
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from api import tree_cpu_seconds, wait_http
from common import HOST, ROOT, Conn, Endpoint, free_port, pythonpath, stop_process
from people import SYSTEM

SAMPLE = re.compile(r"(\w+)(?:\{(.*)\})? (\S+)")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


class PanelConn(Conn):
    USER_AGENT = "identity-bench/1"
    RECV_BYTES = 1 << 20


class Panel:
    """One gunicorn server of the product in ``mode`` (``login`` or ``local``)."""

    def __init__(self, mode: str, *, kubeconfig: Path, work: Path, env: dict[str, str] | None = None) -> None:
        self.mode = mode
        self.port = free_port()
        self.log_path = work / f"gunicorn-{mode}-{self.port}.log"
        environ = {
            **os.environ,
            "PYTHONPATH": pythonpath(ROOT, ROOT / "bench"),
            "DARKROOM_API_KUBECONFIG": str(kubeconfig),
            "DARKROOM_API_LOG_LEVEL": "WARNING",
            "DARKROOM_API_AUTHENTICATION": mode,
            "DARKROOM_API_SECRET_KEY": secrets.token_hex(32),
            "DARKROOM_API_SESSION_NAMESPACE": SYSTEM,
            "PORT": str(self.port),
            **(env or {}),
        }
        cmd = [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "backend" / "server" / "gunicorn_conf.py"), "backend.server.wsgi:app"]
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=environ, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_http(f"http://{HOST}:{self.port}/readyz", proc=self.proc, log_path=self.log_path, timeout_s=120)
        except BaseException:
            self.stop()
            raise

    def endpoint(self, token: str = "") -> Endpoint:
        return Endpoint(self.port, token=token)

    def get(self, path: str, token: str = "") -> tuple[int, bytes]:
        conn = PanelConn(self.endpoint(token))
        try:
            return conn.request("GET", path)
        finally:
            conn.close()

    def cpu_seconds(self) -> float:
        return tree_cpu_seconds(self.proc.pid)

    def worker_pid(self) -> int:
        """The (one) gunicorn worker: the master's child."""
        return int(Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()[0])

    def profile(self, out: Path) -> subprocess.Popen[bytes]:
        """``py-spy record`` (the ``bench`` extra) of the worker into ``out`` (collapsed stacks, idle threads too) until
        stopped with SIGINT (:func:`common.stop_process`)."""
        py_spy = Path(sys.executable).parent / "py-spy"
        cmd = [str(py_spy), "record", "--pid", str(self.worker_pid()), "--rate", "100", "--format", "raw", "--threads", "--idle"]
        with out.with_suffix(".log").open("ab") as log_file:
            return subprocess.Popen([*cmd, "--output", str(out)], stdout=log_file, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        stop_process(self.proc)


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample of metric ``name`` in a Prometheus text exposition: (labels, value)."""
    found = []
    for line in text.splitlines():
        match = SAMPLE.fullmatch(line)
        if match is not None and match[1] == name:
            found.append((dict(LABEL.findall(match[2] or "")), float(match[3])))
    return found


@dataclass(frozen=True)
class Reviews:
    """Review counts at one moment; subtract two for a window."""

    token_sent: float = 0.0
    token_cached: float = 0.0
    access_sent: float = 0.0
    access_cached: float = 0.0
    kube_tokenreviews: float = 0.0  # as kube-apiserver counted them
    kube_subjectaccessreviews: float = 0.0

    def __sub__(self, other: Reviews) -> Reviews:
        return Reviews(*(a - b for a, b in zip(self.as_tuple(), other.as_tuple(), strict=True)))

    def __add__(self, other: Reviews) -> Reviews:
        return Reviews(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple(), strict=True)))

    def as_tuple(self) -> tuple[float, ...]:
        return (
            self.token_sent,
            self.token_cached,
            self.access_sent,
            self.access_cached,
            self.kube_tokenreviews,
            self.kube_subjectaccessreviews,
        )


def reviews_now(panel: Panel, admin: Endpoint, *, token: str) -> Reviews:
    """The panel's review counters (``/metrics``, asked with ``token``: one more cached TokenReview each time in the login
    mode) and kube-apiserver's count of TokenReviews and SubjectAccessReviews created."""
    code, body = panel.get("/metrics", token)
    if code != 200:
        raise RuntimeError(f"the panel's /metrics answered {code}: {body[:300]!r}")
    ours = {(labels["review"], labels["answer"]): value for labels, value in samples(body.decode(), "darkroom_api_reviews_total")}
    if not ours:
        raise RuntimeError("the panel's /metrics has no darkroom_api_reviews_total (a product from before the review counters?)")
    conn = PanelConn(admin)
    try:
        code, body = conn.request("GET", "/metrics")
    finally:
        conn.close()
    if code != 200:
        raise RuntimeError(f"kube-apiserver's /metrics answered {code}")
    kube = {"tokenreviews": 0.0, "subjectaccessreviews": 0.0}
    for labels, value in samples(body.decode(), "apiserver_request_total"):
        if labels.get("resource") in kube and labels.get("verb") == "POST":
            kube[labels["resource"]] += value
    return Reviews(
        token_sent=ours.get(("tokenreview", "sent"), 0.0),
        token_cached=ours.get(("tokenreview", "cached"), 0.0),
        access_sent=ours.get(("subjectaccessreview", "sent"), 0.0),
        access_cached=ours.get(("subjectaccessreview", "cached"), 0.0),
        kube_tokenreviews=kube["tokenreviews"],
        kube_subjectaccessreviews=kube["subjectaccessreviews"],
    )
