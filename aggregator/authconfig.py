"""Who may assert identities, read from ``kube-system/extension-apiserver-authentication``, and the TLS context.

kube-apiserver publishes in that ConfigMap the CA that signs client certificates (``client-ca-file``)
and, for its front proxy (the aggregator), ``requestheader-client-ca-file``,
``requestheader-allowed-names`` and the header names (``requestheader-username-headers``,
``-group-headers``, ``-extra-headers-prefix``, ``-uid-headers``), each a JSON list. k8s.io/apiserver's
delegated authentication reads exactly these; so does :func:`load`. :mod:`aggregator.serving` reloads
the ConfigMap every ``auth_config_refresh_s`` and :mod:`aggregator.authn` checks every request against
the current :class:`AuthConfig`.

TLS: the server asks for a client certificate (``CERT_OPTIONAL``) and lets the handshake verify it
against every CA the ConfigMap has named since start (CAs can be added to a live ``SSLContext``, not
removed); which CA it must be — the request-header CA for ``X-Remote-*`` headers, the client CA for a
user certificate — and whether it is still trusted is decided per request from the current config.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509

from cluster import CONFIGMAPS, NotFound, Transport

NAMESPACE = "kube-system"
NAME = "extension-apiserver-authentication"


@dataclass(frozen=True)
class AuthConfig:
    client_cas: tuple[x509.Certificate, ...] = ()
    requestheader_cas: tuple[x509.Certificate, ...] = ()
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = ()
    extra_prefixes: tuple[str, ...] = ()
    uid_headers: tuple[str, ...] = ()
    pem: dict[str, str] = field(default_factory=dict)

    @property
    def requestheader_enabled(self) -> bool:
        return bool(self.requestheader_cas and self.username_headers)


def _list(data: dict[str, str], key: str) -> tuple[str, ...]:
    raw = data.get(key)
    if not raw:
        return ()
    values = json.loads(raw)
    return tuple(str(v) for v in values) if isinstance(values, list) else ()


def _certs(text: str | None) -> tuple[x509.Certificate, ...]:
    return tuple(x509.load_pem_x509_certificates(text.encode())) if text and text.strip() else ()


def parse(data: dict[str, str]) -> AuthConfig:
    """The ConfigMap's ``data`` as an :class:`AuthConfig` (ValueError for a malformed CA bundle or list)."""
    return AuthConfig(
        client_cas=_certs(data.get("client-ca-file")),
        requestheader_cas=_certs(data.get("requestheader-client-ca-file")),
        allowed_names=_list(data, "requestheader-allowed-names"),
        username_headers=_list(data, "requestheader-username-headers"),
        group_headers=_list(data, "requestheader-group-headers"),
        extra_prefixes=_list(data, "requestheader-extra-headers-prefix"),
        uid_headers=_list(data, "requestheader-uid-headers"),
        pem={k: data[k] for k in ("client-ca-file", "requestheader-client-ca-file") if data.get(k)},
    )


def load(transport: Transport) -> AuthConfig:
    """GET the ConfigMap (the ``extension-apiserver-authentication-reader`` Role allows exactly that).
    An absent ConfigMap means no client certificates are trusted: tokens only."""
    try:
        configmap = transport.request("GET", CONFIGMAPS.path(namespace=NAMESPACE, name=NAME))
    except NotFound:
        return AuthConfig()
    return parse({str(k): str(v) for k, v in (configmap.get("data") or {}).items()})


class TlsContext:
    """The server's SSLContext: its serving certificate, and client CAs added as the config names them."""

    def __init__(self, *, cert_file: Path, key_file: Path) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.context.load_cert_chain(str(cert_file), str(key_file))
        self.context.verify_mode = ssl.CERT_NONE
        self._trusted: set[str] = set()

    def trust(self, config: AuthConfig) -> None:
        """Add the config's CAs to what the handshake accepts (and start asking for client certificates)."""
        for pem in config.pem.values():
            if pem not in self._trusted:
                self.context.load_verify_locations(cadata=pem)
                self._trusted.add(pem)
        if self._trusted:
            self.context.verify_mode = ssl.CERT_OPTIONAL
