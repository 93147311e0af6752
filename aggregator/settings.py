"""The aggregated server's settings: one frozen dataclass, built once by ``python -m aggregator``.

Every field has a flag and an ``AGGREGATOR_*`` environment variable (:func:`from_args`); flag names
follow k8s.io/apiserver's where there is one (``--secure-port``, ``--tls-cert-file``, ...).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class AggregatorSettings:
    """``bind_address``/``secure_port``: where HTTPS is served (default 0.0.0.0:8443).
    ``tls_cert_file``/``tls_private_key_file``: the serving certificate; unset, a self-signed one is
    generated into ``cert_dir`` (for development; an APIService then needs ``insecureSkipTLSVerify``).
    ``kubeconfig``: the server's own credentials (unset: ``KUBECONFIG``, ``~/.kube/config``, then the
    in-cluster ServiceAccount). ``authn_cache_ttl_s``: how long a TokenReview answer is reused;
    ``authz_allow_ttl_s``/``authz_deny_ttl_s``: how long a SubjectAccessReview's allow/deny is reused
    (10 s each: k8s.io/apiserver's delegated defaults). ``auth_config_refresh_s``: how often the
    ``extension-apiserver-authentication`` ConfigMap is re-read. ``bookmark_interval_s``: between
    watch bookmarks. ``min_request_timeout_s``: a watch without ``timeoutSeconds`` lasts between this
    and twice this (kube's ``--min-request-timeout``, 1800 s). ``history_size``: changes kept for
    watches to resume from (older: 410). ``sync_timeout_s``: how long startup waits for the informers.
    """

    bind_address: str = "0.0.0.0"
    secure_port: int = 8443
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    cert_dir: Path = Path("apiserver.local.config/certificates")
    kubeconfig: Path | None = None
    authn_cache_ttl_s: float = 10.0
    authz_allow_ttl_s: float = 10.0
    authz_deny_ttl_s: float = 10.0
    auth_config_refresh_s: float = 60.0
    bookmark_interval_s: float = 60.0
    min_request_timeout_s: float = 1800.0
    history_size: int = 10_000
    sync_timeout_s: float = 60.0
    log_level: str = "INFO"

    def __post_init__(self) -> None:
        if (self.tls_cert_file is None) != (self.tls_private_key_file is None):
            raise ValueError("--tls-cert-file and --tls-private-key-file go together")
        if self.history_size < 1 or not 0 < self.secure_port < 65536:
            raise ValueError("history_size must be positive and secure_port a TCP port")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def from_args(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> AggregatorSettings:
    """Flags first, then ``AGGREGATOR_<FIELD>`` variables, then the defaults."""
    env = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(prog="python -m aggregator", description="The combinedtasks aggregated API server.")
    defaults = AggregatorSettings()
    for field in fields(AggregatorSettings):
        default = getattr(defaults, field.name)
        env_name = f"AGGREGATOR_{field.name.upper()}"
        parser.add_argument(_flag(field.name), dest=field.name, default=None, help=f"(env {env_name}; default {default})")
    parsed = vars(parser.parse_args(list(argv)))
    values: dict[str, Any] = {}
    for field in fields(AggregatorSettings):
        raw = parsed[field.name] if parsed[field.name] is not None else env.get(f"AGGREGATOR_{field.name.upper()}")
        if raw is None or raw == "":
            continue
        default = getattr(defaults, field.name)
        kind = type(default) if default is not None else Path
        try:
            values[field.name] = kind(raw)
        except ValueError as e:
            parser.error(f"{_flag(field.name)}: {e}")
    try:
        return AggregatorSettings(**values)
    except ValueError as e:
        parser.error(str(e))
