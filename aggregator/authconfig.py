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

The serving certificate is re-read on the same schedule (:meth:`TlsContext.reload_certificate`): when the
files change (cert-manager renewing the Secret, which the kubelet swaps into the mounted volume at once), the
new pair is checked on a scratch context first and only then put in service; new handshakes get it,
connections already open keep theirs. A pair that does not load (a key that does not match, a file half
written) leaves the old certificate serving and is retried at the next refresh.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509

from cluster import CONFIGMAPS, NotFound, Transport

log = logging.getLogger(__name__)

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
        self.context = _server_context()
        self.context.verify_mode = ssl.CERT_NONE
        self._cert_file, self._key_file = cert_file, key_file
        self._serving: tuple[bytes, bytes] | None = None  # the pair in service
        self._refused: tuple[bytes, bytes] | None = None  # the last pair that did not load (logged once)
        self._trusted: set[str] = set()
        if not self.reload_certificate():
            raise ssl.SSLError(f"cannot serve with {cert_file} and {key_file}")

    def reload_certificate(self) -> bool:
        """Put the certificate files in service if they changed and load as a pair; True if a new pair is serving."""
        try:
            pair = (self._cert_file.read_bytes(), self._key_file.read_bytes())
        except OSError as e:
            log.warning("cannot read the serving certificate (keeping the one in service): %s", e)
            return False
        if pair == self._serving or pair == self._refused:
            return False
        with tempfile.TemporaryDirectory(prefix="aggregator-tls-") as scratch:  # 0700: the key is not left readable
            cert, key = Path(scratch, "tls.crt"), Path(scratch, "tls.key")
            cert.write_bytes(pair[0])
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(pair[1])
            try:
                _server_context().load_cert_chain(str(cert), str(key))  # checked apart: a failed load leaves no half pair
            except ssl.SSLError as e:
                self._refused = pair
                log.warning("the serving certificate files do not load as a pair (keeping the one in service): %s", e)
                return False
            self.context.load_cert_chain(str(cert), str(key))  # exactly the bytes just checked
        if self._serving is not None:
            log.info("serving certificate reloaded from %s", self._cert_file)
        self._serving, self._refused = pair, None
        return True

    def trust(self, config: AuthConfig) -> None:
        """Add the config's CAs to what the handshake accepts (and start asking for client certificates)."""
        for pem in config.pem.values():
            if pem not in self._trusted:
                self.context.load_verify_locations(cadata=pem)
                self._trusted.add(pem)
        if self._trusted:
            self.context.verify_mode = ssl.CERT_OPTIONAL


def _server_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context
