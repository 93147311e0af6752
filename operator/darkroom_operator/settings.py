"""Operator settings: one frozen dataclass with documented defaults (units in the names).

Built once in :mod:`darkroom_operator.__main__` from flags and ``DARKROOM_OPERATOR_*`` environment
variables (:meth:`OperatorSettings.from_environ`), then passed explicitly to everything.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import envsettings
from envsettings import variable
from kinds.darkrooms import DEFAULT_VERSION
from kinds.quantities import canonical_quantity

ENV_PREFIX = "DARKROOM_OPERATOR_"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OperatorSettings:
    """Everything the reconciler process can be told; each field's variable (``DARKROOM_OPERATOR_<FIELD>``) and
    meaning are in its metadata (:func:`envsettings.variable`). Groups: the cluster, the runtime (workers, resync,
    shutdown), leader election (client-go's timings), probes/metrics, Darkroom and Postgresql children, our identity
    on the cluster (field manager, managed-by label, Events' source) and logging.
    """

    kubeconfig: Path | None = field(
        default=None,
        metadata=variable(f"{ENV_PREFIX}KUBECONFIG", doc="Cluster credentials (unset: KUBECONFIG, ~/.kube/config, then in-cluster)."),
    )
    namespace: str | None = field(
        default=None, metadata=variable(f"{ENV_PREFIX}NAMESPACE", doc="Watch one namespace only (unset: all namespaces).")
    )
    workers: int = field(default=4, metadata=variable(f"{ENV_PREFIX}WORKERS", doc="Reconcile threads per controller."))
    resync_s: float = field(
        default=300.0, metadata=variable(f"{ENV_PREFIX}RESYNC_S", doc="Period after which every cached primary object is reconciled again.")
    )
    shutdown_timeout_s: float = field(
        default=10.0, metadata=variable(f"{ENV_PREFIX}SHUTDOWN_TIMEOUT_S", doc="How long in-flight reconciles may finish on shutdown.")
    )
    leader_election: bool = field(
        default=True, metadata=variable(f"{ENV_PREFIX}LEADER_ELECTION", doc="Leader election on/off (off: run a single replica).")
    )
    lease_namespace: str = field(
        default="default", metadata=variable(f"{ENV_PREFIX}LEASE_NAMESPACE", doc="The leader Lease's namespace (it must exist).")
    )
    lease_name: str = field(default="darkroom-operator", metadata=variable(f"{ENV_PREFIX}LEASE_NAME", doc="The leader Lease's name."))
    identity: str = field(
        default="", metadata=variable(f"{ENV_PREFIX}IDENTITY", doc="Identity of this replica in the Lease (empty: hostname-pid).")
    )
    lease_duration_s: float = field(
        default=15.0,
        metadata=variable(f"{ENV_PREFIX}LEASE_DURATION_S", doc="How long a Lease holds without renewal (client-go default 15)."),
    )
    renew_deadline_s: float = field(
        default=10.0,
        metadata=variable(
            f"{ENV_PREFIX}RENEW_DEADLINE_S", doc="How long the leader retries renewing before it steps down (client-go default 10)."
        ),
    )
    retry_period_s: float = field(
        default=2.0, metadata=variable(f"{ENV_PREFIX}RETRY_PERIOD_S", doc="Between acquire/renew attempts (client-go default 2).")
    )
    health_host: str = field(
        default="127.0.0.1", metadata=variable(f"{ENV_PREFIX}HEALTH_HOST", doc="Address of /healthz, /readyz and /metrics.")
    )
    health_port: int = field(
        default=8081,
        metadata=variable(f"{ENV_PREFIX}HEALTH_PORT", doc="Port of /healthz, /readyz and /metrics (0 picks a free port, -1 disables)."),
    )
    image_repository: str = field(
        default="gojektech/darkroom",
        metadata=variable(
            f"{ENV_PREFIX}IMAGE_REPOSITORY",
            doc="Darkroom image repository: the image is <repository>:v<version> (an absent spec.version is the CRD"
            " default, kinds.darkrooms.DEFAULT_VERSION).",
        ),
    )
    domain: str = field(
        default="darkroom.example.com", metadata=variable(f"{ENV_PREFIX}DOMAIN", doc="Darkroom hosts are <subDomain>.<domain>.")
    )
    ingress_class: str | None = field(
        default=None, metadata=variable(f"{ENV_PREFIX}INGRESS_CLASS", doc="The Ingress class (unset: none on the Ingress).")
    )
    tls_secret: str | None = field(
        default=None, metadata=variable(f"{ENV_PREFIX}TLS_SECRET", doc="The Ingress's TLS secret (unset: none).")
    )
    cpu_request: str = field(
        default="100m", metadata=variable(f"{ENV_PREFIX}CPU_REQUEST", doc="Darkroom container CPU request (a Kubernetes quantity).")
    )
    memory_request: str = field(
        default="128Mi", metadata=variable(f"{ENV_PREFIX}MEMORY_REQUEST", doc="Darkroom container memory request (a Kubernetes quantity).")
    )
    cpu_limit: str = field(
        default="1", metadata=variable(f"{ENV_PREFIX}CPU_LIMIT", doc="Darkroom container CPU limit (a Kubernetes quantity).")
    )
    memory_limit: str = field(
        default="512Mi", metadata=variable(f"{ENV_PREFIX}MEMORY_LIMIT", doc="Darkroom container memory limit (a Kubernetes quantity).")
    )
    postgres_image: str = field(
        default="postgres",
        metadata=variable(
            f"{ENV_PREFIX}POSTGRES_IMAGE", doc="Postgresql image: <postgres_image>:<spec.version> (the official image by default)."
        ),
    )
    unfinished_create_grace_s: float = field(
        default=120.0,
        metadata=variable(
            f"{ENV_PREFIX}UNFINISHED_CREATE_GRACE_S",
            doc="How long an object whose create the API never finished (the API server went away between its writes)"
            " waits for a client's retry before it is removed (darkroom_operator.unfinished).",
        ),
    )
    field_manager: str = field(
        default="darkroom-operator", metadata=variable(f"{ENV_PREFIX}FIELD_MANAGER", doc="The field manager of every server-side apply.")
    )
    managed_by: str = field(
        default="darkroom-operator", metadata=variable(f"{ENV_PREFIX}MANAGED_BY", doc="The app.kubernetes.io/managed-by label of children.")
    )
    component: str = field(default="darkroom-operator", metadata=variable(f"{ENV_PREFIX}COMPONENT", doc="The Events' source component."))
    log_level: str = field(default="INFO", metadata=variable(f"{ENV_PREFIX}LOG_LEVEL", doc="Logging level (DEBUG, INFO, WARNING, ERROR)."))
    log_json: bool = field(default=True, metadata=variable(f"{ENV_PREFIX}LOG_JSON", doc="Log JSON lines (false: plain text)."))

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if self.resync_s <= 0:
            raise ValueError("resync_s must be positive")
        if self.unfinished_create_grace_s <= 0:
            raise ValueError("unfinished_create_grace_s must be positive")
        if not self.lease_duration_s > self.renew_deadline_s > self.retry_period_s > 0:
            raise ValueError("need lease_duration_s > renew_deadline_s > retry_period_s > 0")
        for name in ("cpu_request", "memory_request", "cpu_limit", "memory_limit"):
            try:
                object.__setattr__(self, name, canonical_quantity(getattr(self, name)))
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from e
        if not self.identity:
            object.__setattr__(self, "identity", f"{socket.gethostname()}-{os.getpid()}")

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], **overrides: Any) -> OperatorSettings:
        """Settings from ``DARKROOM_OPERATOR_<FIELD>`` variables (e.g. ``DARKROOM_OPERATOR_WORKERS=8``), then ``overrides``."""
        if ENV_PREFIX + "DEFAULT_VERSION" in environ:
            _log.warning(
                "%sDEFAULT_VERSION is ignored: a Darkroom without spec.version runs the CRD's default (%r), which the"
                " API server fills in so kubectl, the API and the dashboard show the same; patch the CRD to change it",
                ENV_PREFIX,
                DEFAULT_VERSION,
            )
        return envsettings.from_environ(cls, environ, **overrides)
