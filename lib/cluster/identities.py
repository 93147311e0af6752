"""Who a request to the API server is made for, and with which credentials: :class:`User`, :class:`Credentials`.

A process talks to the API server with its own credentials (the kubeconfig's or the in-cluster service
account's: :data:`OWN`). A request made *for a person* carries that person's identity instead, one of two
ways, both standard Kubernetes:

- :class:`BearerToken` — the person's own token (a ServiceAccount or static token, or an OIDC ID token
  the API server trusts) goes to the API server in ``Authorization``; the process's token and client
  certificate do not (kube-apiserver authenticates a client certificate before a bearer token, so a
  connection that presented ours would act as us: :class:`cluster.requesting.Transport` sends these on a
  pool without a client certificate).
- :class:`Impersonation` — the process's own credentials plus ``Impersonate-User``/``-Group``/``-Uid``/
  ``-Extra-*`` headers naming a person the process has authenticated itself; the API server checks that
  the process may impersonate them and then authorizes the request as that person.

Used by :mod:`cluster.requesting` (the headers), :mod:`cluster.acting` (the client as one caller sees it)
and :mod:`cluster.reviewing` (the subject of an access review). A token never appears in a ``repr``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class User:
    """A person (or program) as the API server's authenticator reports them: ``user.info`` of a TokenReview."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: how the process learned who this is ("token", "oidc", "requestheader", "x509", ...): for logs, never authorization
    how: str = ""

    def subject(self) -> dict[str, Any]:
        """The subject fields of a SubjectAccessReview spec (``user``, ``groups``, ``uid``, ``extra``)."""
        spec: dict[str, Any] = {"user": self.name, "groups": list(self.groups)}
        if self.uid:
            spec["uid"] = self.uid
        if self.extra:
            spec["extra"] = {k: list(v) for k, v in sorted(self.extra.items())}
        return spec

    def key(self) -> tuple[Any, ...]:
        """A hashable identity for caches: every field an authorizer may look at."""
        return (self.name, self.groups, self.uid, tuple(sorted((k, tuple(v)) for k, v in self.extra.items())))

    @classmethod
    def from_user_info(cls, info: Mapping[str, Any], *, how: str = "") -> User:
        """From a TokenReview's ``status.user`` (or a SelfSubjectReview's ``status.userInfo``)."""
        extra = {str(k): tuple(str(x) for x in v or ()) for k, v in (info.get("extra") or {}).items()}
        groups = tuple(str(g) for g in info.get("groups") or ())
        return cls(name=str(info.get("username", "")), groups=groups, uid=str(info.get("uid", "")), extra=extra, how=how)


class Credentials:
    """How one request authenticates. :attr:`key` identifies the credentials in caches without holding a secret."""

    #: whether the process's own authentication (its token or client certificate) is used
    own_authentication: bool = True

    @property
    def key(self) -> str:
        raise NotImplementedError

    def headers(self) -> list[tuple[str, str]]:
        """The request headers these credentials add (a name may repeat: one ``Impersonate-Group`` per group)."""
        return []


@dataclass(frozen=True)
class OwnCredentials(Credentials):
    """The process's own identity (the reconciler's, the aggregated server's, or the API's when it serves
    itself: the local one-person mode)."""

    @property
    def key(self) -> str:
        return "own"


OWN = OwnCredentials()


@dataclass(frozen=True)
class BearerToken(Credentials):
    """A person's own token, sent as it is (passthrough)."""

    token: str = field(repr=False)
    own_authentication = False

    @property
    def key(self) -> str:
        return "bearer:" + hashlib.sha256(self.token.encode()).hexdigest()

    def headers(self) -> list[tuple[str, str]]:
        return [("Authorization", f"Bearer {self.token}")]

    def __repr__(self) -> str:
        return "BearerToken(<redacted>)"


IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_UID = "Impersonate-Uid"
IMPERSONATE_EXTRA = "Impersonate-Extra-"


@dataclass(frozen=True)
class Impersonation(Credentials):
    """The process's credentials acting as ``user`` (kube's impersonation headers)."""

    user: User

    @property
    def key(self) -> str:
        return "impersonate:" + hashlib.sha256(repr(self.user.key()).encode()).hexdigest()

    def headers(self) -> list[tuple[str, str]]:
        headers = [(IMPERSONATE_USER, self.user.name)]
        # system:authenticated is added by the API server to every impersonated user; naming it is harmless
        # but needs an impersonate permission on that group too, so it is left out.
        headers += [(IMPERSONATE_GROUP, group) for group in self.user.groups if group != AUTHENTICATED]
        if self.user.uid:
            headers.append((IMPERSONATE_UID, self.user.uid))
        for key, values in sorted(self.user.extra.items()):
            # Header names are case-insensitive and limited to token characters: kube percent-decodes the key.
            headers += [(IMPERSONATE_EXTRA + quote(key, safe=""), value) for value in values]
        return headers
