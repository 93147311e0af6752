"""Settings for cluster access: frozen dataclasses with documented defaults, units in the names.

Entry points (``make api``, the reconciler's ``__main__``) build them once, from flags and the
environment, and pass them to :func:`cluster.connecting.connect`, :class:`cluster.caches.Cache`
and :class:`cluster.clients.CachedClient`. Nothing in ``cluster/`` reads the environment on its own
except :func:`cluster.connecting.connect`, which is handed the mapping to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ConnectionSettings:
    """Which cluster to talk to and how long to wait for it.

    ``kubeconfig``: an explicit kubeconfig file (the ``--kubeconfig`` flag, or the file an embedded
    devcluster wrote); when None, ``KUBECONFIG`` / ``~/.kube/config`` and then in-cluster config are
    tried. ``context``: a kubeconfig context other than the current one. ``connect_timeout_s`` bounds
    TCP/TLS setup of every request; ``request_timeout_s`` bounds a whole non-watch request.
    ``probe``: check the cluster answers ``/version`` before returning, so a wrong or dead cluster is
    reported at startup with what was tried.
    """

    kubeconfig: Path | None = None
    context: str | None = None
    connect_timeout_s: float = 5.0
    request_timeout_s: float = 30.0
    probe: bool = True


@dataclass(frozen=True)
class InformerSettings:
    """How an informer lists and watches.

    ``page_size``: objects per list page (``limit``). ``watch_timeout_s``: the server-side
    ``timeoutSeconds`` of each watch request (the server ends the watch cleanly after it; the
    informer re-watches from its last resourceVersion, no relist). ``read_timeout_s``: how long a
    watch may stay completely silent before it is opened again from the same resourceVersion, at once and without a
    warning. A quiet watch does that routinely: kube-apiserver v1.37 sent a quiet ConfigMaps watch its first bookmark
    after ~120 s, an Events watch none in 200 s (devcluster: every 60 s by default). It is also what notices a
    connection that died without closing.
    ``backoff_initial_s`` / ``backoff_max_s``: exponential backoff (doubling, with jitter) between
    failed attempts; reset after a successful list or a watch that delivered anything.
    """

    page_size: int = 500
    watch_timeout_s: float = 300.0
    read_timeout_s: float = 90.0
    backoff_initial_s: float = 0.2
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        if self.page_size <= 0:
            raise ValueError("page_size must be positive")
        if self.read_timeout_s <= 0 or self.watch_timeout_s <= 0:
            raise ValueError("timeouts must be positive")
        if self.backoff_initial_s <= 0 or self.backoff_max_s < self.backoff_initial_s:
            raise ValueError("backoff_initial_s must be positive and at most backoff_max_s")


@dataclass(frozen=True)
class ClientSettings:
    """How the cached client behaves.

    ``field_manager``: the default ``fieldManager`` of writes and server-side apply.
    ``read_your_writes_timeout_s``: how long a read waits for the cache to reach a version this
    client wrote before giving up with :class:`cluster.errors.Unavailable` (the watch is down).
    """

    field_manager: str = "darkroom-control-panel"
    read_your_writes_timeout_s: float = 10.0
