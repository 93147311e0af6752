"""Behind the production Ingress: which proxy headers the API trusts (FORWARDED_ALLOW_IPS of the production overlay).

Covers: the production overlay sets ``FORWARDED_ALLOW_IPS`` on the API container (without it
gunicorn trusts loopback only, so behind the Ingress ``X-Forwarded-Proto: https`` was ignored and
the session and CSRF cookies lacked Secure); its value is accepted by gunicorn and, run through
the same proxy-header middleware the production worker uses, turns a request from an Ingress pod
address into https with the end user's address from ``X-Forwarded-For`` (not a value the user
wrote in front of it), while a request from an outside address changes nothing. It is not ``*``.
The dev overlay and the base, served without TLS, leave it unset. (That https then gives Secure
cookies and HSTS through the real server: test_gunicorn.py.)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import pytest
from gunicorn.config import Config
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from tests.deploy.manifests import env_of, one, render


def api_env(overlay: str) -> dict[str, dict[str, Any]]:
    deployment = one(render(overlay), "Deployment", "darkroom-api")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return env_of(container)


def seen(trusted: list[str], *, peer: str, headers: dict[str, str]) -> tuple[str, str]:
    """(scheme, client host) the app sees behind uvicorn's proxy-header middleware."""
    result: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        result.update(scheme=scope["scheme"], client=scope["client"][0])

    scope = {
        "type": "http",
        "scheme": "http",
        "client": (peer, 40000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    # A thread of its own: the browser tests' Playwright (sync API) keeps an event loop running in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, ProxyHeadersMiddleware(app, trusted_hosts=trusted)(scope, None, None)).result()  # type: ignore[arg-type]
    return result["scheme"], result["client"]


@pytest.mark.kubectl
def test_production_trusts_the_ingress_for_scheme_and_client() -> None:
    raw = api_env("production")["FORWARDED_ALLOW_IPS"]["value"]
    config = Config()
    config.set("forwarded_allow_ips", raw)
    trusted = config.forwarded_allow_ips
    assert "*" not in trusted

    https = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    assert seen(trusted, peer="10.42.0.17", headers=https) == ("https", "203.0.113.9")  # the Ingress controller's pod
    spoofed = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.1, 203.0.113.9"}
    assert seen(trusted, peer="10.42.0.17", headers=spoofed) == ("https", "203.0.113.9")  # the entry the controller added
    assert seen(trusted, peer="203.0.113.50", headers=https) == ("http", "203.0.113.50")  # not a proxy of ours


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", ["base", "dev"])
def test_without_tls_nothing_is_trusted_beyond_loopback(overlay: str) -> None:
    assert "FORWARDED_ALLOW_IPS" not in api_env(overlay)
