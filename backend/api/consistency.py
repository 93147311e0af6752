"""Read-your-writes across API replicas: the consistency token.

Production runs two API replicas, each with its own informer cache; a client's read after its own
write may land on the replica whose cache has not seen that write yet. Affinity (sticky sessions)
would depend on the Service/Ingress in front and break when a replica restarts; instead every
successful write answers with a token naming the resourceVersion up to which the writing replica's
cache had caught up (after seeing the write itself), and a read that carries the token waits until
the answering replica's cache is at least that far — then it answers as fresh as the write.

The token travels in the ``X-Consistency-Token`` header (API clients echo it on their next
request) and in the ``dcp-consistency`` cookie (browsers send it back by themselves; HttpOnly,
SameSite=Strict). Its form is ``<plural>.<group>@<resourceVersion>`` per kind written, joined by
``|`` (cookie-safe); later writes raise a kind's version, never lower it. A read waits at most
``ApiSettings.consistency_wait_s`` and then answers 503 with ``Retry-After`` rather than something
older than the client's own write. A token the server cannot use (another cluster's, a typo) is
ignored: it can only ever make a read wait, never change its answer.

Registered by :func:`backend.app.create_app` with the app's cached client; the application service
(:mod:`backend.core.services`) reports each write to :func:`wrote`.
"""

from __future__ import annotations

from flask import Flask, Response, g, request

from backend.api.problems import Problem
from backend.settings import ApiSettings
from cluster import REGISTRY, CachedClient, Resource, Unavailable
from cluster.bodies import version_at_least

HEADER = "X-Consistency-Token"
COOKIE = "dcp-consistency"
_BY_NAME = {f"{r.plural}.{r.group}" if r.group else r.plural: r for r in REGISTRY}


def _name(resource: Resource) -> str:
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def parse(token: str) -> dict[Resource, str]:
    """The versions a token names, by resource (unknown kinds and malformed parts are dropped)."""
    found: dict[Resource, str] = {}
    for part in token.split("|"):
        name, _, version = part.partition("@")
        resource = _BY_NAME.get(name.strip())
        if resource is not None and version.strip().isdigit():
            found[resource] = version.strip()
    return found


def render(versions: dict[Resource, str]) -> str:
    return "|".join(f"{_name(r)}@{v}" for r, v in sorted(versions.items(), key=lambda item: _name(item[0])))


def wrote(resource: Resource) -> None:
    """Called by a write endpoint once its write succeeded: the response will carry a token for it."""
    g.setdefault("consistency_written", set()).add(resource)


def _requested() -> dict[Resource, str]:
    versions = parse(request.cookies.get(COOKIE, ""))
    for resource, version in parse(request.headers.get(HEADER, "")).items():
        if resource not in versions or version_at_least(version, versions[resource]):
            versions[resource] = version
    return versions


def register(app: Flask, *, settings: ApiSettings, client: CachedClient) -> None:
    """Wait for the versions a request's token names (in ``client``'s cache) before it runs; hand out tokens after writes."""

    @app.before_request
    def wait_for_the_clients_writes() -> None:
        versions = _requested()
        if not versions:
            return
        for resource, version in versions.items():
            try:
                client.wait_for_version(resource, version, timeout_s=settings.consistency_wait_s)
            except Unavailable:
                raise Problem(
                    503,
                    f"this server's cache has not yet seen {_name(resource)} at resourceVersion {version} (your own write); retry",
                    headers={"Retry-After": "1"},
                ) from None

    @app.after_request
    def hand_out_a_token(response: Response) -> Response:
        written = g.pop("consistency_written", None)
        if not written or response.status_code >= 400:
            return response
        versions = _requested()
        for resource in written:
            try:
                version = client.written_version(resource)
            except Unavailable:
                continue  # our own cache is behind: no promise we cannot keep
            if version and (resource not in versions or version_at_least(version, versions[resource])):
                versions[resource] = version
        token = render(versions)
        response.headers[HEADER] = token
        response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", secure=request.is_secure, path="/")
        return response
