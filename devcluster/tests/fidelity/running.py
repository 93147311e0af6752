"""Running one corpus sequence against both servers at once, each in its own namespace of one name.

:func:`run_pair` creates the namespace on both sides, waits until the real cluster's controllers
have settled it (the ``default`` ServiceAccount and the ``kube-root-ca.crt`` ConfigMap exist, so
whether a list sees them does not depend on timing), runs the sequence on both sides in two
threads, and deletes the namespace and any cluster-scoped objects the sequence registered
(without waiting: namespace termination is compared where a sequence asks for it). A sequence
that raises records a ``<crash>`` step, which then shows up as a difference. Used by
``test_corpus.py``.
"""

from __future__ import annotations

import hashlib
import time
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fidelity.corpus import Sequence
from fidelity.transcript import Side, Step
from fidelity.wire import Endpoint

SETTLE_TIMEOUT_S = 20.0


def namespace_for(name: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")[:40].strip("-")
    return f"f-{slug}-{hashlib.sha1(uuid.uuid4().bytes).hexdigest()[:5]}"


def _settle(side: Side) -> None:
    """Wait until the namespace holds what the server's controllers put into every namespace."""
    if side.kind != "real":
        return
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    paths = [f"/api/v1/namespaces/{side.ns}/serviceaccounts/default", f"/api/v1/namespaces/{side.ns}/configmaps/kube-root-ca.crt"]
    while paths and time.monotonic() < deadline:
        paths = [p for p in paths if side.send("GET", p).status != 200]
        if paths:
            time.sleep(0.05)


def run_side(sequence: Sequence, endpoint: Endpoint, namespace: str, cache_dir: Path) -> list[Step]:
    side = Side(endpoint, namespace, cache_dir / endpoint.kind)
    try:
        if sequence.namespaced:
            created = side.send("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
            if created.status != 201:
                raise RuntimeError(f"cannot create namespace {namespace}: {created.status} {created.body[:300]!r}")
            _settle(side)
        sequence.run(side)
    except Exception as e:
        side.steps.append(Step("<crash>", "fact", "", {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}))
    finally:
        for path in side.cleanups:
            side.send("DELETE", path)
        if sequence.namespaced:
            side.send("DELETE", f"/api/v1/namespaces/{namespace}")
    return side.steps


def run_pair(sequence: Sequence, *, kube: Endpoint, dev: Endpoint, cache_dir: Path) -> tuple[list[Step], list[Step]]:
    """Both sides' steps: (kube-apiserver's, devcluster's)."""
    namespace = namespace_for(sequence.name)
    with ThreadPoolExecutor(2, thread_name_prefix="fidelity") as pool:
        kube_run = pool.submit(run_side, sequence, kube, namespace, cache_dir)
        dev_run = pool.submit(run_side, sequence, dev, namespace, cache_dir)
        return kube_run.result(), dev_run.result()
