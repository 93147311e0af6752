"""devcluster's settings: one frozen dataclass, built by the CLI or by whoever embeds the server."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ServerSettings:
    """How one devcluster instance runs.

    ``port`` 0 picks a free port (read it back from :attr:`DevCluster.port`). ``history_size`` is
    how many recent changes are kept for watches and consistent list continuation; older
    resourceVersions get 410 Gone, like a compacted etcd (tests shrink it to force that).
    ``sqlite_synchronous`` "NORMAL" survives a killed process (every acknowledged write is in the
    WAL); "FULL" also survives power loss at some cost in write throughput.
    """

    host: str = "127.0.0.1"
    port: int = 6443
    data_dir: Path = Path(".devcluster")
    kubeconfig: Path | None = None
    history_size: int = 10_000
    bookmark_interval_s: float = 60.0
    deployment_ready_delay_s: float = 1.0
    default_watch_timeout_s: float = 1800.0
    sqlite_synchronous: str = "NORMAL"
    max_request_bytes: int = 3 * 1024 * 1024
    audit_log: Path | None = None
