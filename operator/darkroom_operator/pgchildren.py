"""The desired children of a Postgresql: password Secret, ConfigMap, Services and StatefulSet (pure functions, no I/O).

Called by :mod:`darkroom_operator.postgresqls` on every reconcile and by the unit tests. Every child
lives in the Postgresql's namespace, carries ``app.kubernetes.io/{name,instance,managed-by}`` and a
controller ownerReference, and is named by :mod:`kinds.postgresqls`.

What improves on seed 003 (a bare Pod on an emptyDir, the password in the spec): a StatefulSet with
the data on a PersistentVolumeClaim (``PGDATA`` below the mount, as the official image asks), the
password only in a Secret read through ``secretKeyRef``, ``pg_isready`` readiness and liveness
probes, a restricted security context (non-root uid 999, fsGroup, no privilege escalation, a
read-only root filesystem with emptyDirs for the socket and /tmp), requests/limits, the user's
allowlisted ``postgresql.conf`` settings from a ConfigMap whose digest rolls the pod, and a
PVC retention policy that follows ``spec.deletionPolicy``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from cluster import POSTGRESQLS
from darkroom_operator.runtime.comparing import digest
from darkroom_operator.runtime.owning import owner_reference
from darkroom_operator.settings import OperatorSettings
from kinds import postgresqls as kind
from kinds.names import INSTANCE_LABEL, MANAGED_BY_LABEL, NAME_LABEL, PRODUCT_MANAGED_BY
from kinds.postgresqls import PostgresqlSpec
from kinds.quantities import canonical_quantity

APP_NAME = "postgresql"
CONTAINER_NAME = "postgres"
PORT_NAME = "postgres"
POSTGRES_UID = 999  # the postgres user of the official image
DATA_MOUNT = "/var/lib/postgresql/data"
PGDATA = f"{DATA_MOUNT}/pgdata"  # a sub-directory: a volume's root may hold lost+found, which initdb refuses
CONFIG_MOUNT = "/etc/postgresql"
CONFIG_FILE = "postgresql.conf"


def _meta(pg: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = pg["metadata"]
    return meta


def spec_of(pg: Mapping[str, Any]) -> PostgresqlSpec:
    """The spec with the CRD's defaults filled in (the API server defaults them; a raw body may not)."""
    spec = cast(PostgresqlSpec, pg.get("spec") or {})
    storage = spec.get("storage") or {}
    return {
        **spec,
        "version": spec.get("version") or kind.DEFAULT_VERSION,
        "databaseName": spec.get("databaseName") or kind.DEFAULT_DATABASE,
        "user": spec.get("user") or kind.DEFAULT_USER,
        "storage": {**storage, "size": storage.get("size") or kind.DEFAULT_STORAGE},
        "deletionPolicy": spec.get("deletionPolicy") or kind.DEFAULT_DELETION_POLICY,
    }


def selector_labels(pg: Mapping[str, Any]) -> dict[str, str]:
    """The labels that select a Postgresql's pods (immutable in a StatefulSet: never include settings)."""
    return {NAME_LABEL: APP_NAME, INSTANCE_LABEL: _meta(pg)["name"]}


def labels(pg: Mapping[str, Any], settings: OperatorSettings) -> dict[str, str]:
    return {**selector_labels(pg), MANAGED_BY_LABEL: settings.managed_by}


def _object_meta(pg: Mapping[str, Any], settings: OperatorSettings, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": _meta(pg)["namespace"],
        "labels": labels(pg, settings),
        "ownerReferences": [owner_reference(pg, POSTGRESQLS)],
    }


def password_secret_ref(pg: Mapping[str, Any]) -> tuple[str, str]:
    """(Secret name, key) the password is read from: the referenced one, else the generated one."""
    ref = spec_of(pg).get("passwordSecretRef") or {}
    if ref.get("name"):
        return str(ref["name"]), str(ref.get("key") or kind.PASSWORD_KEY)
    return kind.password_secret_name(_meta(pg)["name"]), kind.PASSWORD_KEY


def password_secret(pg: Mapping[str, Any], settings: OperatorSettings, password: str) -> dict[str, Any]:
    """The generated-password Secret (created once: the reconciler never rewrites a password).

    Labelled managed-by the product, not the reconciler: the API may later write a user's password
    into it, and its admission policy lets it change only Secrets with that label (kinds.names).
    """
    metadata = _object_meta(pg, settings, kind.password_secret_name(_meta(pg)["name"]))
    metadata["labels"][MANAGED_BY_LABEL] = PRODUCT_MANAGED_BY
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": "Opaque",
        "stringData": {kind.PASSWORD_KEY: password, kind.USERNAME_KEY: spec_of(pg)["user"]},
    }


def config_text(pg: Mapping[str, Any]) -> str:
    """postgresql.conf: listen on every address (the Services route to the pod), then the user's allowlisted settings."""
    lines = ["# Written by the darkroom-operator from spec.parameters; edits are overwritten.", "listen_addresses = '*'"]
    for name, value in sorted((spec_of(pg).get("parameters") or {}).items()):
        lines.append(f"{name} = '{str(value).replace(chr(39), chr(39) * 2)}'")
    return "\n".join(lines) + "\n"


def configmap(pg: Mapping[str, Any], settings: OperatorSettings) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _object_meta(pg, settings, kind.config_map_name(_meta(pg)["name"])),
        "data": {CONFIG_FILE: config_text(pg)},
    }


def _service(pg: Mapping[str, Any], settings: OperatorSettings, name: str, *, headless: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": selector_labels(pg),
        "ports": [{"name": PORT_NAME, "port": kind.PORT, "targetPort": PORT_NAME, "protocol": "TCP"}],
    }
    if headless:
        spec.update({"clusterIP": "None", "publishNotReadyAddresses": True})
    else:
        spec["type"] = "ClusterIP"
    return {"apiVersion": "v1", "kind": "Service", "metadata": _object_meta(pg, settings, name), "spec": spec}


def headless_service(pg: Mapping[str, Any], settings: OperatorSettings) -> dict[str, Any]:
    """The StatefulSet's governing Service: stable DNS names for its pods, ready or not."""
    return _service(pg, settings, kind.headless_service_name(_meta(pg)["name"]), headless=True)


def client_service(pg: Mapping[str, Any], settings: OperatorSettings) -> dict[str, Any]:
    """What clients connect to: ``<name>.<namespace>.svc:5432``, routed to ready pods only."""
    return _service(pg, settings, _meta(pg)["name"], headless=False)


def endpoint(pg: Mapping[str, Any]) -> dict[str, Any]:
    meta = _meta(pg)
    return {"host": f"{meta['name']}.{meta['namespace']}.svc", "port": kind.PORT}


def resources(pg: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The container's requests/limits in canonical form (a converged resync then compares equal)."""
    given = spec_of(pg).get("resources") or {}
    return {
        part: {name: canonical_quantity(str(value)) for name, value in sorted((given.get(part) or {}).items())}
        for part in ("requests", "limits")
        if given.get(part)
    }


def resource_problems(pg: Mapping[str, Any]) -> list[str]:
    """Quantities in spec.resources that are not quantities (the CRD's pattern says so on kube; a raw body may not)."""
    given = spec_of(pg).get("resources") or {}
    problems = []
    for part in ("requests", "limits"):
        for name, value in sorted((given.get(part) or {}).items()):
            try:
                canonical_quantity(str(value))
            except ValueError as e:
                problems.append(f"spec.resources.{part}.{name}: {e}")
    return problems


def config_hash(pg: Mapping[str, Any]) -> str:
    """A digest of what the pod reads only at start (postgresql.conf): a new value changes the template and rolls the pod."""
    return digest(config_text(pg))


def _probe(pg: Mapping[str, Any], **timing: int) -> dict[str, Any]:
    spec = spec_of(pg)
    command = ["pg_isready", "--host", "127.0.0.1", "--port", str(kind.PORT), "--username", spec["user"], "--dbname", spec["databaseName"]]
    return {"exec": {"command": command}, **timing}


def _container(pg: Mapping[str, Any], settings: OperatorSettings) -> dict[str, Any]:
    spec = spec_of(pg)
    secret_name, secret_key = password_secret_ref(pg)
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": f"{settings.postgres_image}:{spec['version']}",
        "args": ["-c", f"config_file={CONFIG_MOUNT}/{CONFIG_FILE}"],
        "ports": [{"name": PORT_NAME, "containerPort": kind.PORT, "protocol": "TCP"}],
        "env": [
            {"name": "POSTGRES_USER", "value": spec["user"]},
            {"name": "POSTGRES_DB", "value": spec["databaseName"]},
            {"name": "POSTGRES_PASSWORD", "valueFrom": {"secretKeyRef": {"name": secret_name, "key": secret_key}}},
            {"name": "PGDATA", "value": PGDATA},
        ],
        "readinessProbe": _probe(pg, periodSeconds=5, timeoutSeconds=3, failureThreshold=3),
        "livenessProbe": _probe(pg, initialDelaySeconds=30, periodSeconds=10, timeoutSeconds=5, failureThreshold=6),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": kind.DATA_VOLUME, "mountPath": DATA_MOUNT},
            {"name": "config", "mountPath": CONFIG_MOUNT, "readOnly": True},
            {"name": "run", "mountPath": "/var/run/postgresql"},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }
    if resources(pg):
        container["resources"] = resources(pg)
    return container


def statefulset(pg: Mapping[str, Any], settings: OperatorSettings, *, storage_size: str | None = None) -> dict[str, Any]:
    """The StatefulSet; ``storage_size`` is the live volumeClaimTemplate's size (immutable once created), if any."""
    meta, spec = _meta(pg), spec_of(pg)
    storage = spec["storage"]
    claim_spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": canonical_quantity(storage_size or storage["size"])}},
    }
    if storage.get("storageClassName"):
        claim_spec["storageClassName"] = storage["storageClassName"]
    retention = "Delete" if spec["deletionPolicy"] == "Delete" else "Retain"
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _object_meta(pg, settings, meta["name"]),
        "spec": {
            "replicas": 1,
            "serviceName": kind.headless_service_name(meta["name"]),
            "selector": {"matchLabels": selector_labels(pg)},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": retention, "whenScaled": "Retain"},
            "template": {
                "metadata": {"labels": labels(pg, settings), "annotations": {kind.CONFIG_HASH_ANNOTATION: config_hash(pg)}},
                "spec": {
                    "automountServiceAccountToken": False,
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": POSTGRES_UID,
                        "runAsGroup": POSTGRES_UID,
                        "fsGroup": POSTGRES_UID,
                        "fsGroupChangePolicy": "OnRootMismatch",
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [_container(pg, settings)],
                    "volumes": [
                        {"name": "config", "configMap": {"name": kind.config_map_name(meta["name"])}},
                        {"name": "run", "emptyDir": {}},
                        {"name": "tmp", "emptyDir": {}},
                    ],
                },
            },
            "volumeClaimTemplates": [
                {"metadata": {"name": kind.DATA_VOLUME, "labels": labels(pg, settings)}, "spec": claim_spec},
            ],
        },
    }
