"""Entry point: ``python -m darkroom_operator [--kubeconfig F] [--namespace NS] [--workers N] ...`` (``make operator``).

Builds :class:`~darkroom_operator.settings.OperatorSettings` from ``DARKROOM_OPERATOR_*`` variables
and flags (flags win), configures logging, connects (:func:`cluster.connect`, user agent
``darkroom-operator/<version>`` so audit logs tell us apart), wires cache → cached client →
:class:`~darkroom_operator.runtime.reconciling.Context` → the Darkroom and Task reconcilers →
:class:`~darkroom_operator.runtime.controllers.Controllers` → :class:`~darkroom_operator.runtime.running.Operator`,
prints ``darkroom-operator: health on http://HOST:PORT`` (tests and humans read it) and runs until
SIGTERM/SIGINT (exit 0) or a lost Lease (exit 1). Bad flags/settings, no reachable cluster or a
missing Lease namespace exit 2 with one clear line on stderr.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import Any

import envsettings
from envsettings.startup import skip_kubernetes_validate

if __name__ == "__main__":
    skip_kubernetes_validate()  # before the official client's package is imported (below)

from cluster import (
    LEASES,
    AlreadyExists,
    Cache,
    CachedClient,
    ClientSettings,
    ClusterError,
    ConnectionSettings,
    Forbidden,
    InformerSettings,
    NotFound,
)
from cluster import connect as connect_cluster
from darkroom_operator import __version__
from darkroom_operator.darkrooms import DarkroomReconciler
from darkroom_operator.postgresqls import PostgresqlReconciler
from darkroom_operator.runtime import logs
from darkroom_operator.runtime.controllers import Controllers
from darkroom_operator.runtime.metrics import Metrics
from darkroom_operator.runtime.reconciling import Context, Reconciler
from darkroom_operator.runtime.recording import EventRecorder
from darkroom_operator.runtime.running import Operator
from darkroom_operator.settings import OperatorSettings
from darkroom_operator.tasks import TaskReconciler

log = logging.getLogger("darkroom_operator")

EXIT_USAGE = 2
USER_AGENT = f"darkroom-operator/{__version__}"
# The garbage collector's thresholds for the operator process (Python's default is (700, 10, 10)). The cache holds
# millions of container objects at 10,000 Darkrooms, which a full collection walks, and every watch event allocates
# thousands; almost all of it is freed by reference counting, not by the collector. Collecting the youngest objects
# every 50,000 allocations instead of 700 takes the collector's CPU from 0.29 to 0.06 ms per Darkroom at 3,000
# Darkrooms (docs/performance.md, "Operator CPU per Darkroom"); what is left for it — reference cycles, rare here —
# waits a little longer.
GC_THRESHOLDS = (50_000, 20, 20)


FLAGS = (
    "kubeconfig",
    "namespace",
    "workers",
    "resync_s",
    "shutdown_timeout_s",
    "leader_election",
    "lease_namespace",
    "lease_name",
    "identity",
    "lease_duration_s",
    "renew_deadline_s",
    "retry_period_s",
    "health_host",
    "health_port",
    "image_repository",
    "domain",
    "ingress_class",
    "tls_secret",
    "log_level",
)
"""The settings with a flag (``--resync-s`` for ``resync_s``; help from the field's doc). The children's resources, the
Postgresql image and our names on the cluster are set by their variables only; ``log_json`` is ``--log-format``."""


def parse_args(argv: Sequence[str] | None) -> dict[str, Any]:
    """Flags as :class:`OperatorSettings` overrides (None: not given, the environment or default applies)."""
    p = argparse.ArgumentParser(prog="python -m darkroom_operator", description="The Darkroom Control Panel reconciler.")
    envsettings.add_flags(p, OperatorSettings, FLAGS)
    p.add_argument(
        "--log-format", choices=("json", "text"), help="Log lines as JSON or text (env DARKROOM_OPERATOR_LOG_JSON, default json)"
    )
    ns = vars(p.parse_args(argv))
    log_format = ns.pop("log_format")
    ns["log_json"] = None if log_format is None else log_format == "json"
    return ns


def build_reconcilers(context: Context) -> list[Reconciler]:
    return [DarkroomReconciler(context), TaskReconciler(context), PostgresqlReconciler(context)]


def _fail(message: str) -> int:
    print(f"darkroom-operator: {message}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def check_lease_namespace(client: CachedClient, settings: OperatorSettings) -> str | None:
    """Why the Lease cannot live where configured (None: fine, or we may not look).

    A dry-run create of the Lease asks with the permission the elector needs anyway (no namespace
    read): the API server answers 404 for the *namespace* when it does not exist, 409 when the Lease
    exists, and writes nothing either way.
    """
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": settings.lease_name, "namespace": settings.lease_namespace},
    }
    try:
        client.create(LEASES, lease, dry_run=True)
    except NotFound as e:
        if (e.body.get("details") or {}).get("kind") == "namespaces":
            return (
                f"the leader Lease namespace {settings.lease_namespace!r} does not exist: create it, "
                "pass --lease-namespace NS, or run a single replica with --no-leader-election"
            )
    except (AlreadyExists, Forbidden):
        pass  # the Lease exists; or RBAC lets us not create it (the elector then reports its failures)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings = OperatorSettings.from_environ(os.environ, **parse_args(argv))
        logs.configure(level=settings.log_level, json_lines=settings.log_json)
    except ValueError as e:
        return _fail(f"bad settings: {e}")
    try:
        connection = connect_cluster(ConnectionSettings(kubeconfig=settings.kubeconfig), environ=os.environ)
    except ClusterError as e:
        log.error("no cluster", extra={"error": e.message})
        return _fail(e.message)
    connection.api_client.user_agent = USER_AGENT
    log.info(
        "starting",
        extra={
            "version": __version__,
            "cluster": connection.source,
            "server": connection.server,
            "namespace": settings.namespace or "(all)",
        },
    )
    cache = Cache(transport=connection.transport, settings=InformerSettings())
    client = CachedClient(
        transport=connection.transport, cache=cache, settings=ClientSettings(field_manager=settings.field_manager), echoes=True
    )
    if settings.leader_election:
        problem = check_lease_namespace(client, settings)
        if problem:
            log.error("cannot campaign for the leader Lease", extra={"error": problem})
            connection.close()
            return _fail(problem)
    context = Context(
        client=client, recorder=EventRecorder(client=client, settings=settings), settings=settings, now=lambda: datetime.now(UTC)
    )
    metrics = Metrics()
    try:
        controllers = Controllers(
            reconcilers=build_reconcilers(context), cache=cache, settings=settings, metrics=metrics, echo=context.client.is_echo
        )
        operator = Operator(settings=settings, api_client=connection.api_client, cache=cache, controllers=controllers, metrics=metrics)
    except (ValueError, OSError) as e:  # e.g. lease timings the election refuses, the health port taken
        log.error("cannot start", extra={"error": str(e)})
        connection.close()
        return _fail(f"cannot start: {e}")

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if operator.stopping:
            return
        log.info("signal received, shutting down", extra={"signal": signal.Signals(signum).name})
        operator.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    url = operator.serve()
    print(f"darkroom-operator: health on {url}" if url else "darkroom-operator: health server disabled", flush=True)
    try:
        return operator.run()
    finally:
        connection.close()


if __name__ == "__main__":
    gc.set_threshold(*GC_THRESHOLDS)  # the process's, not an importer's (tests call main() in theirs)
    sys.exit(main())
