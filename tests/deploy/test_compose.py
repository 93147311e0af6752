"""docker-compose.yml: Debian's docker-compose accepts it, and it wires k3s, the CRD installer, the reconciler and the API.

Behaviours covered:

- ``docker-compose config -q`` accepts the file with nothing set; the API runs in the login mode (every person
  logs in as themselves, off loopback), its sessions in a namespace k3s has; the shared token is gone, and the
  secrets (cookie signing key, OIDC client secret) come only from the environment — none is baked in — as do the
  OIDC issuer, client id and identity mode;
- k3s is the official image pinned to an exact version, privileged, its certificate covering the
  service name the other containers use, its kubeconfig written into a volume;
- the one-shot ``crds`` service rewrites that kubeconfig to https://k3s:6443 into the volume the
  reconciler and the API read (same path as their KUBECONFIG), and they start only after it
  completed successfully;
- the project services run the image built from deploy/Dockerfile with the real entry points,
  read-only root filesystem, no capabilities, no-new-privileges; the dashboard is published on
  localhost:5000 only;
- the installer's kubeconfig rewrite itself (:func:`cluster.crdinstall.rewrite_server`).
"""

from __future__ import annotations

import copy
import functools
import os
import shutil
import subprocess
from typing import Any

import yaml

from cluster import crdinstall

from .manifests import ROOT

PROJECT_SERVICES = ("crds", "operator", "api")
# What a person may set before `docker compose up` (docs/operations/deploy.md): passed through, never written in the file.
LOGIN_ENV = {
    "DARKROOM_API_SECRET_KEY": "test-key-not-secret",
    "DARKROOM_API_OIDC_CLIENT_SECRET": "test-client-secret-not-secret",
    "DARKROOM_API_OIDC_ISSUER_URL": "https://login.example.com",
    "DARKROOM_API_OIDC_CLIENT_ID": "darkroom-compose",
    "DARKROOM_API_IDENTITY": "impersonate",
}


def docker_compose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("docker-compose")
    if binary is None:
        raise AssertionError(
            "docker-compose is not on PATH: run scripts/install_test_tools.sh (make test does) or `apt-get install docker-compose`"
        )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DARKROOM_", "COMPOSE_", "DOCKER_"))}
    return subprocess.run(
        [binary, "--project-directory", str(ROOT), "-f", str(ROOT / "docker-compose.yml"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**clean, **(env or {})},
    )


@functools.cache
def _config_text(*env: tuple[str, str]) -> str:
    result = docker_compose("config", env=dict(env))
    assert result.returncode == 0, result.stderr
    return result.stdout


def config(env: dict[str, str] | None = None) -> dict[str, Any]:
    """The file as docker-compose resolves it (variables interpolated from ``env``, anchors merged)."""
    loaded: dict[str, Any] = yaml.safe_load(_config_text(*sorted((env or {}).items())))
    return copy.deepcopy(loaded)


def test_docker_compose_accepts_the_file() -> None:
    result = docker_compose("config", "-q")
    assert result.returncode == 0, result.stderr


def test_everyone_logs_in_and_no_secret_is_baked_in() -> None:
    """The API requires a login (the local one-person mode would act as k3s's admin for whoever connects); the shared
    token is gone (setting it would stop the API); secrets and the OIDC settings come from the environment only."""
    text = (ROOT / "docker-compose.yml").read_text()
    assert not any(LOGIN_ENV[name] in text for name in LOGIN_ENV if name != "DARKROOM_API_IDENTITY")
    environment = config()["services"]["api"]["environment"]
    assert environment["DARKROOM_API_AUTHENTICATION"] == "login"
    assert "DARKROOM_API_TOKEN" not in environment and "DARKROOM_API_TOKEN" not in text
    assert environment["DARKROOM_API_SESSION_NAMESPACE"] == "default", "k3s has no darkroom-system namespace"
    assert environment["DARKROOM_API_IDENTITY"] == "passthrough"
    for name in (
        "DARKROOM_API_SECRET_KEY",
        "DARKROOM_API_OIDC_CLIENT_SECRET",
        "DARKROOM_API_OIDC_ISSUER_URL",
        "DARKROOM_API_OIDC_CLIENT_ID",
    ):
        assert environment[name] == "", f"{name}: nothing unless set"
    assert {k: v for k, v in config(LOGIN_ENV)["services"]["api"]["environment"].items() if k in LOGIN_ENV} == LOGIN_ENV


def test_the_api_starts_with_what_compose_gives_it() -> None:
    """The API's own startup checks accept the resolved environment: token login only by default, OIDC with
    impersonation (k3s does not trust a provider) when set."""
    from backend.settings import ApiSettings

    for env, oidc, identity in (({}, False, "passthrough"), (LOGIN_ENV, True, "impersonate")):
        environment = {k: str(v) for k, v in config(env)["services"]["api"]["environment"].items() if v not in (None, "")}
        settings = ApiSettings.from_environ(environment).check()
        assert (settings.local, settings.oidc, settings.identity, settings.token_login) == (False, oidc, identity, True)


def test_k3s_is_the_official_image_pinned_and_shares_its_kubeconfig() -> None:
    k3s = config()["services"]["k3s"]
    repository, _, tag = k3s["image"].partition(":")
    assert repository == "rancher/k3s"
    assert tag.startswith("v1.30.") and "-k3s" in tag, "pinned to an exact Kubernetes 1.30 release"
    assert k3s["privileged"] is True
    command = k3s["command"]
    assert command[0] == "server" and command[command.index("--tls-san") + 1] == "k3s"
    output = k3s["environment"]["K3S_KUBECONFIG_OUTPUT"]
    assert k3s["environment"]["K3S_KUBECONFIG_MODE"] == "644", "readable by the non-root installer"
    assert any(v.endswith(":/output") or v.split(":")[1] == os.path.dirname(output) for v in k3s["volumes"])


def volume_target(service: dict[str, Any], volume: str) -> tuple[str, bool]:
    for entry in service["volumes"]:
        source, target, *mode = entry.split(":")
        if source == volume:
            return target, mode == ["ro"]
    raise AssertionError(f"volume {volume} not mounted: {service['volumes']}")


def test_the_installer_rewrites_the_kubeconfig_the_others_read() -> None:
    services = config()["services"]
    k3s, crds = services["k3s"], services["crds"]
    command = crds["command"]
    assert command[:3] == ["python", "-m", "cluster.crdinstall"]
    arg = {flag: command[command.index(flag) + 1] for flag in ("--kubeconfig", "--server", "--write-kubeconfig")}
    assert arg["--server"] == "https://k3s:6443"
    # the installer reads the file k3s writes ...
    k3s_dir, _ = volume_target(k3s, "k3s-output")
    k3s_file = k3s["environment"]["K3S_KUBECONFIG_OUTPUT"]
    crds_dir, read_only = volume_target(crds, "k3s-output")
    assert read_only
    assert arg["--kubeconfig"] == crds_dir + k3s_file.removeprefix(k3s_dir)
    # ... and writes the one the reconciler and the API use.
    written_dir, read_only = volume_target(crds, "kubeconfig")
    assert not read_only and arg["--write-kubeconfig"].startswith(written_dir + "/")
    assert crds["restart"] == "no"
    for name in ("operator", "api"):
        service = services[name]
        target, read_only = volume_target(service, "kubeconfig")
        assert read_only, name
        assert service["environment"]["KUBECONFIG"] == target + arg["--write-kubeconfig"].removeprefix(written_dir), name
        assert service["depends_on"] == {"crds": {"condition": "service_completed_successfully"}}, name


def test_project_services_run_the_image_hardened() -> None:
    services = config()["services"]
    images = {services[name]["image"] for name in PROJECT_SERVICES}
    assert len(images) == 1
    for name in PROJECT_SERVICES:
        service = services[name]
        assert service["build"]["dockerfile"] == "deploy/Dockerfile", name
        assert os.path.realpath(service["build"]["context"]) == os.path.realpath(ROOT), name
        assert service["read_only"] is True, name
        assert service["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in service["security_opt"], name
        assert "/tmp" in service["tmpfs"], name
        assert "user" not in service, f"{name}: runs as the image's non-root USER"
        assert not service.get("privileged"), name
    assert services["operator"]["command"] == ["python", "-m", "darkroom_operator"]
    assert services["api"]["command"] == ["gunicorn", "-c", "python:backend.server.gunicorn_conf", "backend.server.wsgi:app"]
    api = services["api"]
    assert api["environment"]["DARKROOM_API_HOST"] == "0.0.0.0"
    assert api["environment"]["PORT"] == "5000"
    (published,) = api["ports"]
    assert published in ("127.0.0.1:5000:5000/tcp", "127.0.0.1:5000:5000"), "dashboard on localhost:5000 only"
    assert not services["operator"].get("ports")


def test_rewrite_server_points_every_cluster_at_the_new_url() -> None:
    kubeconfig: dict[str, Any] = {
        "apiVersion": "v1",
        "clusters": [{"name": "default", "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="}}],
        "users": [{"name": "default", "user": {"client-key-data": "S0VZ"}}],
        "contexts": [{"name": "default", "context": {"cluster": "default", "user": "default"}}],
        "current-context": "default",
    }
    rewritten = crdinstall.rewrite_server(kubeconfig, "https://k3s:6443")
    assert rewritten["clusters"] == [{"name": "default", "cluster": {"server": "https://k3s:6443", "certificate-authority-data": "Q0E="}}]
    assert rewritten["users"] == kubeconfig["users"]
    assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:6443", "the input is not modified"
