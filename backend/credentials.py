"""The S3 credentials Secret of a Darkroom: written and removed by the API, never read.

Called by :mod:`backend.darkrooms` after the Darkroom itself was written. The Secret is named
``<darkroom>-s3-credentials``, holds ``accessKey``/``secretKey``, is labelled
``app.kubernetes.io/managed-by=darkroom-control-panel`` and has an ownerReference to the Darkroom,
so the garbage collector removes it with the Darkroom. Server-side apply (forced) makes a write
idempotent and takes the keys over from a leftover Secret of a former Darkroom of the same name.
The API never gets or lists Secrets; error messages are scrubbed of the key values before they
reach a response or a log line.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any

from cluster import SECRETS, CachedClient, ClusterError, NotFound

log = logging.getLogger(__name__)

MANAGED_BY = "darkroom-control-panel"
REDACTED = "[redacted]"


def secret_body(*, name: str, owner: Mapping[str, Any], keys: tuple[str, str]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": {"app.kubernetes.io/managed-by": MANAGED_BY, "app.kubernetes.io/instance": meta["name"]},
            "ownerReferences": [
                {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"], "controller": False}
            ],
        },
        "type": "Opaque",
        "data": {"accessKey": _b64(keys[0]), "secretKey": _b64(keys[1])},
    }


def _b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


def scrub(text: str, keys: tuple[str, str]) -> str:
    """``text`` without the key values (as sent or base64-encoded)."""
    for value in keys:
        for form in (value, _b64(value)):
            if form:
                text = text.replace(form, REDACTED)
    return text


class CredentialsError(Exception):
    """Writing the Secret failed; ``status`` is what the client should see, ``detail`` is scrubbed."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def store(client: CachedClient, *, name: str, owner: Mapping[str, Any], keys: tuple[str, str]) -> None:
    """Create or replace the Secret; raises :class:`CredentialsError` (never the cluster's error, which might quote a key)."""
    namespace = owner["metadata"]["namespace"]
    try:
        client.apply(SECRETS, secret_body(name=name, owner=owner, keys=keys), force=True)
    except ClusterError as e:
        detail = f"could not write the credentials Secret {namespace}/{name}: {scrub(e.message, keys)}"
        log.warning("%s", detail)
        raise CredentialsError(503 if e.status == 0 or e.status >= 500 else 409, detail) from None


def remove(client: CachedClient, *, name: str, namespace: str) -> None:
    """Delete the Secret if it is there. A failure is logged: the Secret is owned by the Darkroom and goes with it."""
    try:
        client.delete(SECRETS, name, namespace=namespace)
    except NotFound:
        pass
    except ClusterError as e:
        log.warning("could not delete the credentials Secret %s/%s (it goes with its Darkroom): %s", namespace, name, e.message)
