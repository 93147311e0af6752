"""The password behind a Postgresql page's "Show password": read on request, logged, never cached.

Called by :mod:`.pgpages` (``POST /ui/postgresqls/<ns>/<name>/password``; CSRF-checked like every
dashboard POST). :func:`read` reads the Secret ``<name>-credentials`` as the person who asked (their
:class:`cluster.acting.ActingClient`, handed in by the page: a GET to the API server with their credentials, each
time — the API caches no Secret of the cluster's) and returns its
``password`` only when the Secret's controller ownerReference is this Postgresql — so a Secret of
that name someone else made, or one named in ``passwordSecretRef`` (the user's own), is never
revealed. Each read is logged at INFO with who asked (the person and how they came in; a dashboard session by
a digest of its id), the namespace and name, never the value; a refusal at WARNING.

The person must be allowed to ``get`` that Secret there (the built-in "edit" and "admin" may, "view" may not): the
page disables "Show password" with the reason when they may not (:mod:`.allowing`), and a refusal all the same is a 403
that :func:`read` turns into the person's reason for the page (status 403), not an error.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from flask import request

from backend.dashboard.rendering import WRITE_RESPONSES
from backend.identity import callers
from backend.identity.permissions import sentence
from cluster import SECRETS, ClusterError, Forbidden, NotFound
from cluster.acting import ActingClient
from kinds import postgresqls as kind

log = logging.getLogger(__name__)


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    """Whether ``obj`` has a controller ownerReference to ``uid``."""
    return any(ref.get("controller") and ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or ())


@dataclass(frozen=True)
class Revealed:
    """What "Show password" found: the password, or why there is none to show (with the HTTP status)."""

    secret: str
    password: str | None = None
    problem: str | None = None
    status: int = 200
    tone: str = "bad"


def requester() -> str:
    """Who asked, for the log: the person (and how they came in: a session by a digest of its id) and the address."""
    caller = callers.current()
    if caller.local:
        who = "the local mode's own identity"
    elif caller.session_id is not None:
        who = f"{caller.name} (dashboard session {hashlib.sha256(caller.session_id.encode()).hexdigest()[:12]})"
    else:
        who = f"{caller.name} ({caller.via})"
    return f"{who} from {request.remote_addr or '-'}"


def read(client: ActingClient, pg: Mapping[str, Any]) -> Revealed:
    """The password in this Postgresql's own Secret, read now through the API's client (never cached)."""
    namespace, name, uid = pg["namespace"], pg["name"], pg["uid"]
    secret_name = kind.password_secret_name(name)
    where = f"{namespace}/{pg['name']}"
    if pg.get("passwordSecretRef"):
        ref = pg["passwordSecretRef"]
        return Revealed(secret=ref["name"], problem=f"the password is in your Secret {ref['name']}: not revealed here", status=409)
    try:
        secret = client.get(SECRETS, secret_name, namespace=namespace)
    except NotFound:
        return Revealed(
            secret=secret_name,
            problem=f"The Secret {secret_name} does not exist yet: the reconciler creates it shortly after the database. Try again soon.",
            status=404,
            tone="progress",
        )
    except ClusterError as e:
        if e.status in (401, 403):
            who = requester()
            log.warning("password of Postgresql %s not shown to %s: reading Secret %s was refused (%s)", where, who, secret_name, e.status)
            refused = e.attributes if isinstance(e, Forbidden) and e.user is not None else None
            because = (
                sentence(refused.refused())
                if refused is not None
                else (
                    f"The cluster does not allow the control panel to read the Secret {secret_name} (HTTP {e.status}: its RBAC "
                    "needs the verb get on secrets)."
                )
            )
            return Revealed(secret=secret_name, problem=f"{because} Ask your cluster administrator for access.", status=403)
        return Revealed(secret=secret_name, problem=f"The cluster is unavailable: {e.message}. Try again.", status=503)
    if not owned_by(secret, uid):
        log.warning("password of Postgresql %s not shown to %s: Secret %s is not this database's", where, requester(), secret_name)
        return Revealed(secret=secret_name, problem=f"The Secret {secret_name} does not belong to this database: not shown.", status=409)
    encoded = (secret.get("data") or {}).get(kind.PASSWORD_KEY)
    try:
        password = base64.b64decode(encoded or "", validate=True).decode() if encoded else None
    except (binascii.Error, UnicodeDecodeError):
        password = None
    if password is None:
        return Revealed(secret=secret_name, problem=f"The Secret {secret_name} holds no readable {kind.PASSWORD_KEY!r} key.", status=404)
    log.info("password of Postgresql %s read from Secret %s by %s", where, secret_name, requester())
    return Revealed(secret=secret_name, password=password)


def _fragment(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


DOC = "The password of a Postgresql, on request\n---\n" + yaml.safe_dump(
    {
        "get": {
            "tags": ["Dashboard (HTML)"],
            "summary": "The hidden password control again (reads nothing)",
            "responses": {
                "200": _fragment("The control (htmx), or a redirect to the detail page."),
                "404": _fragment("No such Postgresql."),
            },
        },
        "post": {
            "tags": ["Dashboard (HTML)"],
            "summary": "Read the password from the Postgresql's own Secret <name>-credentials (the read is logged, not the value)",
            "responses": {
                "200": _fragment("The password: the fragment for htmx, else the detail page with it. Cache-Control: no-store."),
                # The CSRF refusal is the dashboard's shared one (rendering.WRITE_RESPONSES: HTML or problem+json).
                "403": {
                    "description": "No valid CSRF token; or the cluster refused the API reading the Secret (explained in the fragment).",
                    "content": WRITE_RESPONSES["403"]["content"],
                },
                "404": _fragment("No such Postgresql, or its Secret does not exist yet."),
                "409": _fragment("The password is in a Secret of the user's (passwordSecretRef) or one the Postgresql does not own."),
                "503": _fragment("The cluster is unavailable."),
            },
        },
    },
    sort_keys=False,
)
