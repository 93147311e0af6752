"""The kopf peer of bench/reconcile.py: a minimal Darkroom operator written the way a kopf user would write it.

Started only by ``bench/reconcile.py`` (never by the product or the tests)::

    KUBECONFIG=... .venv/bin/python -m kopf run --standalone --namespace NS --quiet bench/peers/kopf_darkroom.py

The kubeconfig may be devcluster's (plain HTTP) or the real control plane's (HTTPS, CA data, a
bearer token): kopf logs in from it through the official client (``kopf.login_via_client``, its
default when ``kubernetes`` is installed), and :func:`configure` loads it the same way.

It does the same work as ``darkroom_operator`` for a Darkroom, so the benchmark compares runtimes,
not features:

* ``@kopf.on.create`` / ``on.update`` / ``on.resume`` on Darkrooms: server-side apply (field manager
  ``kopf-peer``, force) of the SAME four child bodies the reconciler applies — the pure builders of
  :mod:`darkroom_operator.darkroomchildren` (ConfigMap, Deployment, Service, Ingress; labels, controller
  ownerReferences, config hash) — then ``status.domains`` and ``status.observedGeneration`` through
  kopf's ``patch`` (kopf sends it to the status subresource when the handler returns), only when
  they differ.
* ``@kopf.on.event`` on Deployments labelled ``app.kubernetes.io/managed-by=kopf-peer``: the
  Deployment's readiness (the reconciler's own pure :func:`darkroom_operator.readiness.readiness`:
  available and up to date) becomes the owner's ``Ready`` condition and ``status.readyReplicas``
  (JSON merge patch of the status subresource), and a Normal ``Ready`` Event when it turns True
  (the reconciler records the same one). ``on.event`` rather than ``on.field`` because
  ``on.field`` would store a diff base annotation on every Deployment (a write per change). This
  handler is the only writer of ``conditions``, so the last Deployment event always wins (no lost
  update between the two handlers). It skips the write when the Darkroom already says the same
  (status and readyReplicas), looked up in a ``@kopf.index`` of the Darkrooms' readiness (kopf
  fills indexes before any handler runs) and in the Deployment's per-object ``memo``.

Settings a kopf user would pick for this: Event posting only from WARNING up (kopf would otherwise
post an Event per successful handler run: ~3 per Darkroom); progress and diff base in annotations
(the CRD declares its status, so kopf's default ``status.kopf`` storage would be pruned); sync
handlers on the official ``kubernetes`` client in kopf's thread pool of ``KOPF_PEER_WORKERS``
threads (default 4, the reconciler's default workers). Two deliberate speed-ups over the plainest
code: responses are read but not deserialized into the client's model classes
(``_preload_content=False``), and the client is warmed up at startup (:func:`warm_up`).

kopf has no periodic resync: level-triggered re-handling of existing objects happens only at
startup (``on.resume``), where this operator re-applies all four children of every Darkroom
(4 no-op writes each). bench/reconcile.py measures that as kopf's resync equivalent.

Instrumentation for the benchmark only: with ``KOPF_PEER_STATS=FILE`` a thread writes the handler
counters as JSON to FILE every 0.2 s (atomic rename).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import kopf
import kubernetes

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "operator"))

from darkroom_operator import darkroomchildren  # noqa: E402  (the reconciler's pure child builders: identical bodies)
from darkroom_operator.readiness import readiness  # noqa: E402  (the reconciler's Ready decision)
from darkroom_operator.settings import OperatorSettings  # noqa: E402

from kinds.names import MANAGED_BY_LABEL  # noqa: E402

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"
MANAGER = "kopf-peer"
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
SETTINGS = OperatorSettings(field_manager=MANAGER, managed_by=MANAGER, leader_election=False, identity=MANAGER)

_counts = {"darkroom_handler": 0, "deployment_handler": 0, "writes": 0}
_counts_lock = threading.Lock()
_api: kubernetes.client.ApiClient | None = None


def count(name: str, n: int = 1) -> None:
    with _counts_lock:
        _counts[name] += n


def api() -> kubernetes.client.ApiClient:
    assert _api is not None, "startup handler did not run"
    return _api


def _dump_stats(path: Path, stop: threading.Event) -> None:
    tmp = path.with_suffix(".tmp")
    while True:
        with _counts_lock:
            data = json.dumps(_counts)
        tmp.write_text(data)
        tmp.replace(path)
        if stop.wait(0.2):
            return


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    global _api
    workers = int(os.environ.get("KOPF_PEER_WORKERS", "4"))
    settings.posting.level = logging.WARNING
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="kopf-peer.example.com")
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix="kopf-peer.example.com")
    settings.execution.max_workers = workers
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(client_configuration=configuration)
    configuration.connection_pool_maxsize = workers + 2
    _api = kubernetes.client.ApiClient(configuration)
    _api.user_agent = "kopf-peer/1"
    warm_up()
    stats = os.environ.get("KOPF_PEER_STATS")
    if stats:
        memo.stats_stop = threading.Event()
        threading.Thread(target=_dump_stats, args=(Path(stats), memo.stats_stop), daemon=True, name="kopf-peer-stats").start()


def warm_up() -> None:
    """Call every client method the handlers use once (dry run, in a namespace that does not exist: 404).

    The official client (v30+) builds each method's pydantic validator on its first call, ~0.4 s
    per method — a one-time cost a long-running operator paid long ago. Without this the first
    Darkrooms of the benchmark would wait ~2 s for it; the reconciler has no such cost.
    """
    core, apps, networking = (
        kubernetes.client.CoreV1Api(api()),
        kubernetes.client.AppsV1Api(api()),
        kubernetes.client.NetworkingV1Api(api()),
    )
    options: dict[str, Any] = {"field_manager": MANAGER, "force": True, "_content_type": APPLY, "_preload_content": False, "dry_run": "All"}
    body = {"metadata": {"name": "warm-up"}}
    ns = "kopf-peer-warm-up"
    calls = [
        lambda: core.patch_namespaced_config_map("warm-up", ns, body, **options),
        lambda: apps.patch_namespaced_deployment("warm-up", ns, body, **options),
        lambda: core.patch_namespaced_service("warm-up", ns, body, **options),
        lambda: networking.patch_namespaced_ingress("warm-up", ns, body, **options),
        lambda: kubernetes.client.CustomObjectsApi(api()).patch_namespaced_custom_object_status(
            GROUP, VERSION, ns, PLURAL, "warm-up", {"status": {}}, _content_type=MERGE, _preload_content=False, dry_run="All"
        ),
    ]
    for call in calls:
        with contextlib.suppress(kubernetes.client.ApiException):
            _drain(call())


@kopf.on.cleanup()
def cleanup(memo: kopf.Memo, **_: Any) -> None:
    if "stats_stop" in memo:
        memo.stats_stop.set()
    if _api is not None:
        _api.close()


def _drain(response: Any) -> None:
    """Read and release a ``_preload_content=False`` response (errors were raised by the client already)."""
    response.read()
    response.release_conn()


def apply_children(darkroom: Mapping[str, Any], namespace: str, name: str) -> None:
    core, apps, networking = (
        kubernetes.client.CoreV1Api(api()),
        kubernetes.client.AppsV1Api(api()),
        kubernetes.client.NetworkingV1Api(api()),
    )
    options: dict[str, Any] = {"field_manager": MANAGER, "force": True, "_content_type": APPLY, "_preload_content": False}
    _drain(core.patch_namespaced_config_map(name, namespace, darkroomchildren.configmap(darkroom, SETTINGS), **options))
    _drain(apps.patch_namespaced_deployment(name, namespace, darkroomchildren.deployment(darkroom, SETTINGS), **options))
    _drain(core.patch_namespaced_service(name, namespace, darkroomchildren.service(darkroom, SETTINGS), **options))
    _drain(networking.patch_namespaced_ingress(name, namespace, darkroomchildren.ingress(darkroom, SETTINGS), **options))
    count("writes", 4)


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL)
def reconcile_darkroom(body: kopf.Body, name: str, namespace: str | None, status: kopf.Status, patch: kopf.Patch, **_: Any) -> None:
    count("darkroom_handler")
    assert namespace is not None, "Darkrooms are namespaced"
    darkroom = {"apiVersion": body["apiVersion"], "kind": body["kind"], "metadata": dict(body.metadata), "spec": dict(body.spec)}
    problems = darkroomchildren.validate(darkroom)
    if problems:
        raise kopf.PermanentError("; ".join(problems))
    apply_children(darkroom, namespace, name)
    domains = darkroomchildren.hosts(darkroom, SETTINGS)
    if status.get("domains") != domains:
        patch.status["domains"] = domains
    if status.get("observedGeneration") != body.metadata.get("generation"):
        patch.status["observedGeneration"] = body.metadata.get("generation")
    if patch:
        count("writes")


@kopf.index(GROUP, VERSION, PLURAL)
def darkroom_readiness(namespace: str | None, name: str, status: kopf.Status, **_: Any) -> dict[tuple[str | None, str], tuple[str, int]]:
    ready = next((c.get("status") for c in status.get("conditions", ()) if c.get("type") == "Ready"), "")
    return {(namespace, name): (ready, int(status.get("readyReplicas") or 0))}


@kopf.on.event("apps", "v1", "deployments", labels={MANAGED_BY_LABEL: MANAGER})  # type: ignore[arg-type]  # index kwarg
def deployment_changed(
    event: kopf.RawEvent, body: kopf.Body, namespace: str | None, memo: Any, darkroom_readiness: kopf.Index[Any, Any], **_: Any
) -> None:
    count("deployment_handler")
    if event.get("type") == "DELETED" or namespace is None:
        return
    ref = next((o for o in body.metadata.get("ownerReferences", ()) if o.get("kind") == "Darkroom" and o.get("controller")), None)
    if ref is None:
        return
    owner, owner_uid = ref["name"], ref["uid"]
    condition = readiness(body, observed_generation=None)
    ready_replicas = int((body.get("status") or {}).get("readyReplicas") or 0)
    wanted = (condition["status"], ready_replicas)
    known = memo.get("written") or next(iter(darkroom_readiness.get((namespace, owner), ())), None)
    if known == wanted:
        return
    # Simplification: the transition time is "now" even when only readyReplicas changed.
    condition["lastTransitionTime"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    custom = kubernetes.client.CustomObjectsApi(api())
    try:
        response = custom.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            namespace,
            PLURAL,
            owner,
            {"status": {"conditions": [condition], "readyReplicas": ready_replicas}},
            _content_type=MERGE,
            _preload_content=False,
        )
    except kubernetes.client.ApiException as e:
        if e.status == 404:  # the Darkroom is gone; garbage collection removes the Deployment
            return
        raise
    _drain(response)
    count("writes")
    if condition["status"] == "True" and (known or ("",))[0] != "True":
        darkroom = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Darkroom",
            "metadata": {"namespace": namespace, "name": owner, "uid": owner_uid},
        }
        kopf.event(cast(kopf.Body, darkroom), type="Normal", reason="Ready", message=condition["message"])
        count("writes")
    memo.written = wanted
