"""Request bodies of the REST API's tests (helpers, no tests, no fixtures): a WebFolder Darkroom (the seed's shape),
an S3 Darkroom with sentinel keys that must never leak (:data:`SENTINEL_ACCESS`, :data:`SENTINEL_SECRET`), a Task.
"""

from __future__ import annotations

from typing import Any

SENTINEL_ACCESS = "AKIA-SENTINEL-4242-ACCESS"
SENTINEL_SECRET = "sentinel-secret-key-4242-do-not-leak"


def webfolder(name: str, namespace: str, **changes: Any) -> dict[str, Any]:
    """The seed's payload shape, in ``namespace``."""
    return {
        "name": name,
        "namespace": namespace,
        "version": "0.1.0",
        "source": {"type": "WebFolder", "baseUrl": "https://ajatprabha.in/assets"},
        "subDomains": [f"{name}-{namespace}"],  # unique: the API refuses a sub-domain another Darkroom has
        **changes,
    }


def s3(name: str, namespace: str, *, keys: tuple[str, str] | None = (SENTINEL_ACCESS, SENTINEL_SECRET), **changes: Any) -> dict[str, Any]:
    source: dict[str, Any] = {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "pathPrefix": "originals/"}
    if keys:
        source.update(accessKey=keys[0], secretKey=keys[1])
    return {"name": name, "namespace": namespace, "source": source, "subDomains": [f"{name}-{namespace}"], **changes}


def task(name: str, namespace: str, **changes: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "priority": 5, "deadline": "2027-03-31T17:00:00Z", "details": "Write notes.", **changes}
