"""The S3 credentials Secret of a Darkroom: written and removed as the person who writes the Darkroom, never read.

Called by :mod:`backend.core.kinds.darkrooms` after the Darkroom itself was written. The Secret is named
``<darkroom>-s3-credentials``, holds ``accessKey``/``secretKey``, is labelled
``app.kubernetes.io/managed-by=darkroom-control-panel`` and has a controller ownerReference to the
Darkroom, so the garbage collector removes it with the Darkroom.

**Only our own Secret is ever touched.** A new Secret is created (POST), never applied over
whatever has that name. An existing one is changed only by a JSON patch whose first operation
*tests* that its controller ownerReference names this Darkroom's UID — the server checks it
atomically and rejects the patch (422) otherwise — and removed only by a delete whose preconditions
are the UID and resourceVersion such a test-only patch just returned. A Secret of that name that
someone else made (or one left by a former Darkroom of the same name) is reported as a 409 and left
alone. Every one of these requests carries the person's credentials (the client is their
:class:`cluster.acting.ActingClient`): a person who may not write Secrets there is refused by the cluster, and
the Darkroom write is undone. This module never gets or lists Secrets; error messages are scrubbed of the key
values before they reach a response or a log line.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any

from backend.core import errors
from cluster import SECRETS, AlreadyExists, ClusterError, Forbidden, Invalid, NotFound
from cluster.acting import ActingClient

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
                {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"], "controller": True}
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
    """Writing the Secret failed; ``detail`` is scrubbed, ``retryable``: the cluster did not answer (else the name is
    taken, or the cluster refused the write)."""

    def __init__(self, detail: str, *, retryable: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retryable = retryable

    def failure(self, detail: str) -> errors.Failure:
        """The domain error the kind raises for it, with ``detail``: Unavailable when retryable, else Conflict."""
        return errors.Unavailable(detail) if self.retryable else errors.Conflict(detail)


def _ownership_test(owner_uid: str) -> list[dict[str, Any]]:
    """JSON patch operations that fail (422) unless the Secret's controller ownerReference is ``owner_uid``."""
    return [
        {"op": "test", "path": "/metadata/ownerReferences/0/uid", "value": owner_uid},
        {"op": "test", "path": "/metadata/ownerReferences/0/controller", "value": True},
    ]


def _not_ours(namespace: str, name: str) -> str:
    return (
        f"a Secret {namespace}/{name} already exists and does not belong to this Darkroom: it is left alone; "
        "delete or rename it, or choose another Darkroom name"
    )


def store(client: ActingClient, *, name: str, owner: Mapping[str, Any], keys: tuple[str, str], dry_run: bool = False) -> None:
    """Create our Secret, or change the keys of the one we own; raises :class:`CredentialsError` (never the
    cluster's error, which might quote a key), not retryable when the name is taken by a Secret that is not ours —
    except the person's refusal (:class:`cluster.Forbidden` made for them), which propagates: it names what they may
    not do with Secrets, never a value, and is answered as their 403.
    ``dry_run``: the same writes as dry runs (the API server checks them, stores nothing)."""
    namespace = owner["metadata"]["namespace"]
    body = secret_body(name=name, owner=owner, keys=keys)
    try:
        try:
            client.create(SECRETS, body, namespace=namespace, dry_run=dry_run)
        except AlreadyExists:
            patch = [*_ownership_test(owner["metadata"]["uid"]), {"op": "replace", "path": "/data", "value": body["data"]}]
            client.patch(SECRETS, name, patch, namespace=namespace, patch_type="json", dry_run=dry_run)
    except Invalid:  # the ownership test failed
        log.warning("%s", _not_ours(namespace, name))
        raise CredentialsError(_not_ours(namespace, name)) from None
    except ClusterError as e:
        if isinstance(e, Forbidden) and e.user is not None:
            raise  # refused for the person: their 403 (401) names what they may not do with Secrets, never a value
        detail = f"could not write the credentials Secret {namespace}/{name}: {scrub(e.message, keys)}"
        log.warning("%s", detail)
        raise CredentialsError(detail, retryable=e.status == 0 or e.status >= 500) from None


def remove(client: ActingClient, *, name: str, owner: Mapping[str, Any], dry_run: bool = False) -> None:
    """Delete our Secret if it is there (a test-only patch proves it is ours and pins its version). A failure
    is logged: a Secret of ours goes with its Darkroom anyway, one that is not ours stays. ``dry_run``: both
    requests as dry runs."""
    namespace = owner["metadata"]["namespace"]
    try:
        test = _ownership_test(owner["metadata"]["uid"])
        pinned = client.patch(SECRETS, name, test, namespace=namespace, patch_type="json", dry_run=dry_run)
        meta = pinned["metadata"]
        client.delete(SECRETS, name, namespace=namespace, uid=meta["uid"], resource_version=meta["resourceVersion"], dry_run=dry_run)
    except NotFound:
        pass
    except Invalid:
        log.warning("not deleting the Secret %s/%s: it does not belong to this Darkroom", namespace, name)
    except ClusterError as e:
        log.warning("could not delete the credentials Secret %s/%s (it goes with its Darkroom): %s", namespace, name, e.message)
