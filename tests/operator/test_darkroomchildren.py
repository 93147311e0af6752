"""The desired children of a Darkroom (darkroom_operator.darkroomchildren), field by field.

Behaviours: the ConfigMap holds Darkroom's environment for WebFolder and S3 sources (seed Hystrix
defaults, LOG_LEVEL=info, METRICS_SYSTEM=prometheus, never DEBUG, never a credential); S3
credentials reach the pod only as secretKeyRef env vars; the Deployment, Service and Ingress are
exactly as specified (names, labels, controller ownerReference, image tag rules, probes,
resources, restricted security context, /tmp emptyDir, no service-account token); the pod
template's config hash changes with the configuration and only with it; the spec is not modified;
ingress class and TLS follow the settings; validation of what the CRD cannot check.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from darkroom_operator import darkroomchildren
from darkroom_operator.settings import OperatorSettings

from kinds import darkrooms as darkroom_kind

SETTINGS = OperatorSettings(identity="test")
UID = "0f6b5c8e-1111-2222-3333-444455556666"
OWNER = {
    "apiVersion": "deployments.example.com/v1",
    "kind": "Darkroom",
    "name": "photos",
    "uid": UID,
    "controller": True,
    "blockOwnerDeletion": True,
}
LABELS = {"app.kubernetes.io/name": "darkroom", "app.kubernetes.io/instance": "photos", "app.kubernetes.io/managed-by": "darkroom-operator"}
META = {"name": "photos", "namespace": "media", "labels": LABELS, "ownerReferences": [OWNER]}
HYSTRIX = {
    "SOURCE_HYSTRIX_TIMEOUT": "5000",
    "SOURCE_HYSTRIX_MAXCONCURRENTREQUESTS": "100",
    "SOURCE_HYSTRIX_REQUESTVOLUMETHRESHOLD": "10",
    "SOURCE_HYSTRIX_SLEEPWINDOW": "10",
    "SOURCE_HYSTRIX_ERRORPERCENTTHRESHOLD": "25",
}


def darkroom(source: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "photos", "namespace": "media", "uid": UID, "generation": 1, "resourceVersion": "7"},
        "spec": {
            "version": "0.4.2",
            "replicas": 2,
            "source": source or {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": ["images", "cdn"],
            "cacheTime": 86400,
        },
    }
    body["spec"].update(spec)
    return body


S3 = {"type": "S3", "bucket": "originals", "region": "eu-west-1", "endpoint": "https://minio.local", "pathPrefix": "raw/"}
S3_WITH_SECRET = {**S3, "credentialsSecretRef": {"name": "s3-creds"}}


def test_configmap_webfolder() -> None:
    assert darkroomchildren.configmap(darkroom(), SETTINGS) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": META,
        "data": {
            "APP_NAME": "photos",
            "APP_VERSION": "v0.4.2",
            "APP_DESCRIPTION": "A realtime image processing service",
            "PORT": "3000",
            "LOG_LEVEL": "info",
            "METRICS_SYSTEM": "prometheus",
            "CACHE_TIME": "86400",
            "SOURCE_KIND": "WebFolder",
            "SOURCE_BASEURL": "https://example.com/images",
            "SOURCE_HYSTRIX_COMMANDNAME": "WebFolder_ADAPTER",
            **HYSTRIX,
        },
    }


def test_configmap_s3_has_bucket_settings_and_no_credentials() -> None:
    data = darkroomchildren.configmap(darkroom(S3_WITH_SECRET), SETTINGS)["data"]
    assert {k: v for k, v in data.items() if k.startswith("SOURCE_") and "HYSTRIX" not in k} == {
        "SOURCE_KIND": "S3",
        "SOURCE_BUCKET_NAME": "originals",
        "SOURCE_BUCKET_REGION": "eu-west-1",
        "SOURCE_BUCKET_ENDPOINT": "https://minio.local",
        "SOURCE_PATHPREFIX": "raw/",
    }
    assert data["SOURCE_HYSTRIX_COMMANDNAME"] == "S3_ADAPTER"
    assert "SOURCE_BUCKET_ACCESSKEY" not in data and "SOURCE_BUCKET_SECRETKEY" not in data
    assert "s3-creds" not in str(data)


def test_configmap_never_debug_and_defaults_cache_time() -> None:
    body = darkroom()
    del body["spec"]["cacheTime"]
    data = darkroomchildren.config_data(body, SETTINGS)
    assert "DEBUG" not in data and data["LOG_LEVEL"] == "info"
    assert data["CACHE_TIME"] == "31536000"


def test_minimal_s3_source_sets_only_what_is_given() -> None:
    data = darkroomchildren.config_data(darkroom({"type": "S3", "bucket": "b"}), SETTINGS)
    assert [k for k in data if k.startswith("SOURCE_BUCKET") or k in ("SOURCE_PATHPREFIX", "SOURCE_BASEURL")] == ["SOURCE_BUCKET_NAME"]


EXPECTED_CONTAINER = {
    "name": "darkroom",
    "image": "gojektech/darkroom:v0.4.2",
    "ports": [{"name": "http", "containerPort": 3000, "protocol": "TCP"}],
    "envFrom": [{"configMapRef": {"name": "photos"}}],
    "readinessProbe": {"httpGet": {"path": "/ping", "port": "http"}, "periodSeconds": 5, "timeoutSeconds": 2, "failureThreshold": 3},
    "livenessProbe": {"httpGet": {"path": "/ping", "port": "http"}, "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3},
    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
    "securityContext": {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    },
    "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
}


def test_deployment_exactly() -> None:
    body = darkroomchildren.deployment(darkroom(), SETTINGS)
    config_hash = darkroomchildren.config_hash(darkroom(), SETTINGS)
    assert body == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": META,
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "darkroom", "app.kubernetes.io/instance": "photos"}},
            "template": {
                "metadata": {"labels": LABELS, "annotations": {"deployments.example.com/config-hash": config_hash}},
                "spec": {
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "runAsGroup": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [EXPECTED_CONTAINER],
                    "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
                },
            },
        },
    }
    assert len(config_hash) == 16 and int(config_hash, 16) >= 0


def test_s3_credentials_only_through_secret_key_refs() -> None:
    container = darkroomchildren.deployment(darkroom(S3_WITH_SECRET), SETTINGS)["spec"]["template"]["spec"]["containers"][0]
    assert container["env"] == [
        {"name": "SOURCE_BUCKET_ACCESSKEY", "valueFrom": {"secretKeyRef": {"name": "s3-creds", "key": "accessKey"}}},
        {"name": "SOURCE_BUCKET_SECRETKEY", "valueFrom": {"secretKeyRef": {"name": "s3-creds", "key": "secretKey"}}},
    ]
    assert "env" not in darkroomchildren.container(darkroom(S3), SETTINGS)  # a public bucket
    webfolder_with_stray_ref = {"type": "WebFolder", "baseUrl": "https://x.example", "credentialsSecretRef": {"name": "s3-creds"}}
    assert "env" not in darkroomchildren.container(darkroom(webfolder_with_stray_ref), SETTINGS)


@pytest.mark.parametrize(
    ("version", "tag"),
    [("0.4.2", "v0.4.2"), ("v0.4.2", "v0.4.2"), ("1", "v1"), ("", "latest"), (None, "latest"), ("latest", "latest"), ("main", "main")],
)
def test_image_tag(version: str | None, tag: str) -> None:
    body = darkroom(version=version)
    if version is None:
        del body["spec"]["version"]
    assert darkroomchildren.image(body, SETTINGS) == f"gojektech/darkroom:{tag}"


def test_image_repository_comes_from_settings_and_the_default_version_from_the_kind() -> None:
    settings = OperatorSettings(identity="t", image_repository="registry.local/darkroom")
    assert darkroomchildren.image(darkroom(version=""), settings) == f"registry.local/darkroom:{darkroom_kind.DEFAULT_VERSION}"


def test_building_children_never_modifies_the_spec() -> None:
    body = darkroom(S3_WITH_SECRET, version="")
    before = copy.deepcopy(body)
    for build in (darkroomchildren.configmap, darkroomchildren.deployment, darkroomchildren.service, darkroomchildren.ingress):
        build(body, SETTINGS)
    assert body == before


def test_config_hash_follows_the_configuration_only() -> None:
    base = darkroomchildren.config_hash(darkroom(), SETTINGS)
    assert darkroomchildren.config_hash(darkroom(), SETTINGS) == base  # deterministic
    assert darkroomchildren.config_hash(darkroom(cacheTime=60), SETTINGS) != base
    assert darkroomchildren.config_hash(darkroom({"type": "WebFolder", "baseUrl": "https://other.example"}), SETTINGS) != base
    assert darkroomchildren.config_hash(darkroom(replicas=5), SETTINGS) == base  # scaling does not restart pods
    assert darkroomchildren.config_hash(darkroom(subDomains=["x"]), SETTINGS) == base
    s3 = darkroomchildren.config_hash(darkroom(S3_WITH_SECRET), SETTINGS)
    assert darkroomchildren.config_hash(darkroom({**S3, "credentialsSecretRef": {"name": "other"}}), SETTINGS) != s3


def test_service_exactly() -> None:
    assert darkroomchildren.service(darkroom(), SETTINGS) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": META,
        "spec": {
            "type": "ClusterIP",
            "selector": {"app.kubernetes.io/name": "darkroom", "app.kubernetes.io/instance": "photos"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def _rule(host: str) -> dict[str, Any]:
    backend = {"service": {"name": "photos", "port": {"name": "http"}}}
    return {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}


def test_ingress_exactly_without_class_or_tls() -> None:
    assert darkroomchildren.ingress(darkroom(), SETTINGS) == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": META,
        "spec": {"rules": [_rule("images.darkroom.example.com"), _rule("cdn.darkroom.example.com")]},
    }


def test_ingress_class_tls_and_domain_from_settings() -> None:
    settings = OperatorSettings(identity="t", domain="img.example.org", ingress_class="nginx", tls_secret="wildcard-tls")
    spec = darkroomchildren.ingress(darkroom(), settings)["spec"]
    assert spec == {
        "rules": [_rule("images.img.example.org"), _rule("cdn.img.example.org")],
        "ingressClassName": "nginx",
        "tls": [{"hosts": ["images.img.example.org", "cdn.img.example.org"], "secretName": "wildcard-tls"}],
    }
    assert darkroomchildren.hosts(darkroom(), settings) == ["images.img.example.org", "cdn.img.example.org"]


def test_resources_are_written_in_canonical_form() -> None:
    settings = OperatorSettings(identity="t", cpu_request="0.25", memory_request="0.5Gi", cpu_limit="2000m", memory_limit="1024Mi")
    resources = darkroomchildren.container(darkroom(), settings)["resources"]
    assert resources == {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}}


def test_managed_by_label_follows_settings_but_selector_does_not() -> None:
    settings = OperatorSettings(identity="t", managed_by="someone-else")
    body = darkroomchildren.deployment(darkroom(), settings)
    assert body["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "someone-else"
    assert body["spec"]["selector"] == darkroomchildren.deployment(darkroom(), SETTINGS)["spec"]["selector"]


@pytest.mark.parametrize(
    ("source", "problems"),
    [
        ({"type": "WebFolder", "baseUrl": "https://x.example"}, []),
        ({"type": "WebFolder"}, ["spec.source.baseUrl: required for a WebFolder source"]),
        ({"type": "S3", "bucket": "b"}, []),
        ({"type": "S3", "region": "eu-west-1"}, ["spec.source.bucket: required for an S3 source"]),
    ],
)
def test_validate(source: dict[str, Any], problems: list[str]) -> None:
    assert darkroomchildren.validate(darkroom(source)) == problems


def test_the_retired_default_version_variable_is_named_in_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        settings = OperatorSettings.from_environ({"DARKROOM_OPERATOR_DEFAULT_VERSION": "0.1.0"}, identity="t")
    assert not hasattr(settings, "default_version")
    assert "DARKROOM_OPERATOR_DEFAULT_VERSION is ignored" in caplog.text


def test_owner_reference_names_the_version_the_product_speaks() -> None:
    """A Darkroom read at v1alpha1 (as release 0.1.0 read them) still gets a v1 reference: the first reconcile after
    the upgrade moves 0.1.0's children to v1, so a release that stops serving v1alpha1 leaves the garbage collector no
    reference it cannot resolve."""
    old = {**darkroom(), "apiVersion": "deployments.example.com/v1alpha1"}
    assert darkroomchildren.owner_reference(old) == OWNER
    assert OWNER["apiVersion"] == darkroom_kind.GROUP_VERSION
