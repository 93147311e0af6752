"""Who a caller of devcluster is — exactly as far as the aggregation layer needs — and the review APIs.

devcluster still **authorizes everything** for its own resources and does not require credentials for
them. It authenticates only:

- ``Authorization: Bearer <token>`` with a token devcluster issued (today one: the admin token of the
  kubeconfig it writes, :class:`~devcluster.aggregation.pki.Pki`) → user :data:`ADMIN`
  (``kubernetes-admin``, groups ``system:masters`` and ``system:authenticated``);
- no ``Authorization`` header → :data:`UNSECURED`: ``system:unsecured`` in groups ``system:masters`` and
  ``system:authenticated`` — what kube-apiserver's insecure port (plain HTTP, removed in 1.20) made of
  every caller. devcluster's port is that port: plain HTTP on loopback, everything allowed, and kubectl
  sends no bearer token over plain HTTP, so the caller of a proxied kubectl request is this user;
- any other bearer token → 401 on a proxied request (kube-apiserver's answer); devcluster's own
  resources keep ignoring the header.

No client certificates (devcluster serves plain HTTP), no ServiceAccount tokens, no impersonation.
The identity matters where devcluster passes it on: the ``X-Remote-User``/``X-Remote-Group`` headers of
a proxied request (:mod:`devcluster.aggregation.proxy`), and the two review APIs an aggregated server
calls back:

- ``POST /apis/authentication.k8s.io/v1/tokenreviews``: authenticated for the tokens devcluster issued,
  nothing else;
- ``POST /apis/authorization.k8s.io/v1/subjectaccessreviews``: allowed for the users above (the users
  of those tokens and ``system:unsecured``) and group ``system:masters``, denied for everyone else —
  devcluster has no RBAC evaluation.

And the two reviews a caller makes about itself, as the product's dashboard does to show what its user may
do: ``selfsubjectreviews`` (authentication.k8s.io/v1: who the caller is, ``kubectl auth whoami``) and
``selfsubjectaccessreviews`` (authorization.k8s.io/v1: always allowed — devcluster authorizes every request of
the callers it authenticates; a bearer token it did not issue is 401, as everywhere on the proxied paths).

:func:`authentication_configmap` is the ``kube-system/extension-apiserver-authentication`` ConfigMap
kube-apiserver publishes for delegated authentication (its requestheader keys name the front proxy).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from devcluster.aggregation.pki import FRONT_PROXY_CLIENT, Pki
from devcluster.errors import StatusError

API_AUDIENCE = "https://kubernetes.default.svc.cluster.local"  # kube-apiserver's default --api-audiences
AUTH_CONFIGMAP = ("kube-system", "extension-apiserver-authentication")


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def as_user_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"username": self.name}
        if self.uid:
            info["uid"] = self.uid
        info["groups"] = list(self.groups)
        return info


ADMIN = User("kubernetes-admin", ("system:masters", "system:authenticated"))
UNSECURED = User("system:unsecured", ("system:masters", "system:authenticated"))


def _unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")


class Identity:
    """The tokens devcluster issued and what they stand for."""

    def __init__(self, pki: Pki) -> None:
        self.pki = pki
        self._tokens = {pki.admin_token: ADMIN}

    def _by_token(self, token: str) -> User | None:
        for known, user in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return user
        return None

    def authenticate(self, headers: Mapping[str, str]) -> User:
        """The caller of a proxied request; :class:`StatusError` 401 for a token devcluster did not issue."""
        header = headers.get("Authorization", "")
        if not header:
            return UNSECURED
        scheme, _, token = header.partition(" ")
        user = self._by_token(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise _unauthorized()
        return user

    def token_review(self, body: Any) -> dict[str, Any]:
        """The TokenReview answer (created, never stored)."""
        spec = _spec(body, "TokenReview", "authentication.k8s.io/v1")
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise _invalid("TokenReview", "spec.token", "Required value", "")
        audiences = [a for a in spec.get("audiences") or () if isinstance(a, str)]
        user = self._by_token(token)
        status: dict[str, Any]
        if user is None:
            status = {"user": {}, "error": "[invalid bearer token, token not issued by devcluster]"}
        else:
            status = {"authenticated": True, "user": user.as_user_info(), "audiences": audiences or [API_AUDIENCE]}
        return _review("TokenReview", "authentication.k8s.io/v1", body, status)

    def subject_access_review(self, body: Any) -> dict[str, Any]:
        """The SubjectAccessReview answer: allowed for the users of issued tokens and system:masters."""
        spec = _spec(body, "SubjectAccessReview", "authorization.k8s.io/v1")
        user, groups = spec.get("user") or "", spec.get("groups") or []
        if not user and not groups:
            raise _invalid(
                "SubjectAccessReview", "spec.user,spec.groups", "Invalid value", "at least one of user or group must be specified"
            )
        if bool(spec.get("resourceAttributes")) == bool(spec.get("nonResourceAttributes")):
            raise _invalid(
                "SubjectAccessReview",
                "spec.resourceAttributes",
                "Invalid value",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        known = {u.name for u in self._tokens.values()} | {UNSECURED.name}
        if user in known or "system:masters" in groups:
            status = {"allowed": True, "reason": "devcluster allows its own users"}
        else:
            status = {
                "allowed": False,
                "reason": "devcluster allows only the users of the tokens it issued, system:unsecured and system:masters",
            }
        return _review("SubjectAccessReview", "authorization.k8s.io/v1", body, status)

    def self_subject_review(self, body: Any, caller: User) -> dict[str, Any]:
        """The SelfSubjectReview answer: who the caller is (``kubectl auth whoami``)."""
        _spec(body, "SelfSubjectReview", "authentication.k8s.io/v1")
        metadata = dict(body.get("metadata") or {}) if isinstance(body, dict) else {}
        metadata["creationTimestamp"] = None
        return {
            "kind": "SelfSubjectReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": metadata,
            "status": {"userInfo": caller.as_user_info()},
        }

    def self_subject_access_review(self, body: Any, caller: User) -> dict[str, Any]:
        """The SelfSubjectAccessReview answer: allowed — every caller devcluster authenticates may do everything."""
        spec = _spec(body, "SelfSubjectAccessReview", "authorization.k8s.io/v1")
        if bool(spec.get("resourceAttributes")) == bool(spec.get("nonResourceAttributes")):
            raise _invalid(
                "SelfSubjectAccessReview",
                "spec.resourceAttributes",
                "Invalid value",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        status = {"allowed": True, "reason": f"devcluster authorizes every request of its users ({caller.name})"}
        return _review("SelfSubjectAccessReview", "authorization.k8s.io/v1", body, status)


def _spec(body: Any, kind: str, api_version: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise StatusError(400, "BadRequest", f"the body of a {kind} must be a JSON object")
    if body.get("kind", kind) != kind or body.get("apiVersion", api_version) != api_version:
        raise StatusError(400, "BadRequest", f"the kind in the data ({body.get('kind')}) does not match the expected kind ({kind})")
    spec = body.get("spec")
    return spec if isinstance(spec, dict) else {}


def _invalid(kind: str, path: str, what: str, detail: str) -> StatusError:
    message = f'{kind}.authorization.k8s.io "" is invalid: {path}: {what}'
    if kind == "TokenReview":
        message = f'{kind}.authentication.k8s.io "" is invalid: {path}: {what}'
    if detail:
        message += f": {detail}"
    group = "authentication.k8s.io" if kind == "TokenReview" else "authorization.k8s.io"
    cause = {
        "reason": "FieldValueRequired" if what == "Required value" else "FieldValueInvalid",
        "message": message.split(": ", 1)[1],
        "field": path,
    }
    return StatusError(422, "Invalid", message, details={"group": group, "kind": kind, "causes": [cause]})


def _review(kind: str, api_version: str, body: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    metadata = dict(body.get("metadata") or {})
    metadata["creationTimestamp"] = None
    return {"kind": kind, "apiVersion": api_version, "metadata": metadata, "spec": body.get("spec") or {}, "status": status}


def authentication_configmap(pki: Pki) -> dict[str, Any]:
    """``kube-system/extension-apiserver-authentication`` with kube-apiserver's keys."""
    namespace, name = AUTH_CONFIGMAP
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {
            "client-ca-file": pki.client_ca_pem,
            "requestheader-client-ca-file": pki.front_proxy_ca_pem,
            "requestheader-allowed-names": json.dumps([FRONT_PROXY_CLIENT]),
            "requestheader-username-headers": json.dumps(["X-Remote-User"]),
            "requestheader-uid-headers": json.dumps(["X-Remote-Uid"]),
            "requestheader-group-headers": json.dumps(["X-Remote-Group"]),
            "requestheader-extra-headers-prefix": json.dumps(["X-Remote-Extra-"]),
        },
    }
