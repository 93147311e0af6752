"""The desired children of a Darkroom: ConfigMap, Deployment, Service and Ingress bodies (pure functions, no I/O).

Called by :mod:`darkroom_operator.darkrooms` on every reconcile and by the unit tests. Every child
is named after the Darkroom, lives in its namespace, carries the labels
``app.kubernetes.io/{name,instance,managed-by}`` and a controller ownerReference (with
``blockOwnerDeletion``) so garbage collection removes it with the Darkroom. The bodies are what we
server-side apply: only the fields we own, nothing the server defaults.

What improves on the seed operator: the image follows ``spec.version`` (``<repository>:v<version>``;
the spec is never written back); the pod template carries a hash of the configuration so a
config change rolls the pods; S3 works, with credentials only through ``secretKeyRef`` env vars
(the operator never reads the Secret); no ``DEBUG=true``, ``LOG_LEVEL=info``; probes, resources, a
restricted security context and no service-account token.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from darkroom_operator.runtime.comparing import digest
from darkroom_operator.settings import OperatorSettings
from kinds import darkrooms as darkroom_kind
from kinds.darkrooms import CONFIG_HASH_ANNOTATION, DEFAULT_CACHE_TIME_S, DarkroomSource, DarkroomSpec
from kinds.names import INSTANCE_LABEL, MANAGED_BY_LABEL, NAME_LABEL
from kinds.quantities import canonical_quantity

APP_NAME = "darkroom"
CONTAINER_NAME = "darkroom"
CONTAINER_PORT = 3000
PORT_NAME = "http"
SERVICE_PORT = 80
HEALTH_PATH = "/ping"
ACCESS_KEY_ENV, SECRET_KEY_ENV = "SOURCE_BUCKET_ACCESSKEY", "SOURCE_BUCKET_SECRETKEY"
ACCESS_KEY, SECRET_KEY = "accessKey", "secretKey"
# The unprivileged uid/gid the container runs as: "nobody", so runAsNonRoot holds even for an image built to run as root.
RUN_AS_ID = 65534

# The circuit-breaker settings of the seed operator (Darkroom's SOURCE_HYSTRIX_* environment).
HYSTRIX_DEFAULTS = {
    "SOURCE_HYSTRIX_TIMEOUT": "5000",
    "SOURCE_HYSTRIX_MAXCONCURRENTREQUESTS": "100",
    "SOURCE_HYSTRIX_REQUESTVOLUMETHRESHOLD": "10",
    "SOURCE_HYSTRIX_SLEEPWINDOW": "10",
    "SOURCE_HYSTRIX_ERRORPERCENTTHRESHOLD": "25",
}

Body = dict[str, Any]


def _meta(darkroom: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = darkroom["metadata"]
    return meta


def _spec(darkroom: Mapping[str, Any]) -> DarkroomSpec:
    """The spec, typed (the API server checked it against the CRD)."""
    return cast(DarkroomSpec, darkroom.get("spec") or {})


def _source(darkroom: Mapping[str, Any]) -> DarkroomSource:
    return _spec(darkroom).get("source") or DarkroomSource()


def selector_labels(darkroom: Mapping[str, Any]) -> dict[str, str]:
    """The labels that select a Darkroom's pods (immutable in a Deployment: never include settings)."""
    return {NAME_LABEL: APP_NAME, INSTANCE_LABEL: _meta(darkroom)["name"]}


def labels(darkroom: Mapping[str, Any], settings: OperatorSettings) -> dict[str, str]:
    return {**selector_labels(darkroom), MANAGED_BY_LABEL: settings.managed_by}


def owner_reference(darkroom: Mapping[str, Any]) -> dict[str, Any]:
    """The controller reference to ``darkroom`` at the version the product speaks (:data:`kinds.darkrooms.VERSION`):
    children a release before v1 made name ``v1alpha1``; the first reconcile after the upgrade moves them to v1 (one
    apply each), so a later release may stop serving v1alpha1 without leaving the garbage collector a reference it
    cannot resolve."""
    meta = _meta(darkroom)
    return {
        "apiVersion": darkroom_kind.GROUP_VERSION,
        "kind": darkroom_kind.KIND,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _object_meta(darkroom: Mapping[str, Any], settings: OperatorSettings) -> dict[str, Any]:
    meta = _meta(darkroom)
    return {
        "name": meta["name"],
        "namespace": meta["namespace"],
        "labels": labels(darkroom, settings),
        "ownerReferences": [owner_reference(darkroom)],
    }


def validate(darkroom: Mapping[str, Any]) -> list[str]:
    """What the CRD schema cannot say about a spec; empty when the spec is usable. Messages name the field."""
    problems = darkroom_kind.source_problems(_source(darkroom), essential_only=True)
    return [f"spec.source.{field}: {message}" for field, messages in problems.items() for message in messages]


def image_tag(version: str | None) -> str:
    """The image tag for ``spec.version``.

    ``0.4.2`` and ``v0.4.2`` both give ``v0.4.2`` (Darkroom's release tags); a tag that does not
    start with a digit (``latest``, ``v0.4.2``, ``main``) is used as is; empty or absent gives
    the CRD's default (``kinds.darkrooms.DEFAULT_VERSION``, which the API server fills in anyway).
    """
    tag = (version or "").strip() or darkroom_kind.DEFAULT_VERSION
    return f"v{tag}" if tag[:1].isdigit() else tag


def image(darkroom: Mapping[str, Any], settings: OperatorSettings) -> str:
    return f"{settings.image_repository}:{image_tag(_spec(darkroom).get('version'))}"


def hosts(darkroom: Mapping[str, Any], settings: OperatorSettings) -> list[str]:
    """``<subDomain>.<domain>`` for every sub-domain, in spec order."""
    return [f"{sub}.{settings.domain}" for sub in _spec(darkroom).get("subDomains") or ()]


def credentials_secret(darkroom: Mapping[str, Any]) -> str | None:
    """The name of the S3 credentials Secret, for an S3 source that references one."""
    source = _source(darkroom)
    if source.get("type") != darkroom_kind.S3.type:
        return None
    return (source.get("credentialsSecretRef") or {}).get("name") or None


def config_data(darkroom: Mapping[str, Any], settings: OperatorSettings) -> dict[str, str]:
    """The Darkroom image proxy's environment (everything but the credentials)."""
    spec, source = _spec(darkroom), _source(darkroom)
    kind = str(source.get("type", ""))
    data = {
        "APP_NAME": _meta(darkroom)["name"],
        "APP_VERSION": image_tag(spec.get("version")),
        "APP_DESCRIPTION": "A realtime image processing service",
        "PORT": str(CONTAINER_PORT),
        "LOG_LEVEL": "info",
        "METRICS_SYSTEM": "prometheus",
        "CACHE_TIME": str(spec.get("cacheTime", DEFAULT_CACHE_TIME_S)),
        "SOURCE_KIND": kind,
        "SOURCE_HYSTRIX_COMMANDNAME": f"{kind}_ADAPTER",
        **HYSTRIX_DEFAULTS,
    }
    if kind == darkroom_kind.WEBFOLDER.type:
        data["SOURCE_BASEURL"] = str(source.get("baseUrl", ""))
    elif kind == darkroom_kind.S3.type:
        bucket = {"SOURCE_BUCKET_NAME": source.get("bucket"), "SOURCE_BUCKET_REGION": source.get("region")}
        for key, value in {**bucket, "SOURCE_BUCKET_ENDPOINT": source.get("endpoint")}.items():
            if value:
                data[key] = str(value)
    if source.get("pathPrefix"):
        data["SOURCE_PATHPREFIX"] = str(source["pathPrefix"])
    return data


def config_hash(darkroom: Mapping[str, Any], settings: OperatorSettings) -> str:
    """A digest of the configuration the pods start with (ConfigMap data and the credentials Secret's name).

    It goes into a pod-template annotation: a new value changes the template and rolls the pods,
    because envFrom is read only when a container starts. (The Secret's *contents* are not part of
    it: the operator never reads them — roll the pods yourself after rotating credentials.)
    """
    return digest({"data": config_data(darkroom, settings), "credentialsSecret": credentials_secret(darkroom)})


def configmap(darkroom: Mapping[str, Any], settings: OperatorSettings) -> Body:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _object_meta(darkroom, settings), "data": config_data(darkroom, settings)}


def _credential_env(secret: str) -> list[dict[str, Any]]:
    return [
        {"name": env, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
        for env, key in ((ACCESS_KEY_ENV, ACCESS_KEY), (SECRET_KEY_ENV, SECRET_KEY))
    ]


def _probe(period_s: int) -> dict[str, Any]:
    return {"httpGet": {"path": HEALTH_PATH, "port": PORT_NAME}, "periodSeconds": period_s, "timeoutSeconds": 2, "failureThreshold": 3}


def container(darkroom: Mapping[str, Any], settings: OperatorSettings) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": image(darkroom, settings),
        "ports": [{"name": PORT_NAME, "containerPort": CONTAINER_PORT, "protocol": "TCP"}],
        "envFrom": [{"configMapRef": {"name": _meta(darkroom)["name"]}}],
    }
    secret = credentials_secret(darkroom)
    if secret:
        body["env"] = _credential_env(secret)
    body.update(
        {
            "readinessProbe": _probe(5),
            "livenessProbe": _probe(10),
            "resources": {
                "requests": {"cpu": canonical_quantity(settings.cpu_request), "memory": canonical_quantity(settings.memory_request)},
                "limits": {"cpu": canonical_quantity(settings.cpu_limit), "memory": canonical_quantity(settings.memory_limit)},
            },
            "securityContext": {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "runAsNonRoot": True,
                "capabilities": {"drop": ["ALL"]},
            },
            # A read-only root filesystem: Darkroom may still need scratch space for image processing.
            "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
        }
    )
    return body


def deployment(darkroom: Mapping[str, Any], settings: OperatorSettings) -> Body:
    pod_labels = labels(darkroom, settings)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _object_meta(darkroom, settings),
        "spec": {
            "replicas": int(_spec(darkroom).get("replicas", 1)),
            "selector": {"matchLabels": selector_labels(darkroom)},
            "template": {
                "metadata": {"labels": pod_labels, "annotations": {CONFIG_HASH_ANNOTATION: config_hash(darkroom, settings)}},
                "spec": {
                    "automountServiceAccountToken": False,
                    # Service links would inject <SERVICE>_PORT-style variables next to Darkroom's own SOURCE_*/PORT settings.
                    "enableServiceLinks": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": RUN_AS_ID,
                        "runAsGroup": RUN_AS_ID,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [container(darkroom, settings)],
                    "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
                },
            },
        },
    }


def service(darkroom: Mapping[str, Any], settings: OperatorSettings) -> Body:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _object_meta(darkroom, settings),
        "spec": {
            "type": "ClusterIP",
            "selector": selector_labels(darkroom),
            "ports": [{"name": PORT_NAME, "port": SERVICE_PORT, "targetPort": PORT_NAME, "protocol": "TCP"}],
        },
    }


def ingress(darkroom: Mapping[str, Any], settings: OperatorSettings) -> Body:
    backend = {"service": {"name": _meta(darkroom)["name"], "port": {"name": PORT_NAME}}}
    all_hosts = hosts(darkroom, settings)
    spec: dict[str, Any] = {
        "rules": [{"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}} for host in all_hosts]
    }
    if settings.ingress_class:
        spec["ingressClassName"] = settings.ingress_class
    if settings.tls_secret:
        spec["tls"] = [{"hosts": all_hosts, "secretName": settings.tls_secret}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": _object_meta(darkroom, settings), "spec": spec}
