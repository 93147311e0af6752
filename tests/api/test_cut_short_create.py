"""A create cut short by the API server going away is all or nothing from the client's view.

The app talks to devcluster through :class:`faultproxy.FaultProxy`, which forwards plain HTTP and "takes the
server down" (drops every connection and refuses new ones) the moment it sees a chosen request
line: here the POST of the credentials Secret, i.e. after the Darkroom was created and before its
Secret — so even the undo cannot reach the server. The client gets 503; once the server is back the
same POST succeeds (201) and leaves exactly one complete Darkroom: its Secret holds the keys and the
"credentials pending" mark is gone. Devcluster only: the proxy must read the requests, which the
real control plane encrypts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings
from kinds.darkrooms import CREDENTIALS_PENDING_ANNOTATION as CREDENTIALS_PENDING
from tests.clusters import ClusterProcess
from tests.faultproxy import FaultProxy
from tests.support import as_dict

from .payloads import SENTINEL_ACCESS, SENTINEL_SECRET, s3
from .test_darkroom_credentials import GROUP, PLURAL, VERSION, secret_data


@pytest.fixture
def proxied_app(kube: ClusterProcess, crds_installed: None, tmp_path: Path) -> Iterator[tuple[Any, FaultProxy]]:
    from tests.cluster.network import kubeconfig_for

    proxy = FaultProxy(kube.port)
    settings = ApiSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "kubeconfig", port=proxy.port), cache_sync_timeout_s=30.0)
    access = ClusterAccess.start(settings, environ={})
    try:
        yield create_app(settings, access=access).test_client(), proxy
    finally:
        proxy.revive()
        access.stop()
        proxy.close()


@pytest.mark.devcluster_only  # the proxy reads the request lines: plain HTTP only
def test_a_retry_completes_a_create_the_server_cut_short(proxied_app: tuple[Any, FaultProxy], namespace: str, core: Any) -> None:
    http, proxy = proxied_app
    proxy.arm(f"POST /api/v1/namespaces/{namespace}/secrets")
    first = http.post("/darkrooms", json=s3("halfway", namespace))
    assert proxy.tripped.is_set()
    assert first.status_code == 503, first.get_data(as_text=True)
    assert first.mimetype == "application/problem+json"
    detail = first.get_json()["detail"]  # says what is true: made, not finished, and what to do
    assert "nothing was created" not in detail
    assert "the Darkroom was made but not finished" in detail and "send the same request again to finish it" in detail
    proxy.revive()
    # The Darkroom the undo could not remove is there, marked as cut short; the Secret is not.
    from kubernetes import client

    custom = client.CustomObjectsApi(core.api_client)
    stranded = as_dict(custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "halfway"))
    token = stranded["metadata"]["annotations"][CREDENTIALS_PENDING]
    assert len(token) == 16  # the attempt's own token (the reconciler times its grace period per token)
    # A retry cut short at the same place has taken the object over first: same object, a token of its own.
    proxy.arm(f"POST /api/v1/namespaces/{namespace}/secrets")
    assert http.post("/darkrooms", json=s3("halfway", namespace)).status_code == 503
    proxy.revive()
    taken = as_dict(custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "halfway"))
    assert taken["metadata"]["uid"] == stranded["metadata"]["uid"]
    assert taken["metadata"]["annotations"][CREDENTIALS_PENDING] not in ("", token)
    retry = http.post("/darkrooms", json=s3("halfway", namespace))
    assert retry.status_code == 201, retry.get_data(as_text=True)
    assert retry.get_json()["uid"] == stranded["metadata"]["uid"]  # completed, not replaced
    assert secret_data(core, namespace, "halfway-s3-credentials") == {"accessKey": SENTINEL_ACCESS, "secretKey": SENTINEL_SECRET}
    done = as_dict(custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "halfway"))
    assert CREDENTIALS_PENDING not in (done["metadata"].get("annotations") or {})
    again = http.post("/darkrooms", json=s3("halfway", namespace))
    assert again.status_code == 409  # a complete Darkroom is an ordinary name conflict
