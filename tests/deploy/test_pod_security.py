"""Every pod the manifests run passes the Pod Security Standard "restricted" (v1.30), plus our own hardening.

Behaviours covered:

- :func:`restricted_violations` implements the checks of the PSS restricted profile (which
  includes baseline): host namespaces, privileged, capabilities (drop ALL, add at most
  NET_BIND_SERVICE), hostPath and the allowed volume types, host ports, AppArmor, SELinux, /proc
  mount, seccomp (RuntimeDefault or Localhost), safe sysctls, allowPrivilegeEscalation false,
  runAsNonRoot, runAsUser not 0, Windows HostProcess;
- each check fires on a pod that breaks it (so a clean result means something);
- every pod template of base, dev and production is clean, and on top: a read-only root
  filesystem, a numeric non-root UID (the image's 10001), and both namespaces (darkroom-system, darkroom-sessions)
  enforce, warn about and audit "restricted".
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from .manifests import NAMESPACE, OVERLAYS, SESSIONS_NAMESPACE, containers, one, pod_templates

ALLOWED_VOLUME_SOURCES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t"}
APPARMOR_OK = ("runtime/default", "localhost/")
SECCOMP_OK = {"RuntimeDefault", "Localhost"}


def restricted_violations(metadata: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    """Why a pod (metadata + spec) fails the PSS "restricted" profile; empty when it passes."""
    pod_sc = spec.get("securityContext") or {}
    problems = _pod_violations(metadata, spec, pod_sc)
    for container in containers(spec):
        problems += _container_violations(container, pod_sc)
    return problems


def _pod_violations(metadata: dict[str, Any], spec: dict[str, Any], pod_sc: dict[str, Any]) -> list[str]:
    """The pod-level checks: baseline (host namespaces, HostProcess, hostPath, sysctls, SELinux, AppArmor) and restricted."""
    problems: list[str] = []
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            problems.append(f"{field} is true")
    if (pod_sc.get("windowsOptions") or {}).get("hostProcess"):
        problems.append("pod windowsOptions.hostProcess is true")
    for volume in spec.get("volumes", []):
        sources = set(volume) - {"name"}
        if "hostPath" in sources:
            problems.append(f"volume {volume['name']} is a hostPath")
        elif not sources <= ALLOWED_VOLUME_SOURCES:
            problems.append(f"volume {volume['name']} has a disallowed type {sorted(sources - ALLOWED_VOLUME_SOURCES)}")
    for sysctl in pod_sc.get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            problems.append(f"sysctl {sysctl['name']} is not in the safe set")
    for key, value in (metadata.get("annotations") or {}).items():
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and not value.startswith(APPARMOR_OK):
            problems.append(f"AppArmor annotation {key}={value}")
    problems += _selinux(pod_sc, "pod") + _apparmor(pod_sc, "pod")

    # restricted: seccomp, runAsUser
    pod_seccomp = (pod_sc.get("seccompProfile") or {}).get("type")
    if pod_seccomp is not None and pod_seccomp not in SECCOMP_OK:
        problems.append(f"pod seccompProfile.type {pod_seccomp}")
    if pod_sc.get("runAsUser") == 0:
        problems.append("pod runAsUser is 0")
    return problems


def _container_violations(container: dict[str, Any], pod_sc: dict[str, Any]) -> list[str]:
    """One container's checks, baseline then restricted (seccomp, runAsNonRoot, runAsUser, allowPrivilegeEscalation, capabilities)."""
    problems: list[str] = []
    where = f"container {container['name']}"
    sc = container.get("securityContext") or {}
    if sc.get("privileged"):
        problems.append(f"{where} is privileged")
    if (sc.get("windowsOptions") or {}).get("hostProcess"):
        problems.append(f"{where} windowsOptions.hostProcess is true")
    if sc.get("procMount", "Default") != "Default":
        problems.append(f"{where} procMount {sc['procMount']}")
    problems += _selinux(sc, where) + _apparmor(sc, where)
    for port in container.get("ports", []):
        if port.get("hostPort"):
            problems.append(f"{where} uses hostPort {port['hostPort']}")
    if sc.get("allowPrivilegeEscalation") is not False:
        problems.append(f"{where} allowPrivilegeEscalation is not false")
    non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
    if non_root is not True:
        problems.append(f"{where} runAsNonRoot is not true (pod or container)")
    if sc.get("runAsUser") == 0:
        problems.append(f"{where} runAsUser is 0")
    seccomp = (sc.get("seccompProfile") or {}).get("type", (pod_sc.get("seccompProfile") or {}).get("type"))
    if seccomp not in SECCOMP_OK:
        problems.append(f"{where} seccompProfile.type is {seccomp} (pod or container must be RuntimeDefault or Localhost)")
    capabilities = sc.get("capabilities") or {}
    if "ALL" not in capabilities.get("drop", []):
        problems.append(f"{where} does not drop ALL capabilities")
    added = set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}
    if added:
        problems.append(f"{where} adds capabilities {sorted(added)}")
    return problems


def _selinux(sc: dict[str, Any], where: str) -> list[str]:
    options = sc.get("seLinuxOptions") or {}
    problems = [f"{where} seLinuxOptions.type {options['type']}"] if options.get("type", "") not in SELINUX_TYPES else []
    return problems + [f"{where} seLinuxOptions.{field} is set" for field in ("user", "role") if options.get(field)]


def _apparmor(sc: dict[str, Any], where: str) -> list[str]:
    profile = sc.get("appArmorProfile") or {}
    return [f"{where} appArmorProfile.type {profile.get('type')}"] if profile and profile.get("type") not in SECCOMP_OK else []


def all_pods(rendered: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    return [(overlay, where, meta, spec) for overlay in OVERLAYS for where, meta, spec in pod_templates(rendered[overlay])]


@pytest.mark.kubectl
def test_every_pod_passes_the_restricted_profile(rendered: dict[str, list[dict[str, Any]]]) -> None:
    pods = all_pods(rendered)
    assert len(pods) == 2 * len(OVERLAYS)
    for overlay, where, meta, spec in pods:
        assert restricted_violations(meta, spec) == [], f"{overlay}: {where}"


@pytest.mark.kubectl
def test_every_container_is_hardened_beyond_the_profile(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for overlay, where, _, spec in all_pods(rendered):
        pod_sc = spec["securityContext"]
        assert pod_sc["runAsNonRoot"] is True and pod_sc["runAsUser"] == 10001 and pod_sc["runAsGroup"] == 10001, where
        assert pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}, where
        for container in containers(spec):
            sc = container["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True, f"{overlay}: {where} {container['name']}"
            assert sc["capabilities"] == {"drop": ["ALL"]}, f"{overlay}: {where} {container['name']}"
            mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
            volumes = {v["name"]: v for v in spec.get("volumes", [])}
            assert "emptyDir" in volumes[mounts["/tmp"]], f"{where}: a writable /tmp on a read-only root filesystem"
        assert spec.get("hostNetwork") is not True


@pytest.mark.kubectl
def test_the_namespaces_enforce_restricted(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for overlay in OVERLAYS:
        for namespace in (NAMESPACE, SESSIONS_NAMESPACE):
            labels = one(rendered[overlay], "Namespace", namespace)["metadata"]["labels"]
            for mode in ("enforce", "warn", "audit"):
                assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted", (overlay, namespace, mode)


GOOD_POD: dict[str, Any] = {
    "securityContext": {"runAsNonRoot": True, "runAsUser": 10001, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "c",
            "image": "i",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}},
        }
    ],
    "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "x"}}],
}


def container_sc(pod: dict[str, Any]) -> dict[str, Any]:
    sc: dict[str, Any] = pod["containers"][0]["securityContext"]
    return sc


BREAKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "hostNetwork": lambda p: p.update(hostNetwork=True),
    "hostPID": lambda p: p.update(hostPID=True),
    "hostIPC": lambda p: p.update(hostIPC=True),
    "hostPath": lambda p: p["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
    "disallowed type": lambda p: p["volumes"].append({"name": "n", "nfs": {"server": "s", "path": "/"}}),
    "hostPort": lambda p: p["containers"][0].update(ports=[{"containerPort": 80, "hostPort": 80}]),
    "privileged": lambda p: container_sc(p).update(privileged=True),
    "allowPrivilegeEscalation": lambda p: container_sc(p).pop("allowPrivilegeEscalation"),
    "runAsNonRoot": lambda p: container_sc(p).update(runAsNonRoot=False),
    "runAsUser is 0": lambda p: container_sc(p).update(runAsUser=0),
    "seccompProfile": lambda p: p["securityContext"].pop("seccompProfile"),
    "pod seccompProfile.type Unconfined": lambda p: p["securityContext"].update(seccompProfile={"type": "Unconfined"}),
    "drop ALL": lambda p: container_sc(p).update(capabilities={"drop": ["NET_RAW"]}),
    "adds capabilities": lambda p: container_sc(p)["capabilities"].update(add=["SYS_ADMIN"]),
    "procMount": lambda p: container_sc(p).update(procMount="Unmasked"),
    "seLinuxOptions.type": lambda p: container_sc(p).update(seLinuxOptions={"type": "spc_t"}),
    "seLinuxOptions.user": lambda p: p["securityContext"].update(seLinuxOptions={"user": "root"}),
    "sysctl": lambda p: p["securityContext"].update(sysctls=[{"name": "kernel.msgmax", "value": "1"}]),
    "appArmorProfile": lambda p: container_sc(p).update(appArmorProfile={"type": "Unconfined"}),
    "hostProcess": lambda p: container_sc(p).update(windowsOptions={"hostProcess": True}),
}


def test_the_checker_accepts_a_compliant_pod() -> None:
    assert restricted_violations({}, copy.deepcopy(GOOD_POD)) == []


@pytest.mark.parametrize("needle", list(BREAKS))
def test_the_checker_flags_each_violation(needle: str) -> None:
    pod = copy.deepcopy(GOOD_POD)
    BREAKS[needle](pod)
    problems = restricted_violations({}, pod)
    assert any(needle in p for p in problems), problems


def test_the_checker_flags_an_unconfined_apparmor_annotation() -> None:
    meta = {"annotations": {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}}
    assert any("AppArmor" in p for p in restricted_violations(meta, copy.deepcopy(GOOD_POD)))
