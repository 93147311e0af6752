"""Operator settings: one frozen dataclass with documented defaults (units in the names).

Built once in :mod:`darkroom_operator.__main__` from flags and ``DARKROOM_OPERATOR_*`` environment
variables (:meth:`OperatorSettings.from_environ`), then passed explicitly to everything.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from kinds.darkrooms import DEFAULT_VERSION
from kinds.quantities import canonical_quantity

ENV_PREFIX = "DARKROOM_OPERATOR_"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OperatorSettings:
    """Everything the reconciler process can be told.

    Cluster: ``kubeconfig`` (None: KUBECONFIG, ~/.kube/config, then in-cluster); ``namespace``:
    watch one namespace only (None: all namespaces).
    Runtime: ``workers`` reconcile threads; ``resync_s`` period after which every cached primary
    object is reconciled again; ``shutdown_timeout_s`` how long in-flight reconciles may finish.
    Leader election (client-go defaults): ``leader_election`` on/off, Lease
    ``lease_namespace``/``lease_name``, ``identity`` of this replica, ``lease_duration_s`` 15,
    ``renew_deadline_s`` 10, ``retry_period_s`` 2.
    Probes/metrics: ``health_host``/``health_port`` serve ``/healthz``, ``/readyz``, ``/metrics``
    (port 0 picks a free port, -1 disables).
    Darkroom children: ``image_repository`` (image is ``<repository>:v<version>``; an absent
    ``spec.version`` is the CRD default ``kinds.darkrooms.DEFAULT_VERSION``), ``domain`` (hosts are ``<subDomain>.<domain>``),
    ``ingress_class`` and ``tls_secret`` (None: not set on the Ingress), container resources.
    Postgresql children: ``postgres_image`` (image is ``<postgres_image>:<spec.version>``, the
    official image by default).
    Identity on the cluster: ``field_manager`` of every server-side apply, ``managed_by`` the
    ``app.kubernetes.io/managed-by`` label of children, ``component`` the Events' source.
    ``log_level``/``log_json``: logging.
    """

    kubeconfig: Path | None = None
    namespace: str | None = None
    workers: int = 4
    resync_s: float = 300.0
    shutdown_timeout_s: float = 10.0
    leader_election: bool = True
    lease_namespace: str = "default"
    lease_name: str = "darkroom-operator"
    identity: str = ""
    lease_duration_s: float = 15.0
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0
    health_host: str = "127.0.0.1"
    health_port: int = 8081
    image_repository: str = "gojektech/darkroom"
    domain: str = "darkroom.example.com"
    ingress_class: str | None = None
    tls_secret: str | None = None
    cpu_request: str = "100m"
    memory_request: str = "128Mi"
    cpu_limit: str = "1"
    memory_limit: str = "512Mi"
    postgres_image: str = "postgres"
    field_manager: str = "darkroom-operator"
    managed_by: str = "darkroom-operator"
    component: str = "darkroom-operator"
    log_level: str = "INFO"
    log_json: bool = True

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if self.resync_s <= 0:
            raise ValueError("resync_s must be positive")
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
        values: dict[str, Any] = {}
        if ENV_PREFIX + "DEFAULT_VERSION" in environ:
            _log.warning(
                "%sDEFAULT_VERSION is ignored: a Darkroom without spec.version runs the CRD's default (%r), which the"
                " API server fills in so kubectl, the API and the dashboard show the same; patch the CRD to change it",
                ENV_PREFIX,
                DEFAULT_VERSION,
            )
        for f in fields(cls):
            raw = environ.get(ENV_PREFIX + f.name.upper())
            if raw is None:
                continue
            values[f.name] = _parse(f.name, str(f.type), raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def _parse(name: str, type_name: str, raw: str) -> Any:
    try:
        if type_name.startswith("bool"):
            if raw.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(f"expected true/false, got {raw!r}")
            return raw.lower() in ("1", "true", "yes", "on")
        if type_name.startswith("int"):
            return int(raw)
        if type_name.startswith("float"):
            return float(raw)
        if type_name.startswith("Path"):
            return Path(raw) if raw else None
        return raw or None if "None" in type_name else raw
    except ValueError as e:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}: {e}") from e
