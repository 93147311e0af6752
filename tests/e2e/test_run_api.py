"""`make api`'s entry point (scripts/run_api.py) end to end, as a user drives it with curl.

Covers: on a bare data dir it starts the embedded devcluster, installs the CRDs, runs the reconciler
the API and the aggregated API (registered with devcluster: ``kubectl get ct -A`` lists the sample Task;
gone again after a clean stop), prints a banner naming the cluster and the URL (and, on devcluster only,
that pods are simulated), keeps data across runs and stops
everything cleanly on SIGINT (Ctrl-C); with KUBECONFIG set it uses that cluster instead; the
curl-style flow create → Ready with domains → update → delete works through the whole stack (on
devcluster and on the real control plane, with KUBECONFIG); the S3
sentinel secret never shows in API responses, logs, CRs or ConfigMaps; a child that dies stops the
stack with a message naming it; a taken API or devcluster port, or settings the API would refuse (the local mode
off loopback, the shared token of earlier releases), is one line naming the variable to change (PORT,
DEVCLUSTER_PORT, DARKROOM_API_AUTHENTICATION, DARKROOM_API_TOKEN), before anything starts; in the login mode the
embedded devcluster's admin token (``<data-dir>/pki/admin.token``) is the way in.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path
from typing import Any

from backend.settings import SHARED_TOKEN_GONE
from tests.clusters import ROOT, ClusterProcess, DevclusterProcess, free_port, free_ports
from tests.support import GC_TIMEOUT_S, Kubectl, wait_for


def _start(data_dir: Path, port: int, api_port: int, log_dir: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    argv = [sys.executable, "scripts/run_api.py", "--data-dir", str(data_dir), "--devcluster-port", str(port)]
    argv += ["--port", str(api_port), "--log-dir", str(log_dir)]
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **(env or {})})


def _read_banner(proc: subprocess.Popen[str], timeout_s: float = 90) -> str:
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Ctrl-C"):
            return "".join(lines)
    raise AssertionError("no banner: " + "".join(lines))


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, out


def _curl(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Message, Any]:
    """(status, headers — looked up case-insensitively, as HTTP names are —, parsed JSON body)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, response.headers, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, e.headers, json.loads(raw) if raw else None


def test_embedded_stack_starts_serves_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    data_dir, (port, api_port) = tmp_path / "data", free_ports(2)
    proc = _start(data_dir, port, api_port, tmp_path / "logs", env={"KUBECONFIG": ""})
    try:
        banner = _read_banner(proc)
        assert f"embedded devcluster at http://127.0.0.1:{port}" in banner
        assert "darkrooms.deployments.example.com, postgresqls.database.db.example.com, tasks.example.example.com (installed)" in banner
        assert f"http://localhost:{api_port}" in banner
        assert "devcluster simulates pods: no container runs and no image is pulled, so a Darkroom shows Ready" in banner
        kubectl = Kubectl(data_dir / "kubeconfig", tmp_path / "cache")
        kubectl.run("apply", "-f", "crds/samples/")
        assert "webfolder-demo" in kubectl.run("get", "dr").stdout
        status, _, body = _curl("GET", f"http://127.0.0.1:{api_port}/darkrooms")
        assert status == 200
        assert "webfolder-demo" in {item["name"] for item in body["items"]}
        # The aggregated API, registered with devcluster: kubectl reads CombinedTasks through it.
        assert "APIService v1.search.task.example.example.com, through devcluster" in banner
        assert f"kubectl --kubeconfig {data_dir / 'kubeconfig'} get combinedtasks -A" in banner
        wait_for(lambda: "write-release-notes" in kubectl.run("get", "ct", "-A").stdout, message="the sample Task as a CombinedTask")
        row = next(line.split() for line in kubectl.run("get", "ct", "-A").stdout.splitlines() if "write-release-notes" in line)
        assert row[:5] == ["default", "write-release-notes", "5", "2027-03-31T17:00:00Z", "Pending"]  # then its Events count
    finally:
        code, out = _stop(proc)
    assert code == 0, out
    assert "stopped." in out
    # A clean stop unregisters the aggregated API: a devcluster alone on the data dir has no APIService left.
    alone = DevclusterProcess(data_dir).start()
    try:
        assert "No resources found" in Kubectl(alone.kubeconfig, tmp_path / "cache2").run("get", "apiservices").stderr
    finally:
        alone.stop()
    # A second run on the same data dir finds the objects again.
    proc = _start(data_dir, port, api_port, tmp_path / "logs", env={"KUBECONFIG": ""})
    try:
        _read_banner(proc)
        assert "webfolder-demo" in Kubectl(data_dir / "kubeconfig", tmp_path / "cache").run("get", "dr").stdout
    finally:
        assert _stop(proc)[0] == 0


def test_uses_the_chosen_kubeconfig_instead_of_devcluster(tmp_path: Path) -> None:
    external = DevclusterProcess(tmp_path / "external").start()
    try:
        cluster_port, api_port = free_ports(2)
        proc = _start(tmp_path / "unused", cluster_port, api_port, tmp_path / "logs", env={"KUBECONFIG": str(external.kubeconfig)})
        try:
            banner = _read_banner(proc)
            assert f"the cluster of kubeconfig {external.kubeconfig}" in banner
            assert "simulates" not in banner
            # No devcluster data: the data dir holds the aggregated API's certificate only, kept for the next run.
            assert [p.name for p in (tmp_path / "unused").iterdir()] == ["aggregator-certs"]
            crds = Kubectl(external.kubeconfig, tmp_path / "cache").run("get", "crd", "-o", "name").stdout
            assert "darkrooms.deployments.example.com" in crds
            # No APIService on a cluster of the user's: the banner says so and how kubectl reaches the server directly.
            assert "not registered with the cluster" in banner
            (direct,) = [line.split("try:", 1)[1].split() for line in banner.splitlines() if "--certificate-authority" in line]
            assert direct[:3] == ["kubectl", "--kubeconfig", str(external.kubeconfig)] and direct[-3:] == ["get", "combinedtasks", "-A"]
            ca = direct[direct.index("--certificate-authority") + 1]
            assert ca == str(tmp_path / "unused" / "aggregator-certs" / "apiserver.crt")  # the same every run, not a new temp dir
            Kubectl(external.kubeconfig, tmp_path / "cache").run("apply", "-f", "crds/samples/")
            wait_for(
                lambda: "write-release-notes" in Kubectl(external.kubeconfig, tmp_path / "cache").run(*direct[3:]).stdout,
                message="the sample Task as a CombinedTask, from the aggregated server directly",
            )
        finally:
            assert _stop(proc)[0] == 0
        # The certificate is ours, given to the server: no warning about falling back on a self-signed one.
        assert "self-signed" not in (tmp_path / "logs" / "aggregator.log").read_text()
    finally:
        external.stop()


SENTINEL = "SENTINEL-e2e-9b1f0c"


def test_curl_flow_create_ready_update_delete_and_secrets_stay_secret(kube: ClusterProcess, namespace: str, tmp_path: Path) -> None:
    """On the session cluster of each kind (``KUBECONFIG=... make api``), in a namespace of its own."""
    api_port, log_dir = free_port(), tmp_path / "logs"
    proc = _start(tmp_path / "unused", free_port(), api_port, log_dir, env={"KUBECONFIG": str(kube.kubeconfig)})
    base = f"http://127.0.0.1:{api_port}"
    try:
        _read_banner(proc)
        payload = {
            "name": "photos",
            "source": {"type": "WebFolder", "baseUrl": "https://example.com/img"},
            "subDomains": ["photos"],
            "namespace": namespace,
        }
        status, headers, body = _curl("POST", f"{base}/darkrooms", payload)
        assert status == 201, body
        assert headers["Location"].endswith(f"/darkrooms/{namespace}/photos")

        def ready() -> Any:
            _, headers, item = _curl("GET", f"{base}/darkrooms/{namespace}/photos")
            return (headers, item) if item["status"]["ready"] else None

        headers, item = wait_for(ready, timeout_s=60, message="photos Ready")
        assert item["status"]["domains"] == ["photos.darkroom.example.com"]
        # The reconciler's status writes change the version, so If-Match uses the ETag of this latest read.

        status, headers, body = _curl(
            "PATCH", f"{base}/darkrooms/{namespace}/photos", {"subDomains": ["photos", "img"]}, {"If-Match": headers["ETag"]}
        )
        assert status == 200, body
        wait_for(
            lambda: (
                sorted(_curl("GET", f"{base}/darkrooms/{namespace}/photos")[2]["status"]["domains"] or [])
                == ["img.darkroom.example.com", "photos.darkroom.example.com"]
            ),
            timeout_s=60,
            message="domains updated",
        )

        s3 = {
            "name": "vault",
            "source": {"type": "S3", "bucket": "vault-images", "region": "eu-west-1", "accessKey": "AKIAE2E", "secretKey": SENTINEL},
            "subDomains": ["vault"],
            "namespace": namespace,
        }
        status, _, body = _curl("POST", f"{base}/darkrooms", s3)
        assert status == 201, body
        wait_for(lambda: _curl("GET", f"{base}/darkrooms/{namespace}/vault")[2]["status"]["ready"], timeout_s=60, message="vault Ready")
        kubectl = Kubectl(kube.kubeconfig, tmp_path / "cache")
        for kind in ("darkrooms", "configmaps", "deployments", "events", "tasks"):
            assert SENTINEL not in kubectl.run("get", kind, "-A", "-o", "json").stdout, kind
        assert SENTINEL not in json.dumps(_curl("GET", f"{base}/darkrooms")[2])

        status, _, _ = _curl("DELETE", f"{base}/darkrooms/{namespace}/photos")
        assert status in (200, 202, 204)
        wait_for(lambda: _curl("GET", f"{base}/darkrooms/{namespace}/photos")[0] == 404, timeout_s=30, message="photos gone")
        wait_for(
            lambda: "photos" not in kubectl.run("get", "deployments", "-n", namespace, "-o", "name").stdout,
            timeout_s=GC_TIMEOUT_S,
            message="children collected",
        )
    finally:
        code, out = _stop(proc)
    assert code == 0, out
    for log in log_dir.iterdir():
        assert SENTINEL not in log.read_text(errors="replace"), log.name
    assert SENTINEL not in out


def test_a_dying_child_stops_the_stack_and_is_named(tmp_path: Path) -> None:
    cluster_port, api_port = free_ports(2)
    proc = _start(tmp_path / "data", cluster_port, api_port, tmp_path / "logs", env={"KUBECONFIG": ""})
    try:
        banner = _read_banner(proc)
        pid = int(banner.split("reconciler: running (pid ")[1].split(";")[0])
        os.kill(pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    assert "reconciler exited with code -9" in out
    assert "stopped." in out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_of_make_api_leaves_no_orphans_and_a_stale_stack_is_named(tmp_path: Path) -> None:
    """The children die with their parent; a start-up that finds the port taken says why."""
    data_dir, api_port, log_dir = tmp_path / "data", free_port(), tmp_path / "logs"
    proc = _start(data_dir, free_port(), api_port, log_dir, env={"KUBECONFIG": ""})
    banner = _read_banner(proc)
    children = [int(pid) for pid in re.findall(r"\(pid (\d+);", banner)]  # the reconciler's, the API's, the aggregated API's
    assert len(children) == 3
    assert (log_dir / "stack.pids").read_text().split() == [str(p) for p in children]
    proc.kill()
    proc.communicate(timeout=30)
    wait_for(lambda: not any(_alive(pid) for pid in children), timeout_s=30, message="the children to exit after kill -9 of make api")

    # A stack someone else started on the port: named as a stale one if the pid file says so.
    with socket.create_server(("127.0.0.1", api_port)):
        (log_dir / "stack.pids").write_text(f"{os.getpid()}\n")  # this test process plays the leftover stack
        blocked = _start(data_dir, free_port(), api_port, log_dir, env={"KUBECONFIG": ""})
        out, _ = blocked.communicate(timeout=60)
    assert blocked.returncode == 1
    assert f"port {api_port} on 127.0.0.1 (the API and dashboard) is already in use; what listens there does not answer HTTP" in out
    assert f", and a stack an earlier run left behind is still running (pids {os.getpid()}): stop it with kill, or choose" in out
    (log_dir / "stack.pids").unlink()
    proc = _start(data_dir, free_port(), api_port, log_dir, env={"KUBECONFIG": ""})
    try:
        _read_banner(proc)
    finally:
        assert _stop(proc)[0] == 0


def _again(data_dir: Path, log_dir: Path, api_port: int, cluster_port: int) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "scripts/run_api.py", "--data-dir", str(data_dir), "--log-dir", str(log_dir)]
    argv += ["--port", str(api_port), "--devcluster-port", str(cluster_port)]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, "KUBECONFIG": ""})


def test_a_second_make_api_names_the_running_one(tmp_path: Path) -> None:
    """On the ports of a healthy stack: it is running, there (not "left behind"); on other ports but the same data
    directory: the devcluster serving it, by pid and URL (its lock). Either way one line, and nothing started."""
    data_dir, (cluster_port, api_port) = tmp_path / "data", free_ports(2)
    proc = _start(data_dir, cluster_port, api_port, tmp_path / "logs", env={"KUBECONFIG": ""})
    try:
        banner = _read_banner(proc)
        pids = " ".join(re.findall(r"\(pid (\d+);", banner))
        same = _again(data_dir, tmp_path / "logs", api_port, cluster_port)
        beside = _again(data_dir, tmp_path / "other-logs", *free_ports(2))
        assert proc.poll() is None, "the running stack is untouched"
    finally:
        assert _stop(proc)[0] == 0
    assert same.returncode == 1 and same.stdout == ""
    assert same.stderr.splitlines() == [
        f"Darkroom Control Panel is already running at http://localhost:{api_port} (pids {pids}): use that one, or run another "
        "beside it on another port with PORT=<port> make api"
    ]
    assert beside.returncode == 1 and beside.stdout == ""
    assert beside.stderr.splitlines() == [
        f"Darkroom Control Panel cannot start: the data directory {data_dir} is in use by a running devcluster "
        f"(pid {proc.pid} http://127.0.0.1:{cluster_port}); stop that one first, or choose another data directory"
    ]
    assert not (tmp_path / "other-logs").exists()


def _refused(tmp_path: Path, argv: list[str], env: dict[str, str]) -> list[str]:
    """The output lines of a run that must refuse to start, after checking it started nothing."""
    cmd = [sys.executable, "scripts/run_api.py", "--data-dir", str(tmp_path / "data"), "--log-dir", str(tmp_path / "logs"), *argv]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, "KUBECONFIG": "", **env})
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "data").exists() and not (tmp_path / "logs").exists(), "nothing starts"
    return result.stderr.splitlines()


def test_a_taken_port_is_one_line_naming_the_variable_to_change(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        api = _refused(tmp_path, [], {"PORT": str(port), "DEVCLUSTER_PORT": str(free_port())})
        cluster = _refused(tmp_path, [], {"PORT": str(free_port()), "DEVCLUSTER_PORT": str(port)})
    assert api == [
        f"Darkroom Control Panel cannot start: port {port} on 127.0.0.1 (the API and dashboard) is already in use; "
        "what listens there does not answer HTTP (timed out); choose another with PORT=<port> make api"
    ]
    assert cluster == [
        f"Darkroom Control Panel cannot start: port {port} on 127.0.0.1 (the embedded devcluster) is already in use; "
        "choose another with DEVCLUSTER_PORT=<port> make api"
    ]


def test_settings_the_api_would_refuse_are_one_line_before_anything_starts(tmp_path: Path) -> None:
    free = {"PORT": str(free_port()), "DEVCLUSTER_PORT": str(free_port())}
    assert _refused(tmp_path, ["--host", "0.0.0.0"], {**free, "DARKROOM_API_AUTHENTICATION": "local"}) == [
        "Darkroom Control Panel cannot start: refusing to serve on 0.0.0.0 in the local mode (acting as this process's own"
        " kubeconfig identity for whoever connects): off loopback every person must log in — leave DARKROOM_API_AUTHENTICATION"
        " unset or set it to login"
    ]
    assert _refused(tmp_path, [], {**free, "DARKROOM_API_TOKEN": "an-old-shared-token"}) == [
        f"Darkroom Control Panel cannot start: {SHARED_TOKEN_GONE.format(name='DARKROOM_API_TOKEN')}"
    ]
    assert _refused(tmp_path, [], {**free, "DARKROOM_API_SSE_HISTORY": "many"}) == [
        "Darkroom Control Panel cannot start: DARKROOM_API_SSE_HISTORY: invalid literal for int() with base 10: 'many'"
    ]


def test_the_login_mode_takes_the_embedded_devclusters_admin_token(tmp_path: Path) -> None:
    """Asked for on loopback, the login mode wants a person's token: on the embedded devcluster, its admin token."""
    api_port = free_port()
    data_dir = tmp_path / "data"
    proc = _start(data_dir, free_port(), api_port, tmp_path / "logs", env={"KUBECONFIG": "", "DARKROOM_API_AUTHENTICATION": "login"})
    try:
        _read_banner(proc)
        url = f"http://127.0.0.1:{api_port}/darkrooms"
        token = (data_dir / "pki" / "admin.token").read_text().strip()
        assert _curl("GET", url)[0] == 401
        assert _curl("GET", url, headers={"Authorization": "Bearer not-the-admin-token"})[0] == 401
        assert _curl("GET", url, headers={"Authorization": f"Bearer {token}"})[0] == 200
    finally:
        assert _stop(proc)[0] == 0
