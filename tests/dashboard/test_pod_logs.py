"""A Darkroom's pod logs, without a browser, on both clusters (their simulated kubelets write the log: what the
container would have been started with — image, command, args, env names — then, while following, one line every few
seconds: devcluster/tests/conformance/test_pods.py).

Behaviours: the logs page lists the Darkroom's pods (its Deployment's selector) and names its stream and download;
the download is the simulated text with the pod's image (all pods: each line marked ``[pod]``; ``tail=1``: one line),
an attachment; the stream carries the lines HTML-escaped (a container argument holding markup comes back as text),
then ``done``; a followed stream delivers a line written after it opened, and closing it ends its reader threads;
bad or unknown parameters are a 400 naming them; the log stream cap answers 503 with Retry-After (and a closed stream
gives its place back); on the real control plane, a person who may list pods but not get ``pods/log`` gets the 403
page naming it. Pods writing 1,000 lines a second (the simulation's rate annotation) read by a slow client: the
stream's buffer stays bounded (no frame carries more than its size; what did not fit is said ``N lines skipped``),
and other pages answer while it runs.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from backend.dashboard.logstreams import BUFFER_LINES, THREAD_PREFIX
from tests.dashboard.clients import Client, Deleter
from tests.dashboard.test_live_details import controlled_by, make_darkroom
from tests.support import wait_for

MARKUP = "<img src=x onerror=alert(1)>"
IMAGE = "nginx:1.27"
RATE_ANNOTATION = "simulation.example.com/log-lines-per-second"  # both clusters' simulated kubelets: lines a second


def darkroom_with_pods(
    custom: Any, api_client: Any, namespace: str, name: str, replicas: int = 2, *, lines_per_second: int | None = None
) -> list[str]:
    """A Darkroom and the Deployment it controls (as the reconciler would make it: labelled, its controller reference),
    whose container's args hold markup (and whose pods write ``lines_per_second``); the names of its pods once they run."""
    from kubernetes import client

    owner = make_darkroom(custom, namespace, name)
    labels = {"app": name}
    container = {"name": "web", "image": IMAGE, "args": ["--title", MARKUP]}
    managed = {"app.kubernetes.io/managed-by": "darkroom-operator", **labels}
    annotations = {RATE_ANNOTATION: str(lines_per_second)} if lines_per_second else {}
    template = {  # labelled as the reconciler does: cached
        "metadata": {"labels": managed, "annotations": annotations},
        "spec": {"containers": [container]},
    }
    body = {
        "metadata": {"name": name, "labels": managed, "ownerReferences": controlled_by(owner)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template},
    }
    apps: Any = client.AppsV1Api(api_client)  # a plain dict body: the client sends it as it is
    apps.create_namespaced_deployment(namespace, body)
    core: Any = client.CoreV1Api(api_client)

    def running() -> list[str] | None:
        pods = core.list_namespaced_pod(namespace, label_selector=f"app={name}").items
        live = [p for p in pods if p.metadata.deletion_timestamp is None and p.status.phase == "Running"]
        return sorted(p.metadata.name for p in live) if len(live) == replicas else None

    found: list[str] = wait_for(running, timeout_s=60)
    return found


def cached(http: Client, base: str, pods: list[str]) -> Any:
    """The logs page of ``base`` once it lists every pod of ``pods`` (it reads them from the API's cache, as the person:
    the cache may not have seen them yet when the cluster says they run)."""

    def listed() -> Any:
        answer = http.get(f"{base}/logs?follow=1")
        return answer if all(f'<option value="{pod}">' in answer.get_data(as_text=True) for pod in pods) else None

    return wait_for(listed, timeout_s=20)


def events(body: str) -> list[tuple[str, str]]:
    """The named events of an SSE body: (name, data)."""
    found = re.findall(r"^event: (\S+)\n((?:data: .*\n)*)", body, re.M)
    return [(name, "\n".join(line.removeprefix("data: ") for line in data.splitlines())) for name, data in found]


def log_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(f"{THREAD_PREFIX}-") and t.is_alive()]


class Opened:
    """An open stream read chunk by chunk."""

    def __init__(self, http: Client, url: str) -> None:
        self.response = http.get(url, buffered=False)
        self.status = self.response.status_code
        self._chunks: Iterator[bytes] = iter(self.response.response) if self.status == 200 else iter(())
        self.text = ""

    def until(self, needle: str, timeout_s: float = 30) -> str:
        deadline = time.monotonic() + timeout_s
        while needle not in self.text:
            assert time.monotonic() < deadline, f"no {needle!r} within {timeout_s} s: {self.text[-2000:]}"
            self.text += next(self._chunks).decode()
        return self.text

    def chunk(self) -> str:
        """The next chunk the server wrote (a pushed stream's chunk: what one take of its buffer made)."""
        text = next(self._chunks).decode()
        self.text += text
        return text

    def close(self) -> None:
        self.response.close()


def test_the_logs_page_lists_the_pods_and_the_download_and_stream_read_them(
    http: Client, custom: Any, api_client: Any, namespace: str
) -> None:
    pods = darkroom_with_pods(custom, api_client, namespace, "web")
    base = f"/ui/darkrooms/{namespace}/web"
    assert f'href="{base}/logs?follow=1">Logs</a>' in http.get(base).get_data(as_text=True)
    page = cached(http, base, pods)
    html = page.get_data(as_text=True)
    assert page.status_code == 200, html
    for pod in pods:
        assert f'<option value="{pod}">{pod}</option>' in html
    assert f'data-stream="{base}/logs/stream?tail=500&amp;follow=1"' in html
    assert f'href="{base}/logs/download"' in html
    assert MARKUP not in html

    everything = http.get(f"{base}/logs/download")
    text = everything.get_data(as_text=True)
    assert everything.status_code == 200 and everything.mimetype == "text/plain"
    assert everything.headers["Content-Disposition"] == 'attachment; filename="web-all-pods.log"'
    for pod in pods:
        assert f"[{pod}] image: {IMAGE}\n" in text
    assert all(line.startswith(tuple(f"[{pod}] " for pod in pods)) for line in text.splitlines())

    one = http.get(f"{base}/logs/download?pod={pods[0]}&tail=1")
    assert one.status_code == 200 and len(one.get_data(as_text=True).splitlines()) == 1
    whole = http.get(f"{base}/logs/download?pod={pods[0]}").get_data(as_text=True)
    assert f"image: {IMAGE}" in whole and not whole.startswith("[")
    assert one.get_data(as_text=True).splitlines() == whole.splitlines()[-1:]

    stream = http.get(f"{base}/logs/stream?pod={pods[0]}&tail=100")  # no follow: the tail, then done (the body ends)
    body = stream.get_data(as_text=True)
    assert stream.status_code == 200 and stream.mimetype == "text/event-stream"
    named = events(body)
    assert named[-1] == ("done", "every log ended")
    lines = "\n".join(data for name, data in named if name == "lines")
    assert f"image: {IMAGE}" in lines and "&lt;img src=x onerror=alert(1)&gt;" in lines
    assert "<img" not in body and 'class="log-pod"' not in lines  # escaped; one pod: no marks
    # no previous container: the kubelet's 400, as the download's answer and as a note in the stream
    previous = http.get(f"{base}/logs/download?pod={pods[0]}&previous=1", headers={"Accept": "application/json"})
    assert previous.status_code == 400 and "previous terminated container" in previous.get_json()["detail"]
    noted = http.get(f"{base}/logs/stream?pod={pods[0]}&previous=1").get_data(as_text=True)
    assert 'class="log-line log-note"' in noted and "previous terminated container" in noted and "event: done" in noted
    merged = "\n".join(data for name, data in events(http.get(f"{base}/logs/stream?tail=2").get_data(as_text=True)) if name == "lines")
    for pod in pods:
        assert f'<span class="log-pod">{pod}</span>' in merged


def test_a_followed_stream_delivers_later_lines_and_its_readers_end_with_it(
    http: Client, custom: Any, api_client: Any, namespace: str
) -> None:
    (pod,) = darkroom_with_pods(custom, api_client, namespace, "follow", replicas=1)
    cached(http, f"/ui/darkrooms/{namespace}/follow", [pod])
    opened = Opened(http, f"/ui/darkrooms/{namespace}/follow/logs/stream?pod={pod}&tail=1&follow=1")
    try:
        assert opened.status == 200
        first = opened.until("event: lines")
        assert f"image: {IMAGE}" not in first  # tail=1: the last line only
        assert any(t.name == f"{THREAD_PREFIX}-{pod}" for t in log_threads())
        # the simulated kubelet writes a line every few seconds while a log is followed
        later = opened.until("simulated: no container runs on", timeout_s=30)
        assert "event: done" not in later
    finally:
        opened.close()
    wait_for(lambda: not [t for t in log_threads() if t.name == f"{THREAD_PREFIX}-{pod}"] or None, timeout_s=10)


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("tail=0", "tail"),
        ("tail=abc", "tail"),
        ("tail=10001", "tail"),
        ("since=5x", "since"),
        ("since=0s", "since"),
        ("previous=maybe", "previous"),
        ("tial=5", "tial"),
        ("pod=nope", "pod"),
    ],
)
def test_bad_and_unknown_parameters_are_400s_naming_them(http: Client, custom: Any, namespace: str, query: str, named: str) -> None:
    make_darkroom(custom, namespace, "params")
    base = f"/ui/darkrooms/{namespace}/params/logs"
    if named == "pod":  # checked against the pods: there are none yet
        wait_for(lambda: http.get(f"{base}").status_code == 200, timeout_s=10)
    for path in (base, f"{base}/stream", f"{base}/download"):
        answer = http.get(f"{path}?{query}", headers={"Accept": "application/json"})
        assert answer.status_code == 400, (path, answer.get_data(as_text=True))
        assert named in answer.get_json()["errors"], (path, answer.get_json())
    page = http.get(f"{base}?{query}", headers={"Accept": "text/html"})
    assert page.status_code == 400 and page.mimetype == "text/html" and named in page.get_data(as_text=True)
    assert http.get(f"{base}/download?wrap=1", headers={"Accept": "application/json"}).status_code == 400
    assert http.get(f"{base}/download?follow=1", headers={"Accept": "application/json"}).status_code == 400


def test_a_darkroom_without_pods_says_so(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(custom, namespace, "empty")
    page = wait_for(lambda: (answer := http.get(f"/ui/darkrooms/{namespace}/empty/logs")).status_code == 200 and answer, timeout_s=10)
    assert "No logs to show: its Deployment is not created yet." in page.get_data(as_text=True)
    assert http.get(f"/ui/darkrooms/{namespace}/missing/logs").status_code == 404


def test_the_log_stream_cap_answers_503_with_retry_after(make_app: Any, custom: Any, api_client: Any, namespace: str) -> None:
    (pod,) = darkroom_with_pods(custom, api_client, namespace, "capped", replicas=1)
    app: Flask = make_app(testing=False, log_stream_max=1, stream_retry_after_s=7)
    http = Client(app.test_client())
    cached(http, f"/ui/darkrooms/{namespace}/capped", [pod])
    url = f"/ui/darkrooms/{namespace}/capped/logs/stream?pod={pod}&follow=1&tail=1"
    first = Opened(http, url)
    try:
        assert first.status == 200
        first.until("event: lines")
        refused = http.get(url, headers={"Accept": "application/json"})
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "7"
        assert "log streams" in refused.get_json()["detail"]
    finally:
        first.close()
    again = Opened(http, url)  # the closed stream gave its place back
    try:
        assert again.status == 200
    finally:
        again.close()


def test_a_server_shutdown_ends_the_open_log_streams(make_app: Any, custom: Any, api_client: Any, namespace: str) -> None:
    """Shutting the app down (``backend.server.shutdown``, as the production worker does on SIGTERM) ends a followed
    log stream as it ends the ``/watch`` streams: the page is told every log ended, its readers stop, and a stream
    asked for afterwards is a 503 with Retry-After."""
    from backend.server import shutdown as serving

    (pod,) = darkroom_with_pods(custom, api_client, namespace, "stopping", replicas=1)
    app: Flask = make_app(testing=False, stream_retry_after_s=3)
    http = Client(app.test_client())
    cached(http, f"/ui/darkrooms/{namespace}/stopping", [pod])
    url = f"/ui/darkrooms/{namespace}/stopping/logs/stream?pod={pod}&follow=1&tail=1"
    opened = Opened(http, url)
    try:
        assert opened.status == 200
        opened.until("event: lines")
        serving.close_streams(app)
        assert "every log ended" in opened.until("event: done", timeout_s=10)
    finally:
        opened.close()
    wait_for(lambda: not [t for t in log_threads() if t.name == f"{THREAD_PREFIX}-{pod}"] or None, timeout_s=10)
    late = http.get(url, headers={"Accept": "application/json"})
    assert late.status_code == 503 and late.headers["Retry-After"] == "3" and "shutting down" in late.get_json()["detail"]


def test_a_person_who_may_not_get_pods_log_gets_the_403_naming_it(deleter: Deleter) -> None:
    from kubernetes import client

    rbac: Any = client.RbacAuthorizationV1Api(deleter.admin)
    listing = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}  # the pods, not their pods/log
    rbac.create_namespaced_role(deleter.allowed, {"metadata": {"name": "pod-reader"}, "rules": [listing]})
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"}
    subject = {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}
    rbac.create_namespaced_role_binding(deleter.allowed, {"metadata": {"name": "pod-reader"}, "roleRef": role_ref, "subjects": [subject]})
    custom: Any = client.CustomObjectsApi(deleter.admin)
    (pod,) = darkroom_with_pods(custom, deleter.admin, deleter.allowed, "secret-logs", replicas=1)
    browser = deleter.app.test_client()
    assert browser.post("/login", data={"token": deleter.token, "next": "/"}).status_code == 303
    http = Client(browser)
    base = f"/ui/darkrooms/{deleter.allowed}/secret-logs/logs"

    def shown() -> Any:  # once the API's cache has the Darkroom and its pod
        answer = http.get(base, headers={"Accept": "text/html"})
        return answer if answer.status_code != 404 and "has no pods yet" not in answer.get_data(as_text=True) else None

    page = wait_for(shown, timeout_s=20)
    html = page.get_data(as_text=True)
    assert page.status_code == 403, html
    assert f"You may not get pods/log &#34;{pod}&#34; in namespace &#34;{deleter.allowed}&#34;." in html
    for path in (f"{base}/stream", f"{base}/download"):
        answer = http.get(path, headers={"Accept": "application/json"})
        assert answer.status_code == 403 and "pods/log" in answer.get_json()["detail"], answer.get_json()
    # the pods of another namespace: not even listed
    refused = http.get(f"/ui/darkrooms/{deleter.refused}/nothing/logs")
    assert refused.status_code in (403, 404)


def test_a_databases_logs_are_its_statefulsets_pods(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    from tests.dashboard.test_postgresql_pages import make_pg, owner_of

    pg = make_pg(custom, namespace, "orders")
    labels = {"app": "orders-db"}
    managed = {"app.kubernetes.io/managed-by": "darkroom-operator", **labels}  # the pod template as the reconciler labels it
    template = {"metadata": {"labels": managed}, "spec": {"containers": [{"name": "postgres", "image": "postgres:17"}]}}
    body = {
        "metadata": {"name": "orders", "labels": {"app.kubernetes.io/managed-by": "darkroom-operator"}, "ownerReferences": [owner_of(pg)]},
        "spec": {"replicas": 1, "serviceName": "orders-hl", "selector": {"matchLabels": labels}, "template": template},
    }
    apps: Any = client.AppsV1Api(api_client)
    apps.create_namespaced_stateful_set(namespace, body)
    base = f"/ui/postgresqls/{namespace}/orders"

    def shown(path: str, needle: str) -> str | None:
        answer = http.get(path)
        text = answer.get_data(as_text=True)
        return text if answer.status_code == 200 and needle in text else None

    assert wait_for(lambda: shown(base, f'href="{base}/logs?follow=1">Logs</a>'), timeout_s=10)
    page = wait_for(lambda: shown(f"{base}/logs", "orders-0</option>"), timeout_s=60)  # the StatefulSet's pod
    assert ">Databases</a>" in page
    assert wait_for(lambda: shown(f"{base}/logs/download?pod=orders-0", "image: postgres:17"), timeout_s=30)


SKIPPED = re.compile(r"(\d+) lines? skipped \(the log came faster than it could be sent\)")


def test_pods_writing_1000_lines_a_second_keep_the_stream_bounded_and_the_pages_answering(
    http: Client, custom: Any, api_client: Any, namespace: str
) -> None:
    pods = darkroom_with_pods(custom, api_client, namespace, "chatty", replicas=2, lines_per_second=1000)
    base = f"/ui/darkrooms/{namespace}/chatty"
    cached(http, base, pods)
    opened = Opened(http, f"{base}/logs/stream?follow=1&tail=10")  # every pod, interleaved: 2,000 lines a second
    frames: list[str] = []
    answers: list[tuple[str, int, float]] = []
    try:
        assert opened.status == 200
        opened.until("event: lines")
        time.sleep(3)  # a slow reader: ~6,000 lines written meanwhile, more than the buffer holds
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            frames.append(opened.chunk())  # one frame: what the buffer held at one take
            if len(frames) % 5 == 0:  # other requests, while the stream runs
                for path in ("/readyz", "/", base):
                    began = time.monotonic()
                    answer = http.get(path)
                    answers.append((path, answer.status_code, time.monotonic() - began))
    finally:
        opened.close()
    wait_for(lambda: not [t for t in log_threads() if t.name.removeprefix(f"{THREAD_PREFIX}-") in pods] or None, timeout_s=10)

    per_frame = [sum(1 for name, data in events(frame) if name == "lines" for _ in data.splitlines()) for frame in frames]
    assert max(per_frame) <= BUFFER_LINES + 1, per_frame  # a frame is one take of the buffer (+ the skipped note)
    skipped = [int(count) for frame in frames for count in SKIPPED.findall(frame)]
    assert skipped and sum(skipped) > 1000, skipped  # the slow reader's lines were dropped and counted, not queued
    text = "".join(frames)
    for pod in pods:  # both pods' lines kept coming, each marked with its pod
        assert f'<span class="log-pod">{pod}</span> <span class="log-text">simulated: line ' in text
    assert sum(per_frame) > 2000  # the stream carried on while it was read (6 s of 2,000 lines a second, some dropped)
    assert answers and all(status == 200 and took < 5 for _, status, took in answers), answers
