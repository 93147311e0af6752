"""Test support shared by every suite: a kubectl runner, installing the CRDs, waiting, facts of both clusters.

The cluster subprocesses themselves (:class:`~tests.clusters.DevclusterProcess`, :class:`~tests.clusters.RealclusterProcess`)
are in ``clusters.py`` and their audit logs are read by ``auditlog.py``, both shared with the benchmarks. Imported by
``sharedfixtures.py`` (the fixtures plugin) and by test modules of both trees, tests/ and devcluster/tests
(``from tests.support import wait_for``: the repository root is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from tests.clusters import ROOT

# ConfigMaps a real control plane puts into every namespace (kube-controller-manager's root-CA publisher);
# tests that count a namespace's ConfigMaps leave these out. devcluster publishes none (devcluster/DIFFERENCES.md).
PUBLISHED_CONFIGMAPS = frozenset({"kube-root-ca.crt"})
# Both simulators keep a Deployment or StatefulSet unready while it carries this annotation set to "true": devcluster
# holds its simulated status at 0 available, realcluster's simulated node reports its pods not Ready.
UNREADY_ANNOTATION = "simulation.example.com/unready"
# kube's garbage collector watches a kind only after its discovery resync (every 30 s) has seen it, so
# dependents of an object of a freshly installed CRD may wait that long; devcluster collects at once.
GC_TIMEOUT_S = 60.0


@dataclass
class Kubectl:
    kubeconfig: Path
    cache_dir: Path

    def run(self, *args: str, check: bool = True, input_text: str | None = None, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), *args],
            capture_output=True,
            text=True,
            input=input_text,
            timeout=timeout_s,
            cwd=ROOT,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )


def install_crds(kubeconfig: Path, timeout_s: float = 30.0, *, directory: Path = ROOT / "crds", replace: bool = False) -> None:
    """Create the product's CRDs (crds/*.yaml, or those of ``directory``) in the cluster behind ``kubeconfig`` and wait
    until each is Established, as a real API server serves a new kind only then (idempotent). ``replace``: a CRD that
    exists is replaced by the file's (an upgrade of the CRDs, as ``kubectl apply`` makes it)."""
    import yaml
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        ext = client.ApiextensionsV1Api(api)
        names = []
        for path in sorted(directory.glob("*.yaml")):
            body = yaml.safe_load(path.read_text())
            names.append(body["metadata"]["name"])
            try:
                ext.create_custom_resource_definition(body)
            except client.ApiException as e:
                if e.status != 409:
                    raise
                if replace:
                    current = api.sanitize_for_serialization(ext.read_custom_resource_definition(body["metadata"]["name"]))
                    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                    ext.replace_custom_resource_definition(body["metadata"]["name"], body)

        def established(name: str) -> bool:
            crd = api.sanitize_for_serialization(ext.read_custom_resource_definition(name))
            return any(c["type"] == "Established" and c["status"] == "True" for c in crd.get("status", {}).get("conditions") or [])

        for name in names:
            wait_for(lambda name=name: established(name), timeout_s=timeout_s, message=f"CRD {name} Established")  # type: ignore[misc]
    finally:
        api.close()


def as_dict(answer: object) -> dict[str, Any]:
    """A CustomObjectsApi answer: the client annotates it ``object``; it is the decoded JSON object."""
    assert isinstance(answer, dict), answer
    return answer


_T = TypeVar("_T")


def wait_for(predicate: Callable[[], _T | None], timeout_s: float = 10.0, interval_s: float = 0.05, message: str = "condition") -> _T:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {message}")
        time.sleep(interval_s)


@contextmanager
def bench_module(name: str) -> Iterator[ModuleType]:
    """``bench/<name>.py`` imported the way the benchmarks run (``bench/`` first on ``sys.path``); on exit ``bench/``
    leaves ``sys.path`` and its modules (common, servers, ...) leave ``sys.modules``, so no later import finds them."""
    bench = str(ROOT / "bench")
    before = set(sys.modules)
    sys.path.insert(0, bench)
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(bench)
        for module in set(sys.modules) - before:
            if (getattr(sys.modules[module], "__file__", None) or "").startswith(bench):
                del sys.modules[module]
