"""The aggregated server's settings: one frozen dataclass, built once by ``python -m aggregator``.

Every field has a flag and an ``AGGREGATOR_<FIELD>`` environment variable, declared on the field
(:func:`envsettings.variable`, parsed by :mod:`envsettings` like the API's and the reconciler's); flag names
follow k8s.io/apiserver's where there is one (``--secure-port``, ``--tls-cert-file``, ...). :func:`from_args`:
flags first, then the variables, then the defaults.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import envsettings
from envsettings import variable

ENV_PREFIX = "AGGREGATOR_"


@dataclass(frozen=True)
class AggregatorSettings:
    """Everything ``python -m aggregator`` can be told; each field's variable and meaning are in its metadata.

    Groups: where and how HTTPS is served, the server's own credentials, the delegated authn/authz caches
    (k8s.io/apiserver's defaults), watches (bookmarks, timeouts, history), startup and logging.
    """

    bind_address: str = field(default="0.0.0.0", metadata=variable(f"{ENV_PREFIX}BIND_ADDRESS", doc="Where HTTPS listens."))
    secure_port: int = field(
        default=8443, metadata=variable(f"{ENV_PREFIX}SECURE_PORT", doc="HTTPS port (the APIService's Service targets it).")
    )
    tls_cert_file: Path | None = field(
        default=None,
        metadata=variable(
            f"{ENV_PREFIX}TLS_CERT_FILE",
            doc="Serving certificate, with the TLS private key file (unset: a self-signed one in the cert dir, for development;"
            " an APIService then needs insecureSkipTLSVerify).",
        ),
    )
    tls_private_key_file: Path | None = field(
        default=None, metadata=variable(f"{ENV_PREFIX}TLS_PRIVATE_KEY_FILE", doc="The serving certificate's private key.")
    )
    cert_dir: Path = field(
        default=Path("apiserver.local.config/certificates"),
        metadata=variable(f"{ENV_PREFIX}CERT_DIR", doc="Where the self-signed certificate goes (reused while it exists)."),
    )
    kubeconfig: Path | None = field(
        default=None,
        metadata=variable(
            f"{ENV_PREFIX}KUBECONFIG",
            doc="The server's own credentials (unset: KUBECONFIG, ~/.kube/config, then the in-cluster ServiceAccount).",
        ),
    )
    authn_cache_ttl_s: float = field(
        default=10.0, metadata=variable(f"{ENV_PREFIX}AUTHN_CACHE_TTL_S", doc="How long a TokenReview answer is reused.")
    )
    authz_allow_ttl_s: float = field(
        default=10.0,
        metadata=variable(
            f"{ENV_PREFIX}AUTHZ_ALLOW_TTL_S", doc="How long a SubjectAccessReview's allow is reused (k8s.io/apiserver's default)."
        ),
    )
    authz_deny_ttl_s: float = field(
        default=10.0,
        metadata=variable(
            f"{ENV_PREFIX}AUTHZ_DENY_TTL_S", doc="How long a SubjectAccessReview's deny is reused (k8s.io/apiserver's default)."
        ),
    )
    auth_config_refresh_s: float = field(
        default=60.0,
        metadata=variable(
            f"{ENV_PREFIX}AUTH_CONFIG_REFRESH_S",
            doc="How often kube-system/extension-apiserver-authentication and the serving certificate's files are re-read.",
        ),
    )
    bookmark_interval_s: float = field(
        default=60.0, metadata=variable(f"{ENV_PREFIX}BOOKMARK_INTERVAL_S", doc="Between watch BOOKMARKs (when asked for).")
    )
    min_request_timeout_s: float = field(
        default=1800.0,
        metadata=variable(
            f"{ENV_PREFIX}MIN_REQUEST_TIMEOUT_S",
            doc="A watch without timeoutSeconds lasts between this and twice this (kube's --min-request-timeout).",
        ),
    )
    history_size: int = field(
        default=10_000,
        metadata=variable(f"{ENV_PREFIX}HISTORY_SIZE", doc="Changes kept for watches to resume from (older: 410 Expired)."),
    )
    sync_timeout_s: float = field(
        default=60.0, metadata=variable(f"{ENV_PREFIX}SYNC_TIMEOUT_S", doc="How long startup waits for the Task and Event informers.")
    )
    log_level: str = field(default="INFO", metadata=variable(f"{ENV_PREFIX}LOG_LEVEL", doc="Logging level."))

    def __post_init__(self) -> None:
        if (self.tls_cert_file is None) != (self.tls_private_key_file is None):
            raise ValueError("--tls-cert-file and --tls-private-key-file go together")
        if self.history_size < 1 or not 0 < self.secure_port < 65536:
            raise ValueError("history_size must be positive and secure_port a TCP port")


def from_args(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> AggregatorSettings:
    """Flags first, then ``AGGREGATOR_<FIELD>`` variables, then the defaults; a bad value is a usage error (exit 2)."""
    parser = argparse.ArgumentParser(prog="python -m aggregator", description="The combinedtasks aggregated API server.")
    envsettings.add_flags(parser, AggregatorSettings)
    flags = vars(parser.parse_args(list(argv)))
    try:
        return envsettings.from_environ(AggregatorSettings, os.environ if environ is None else environ, **flags)
    except ValueError as e:
        parser.error(str(e))
