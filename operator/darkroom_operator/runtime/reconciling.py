"""The contract between the runtime and the reconcilers: :class:`Reconciler`, :class:`Result`, :class:`Context`.

The runtime (:mod:`darkroom_operator.runtime.controllers`) owns informers, the workqueue, workers, leader
election and metrics; a reconciler owns one primary kind and the children it creates. A reconciler
is level-based: ``reconcile(key)`` re-reads everything from the cache, makes the cluster match the
primary object, and returns a :class:`Result` (or raises: the runtime then retries the key with
rate-limited backoff and logs the error). Keys are ``"<namespace>/<name>"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from cluster import CachedClient, Resource

if TYPE_CHECKING:
    from darkroom_operator.runtime.recording import EventRecorder
    from darkroom_operator.settings import OperatorSettings


@dataclass(frozen=True)
class Result:
    """What the runtime does with a key after a successful reconcile.

    ``requeue_after_s``: add the key back after this delay (e.g. a Task's deadline); None forgets
    the key's failure history and waits for the next event or resync.
    """

    requeue_after_s: float | None = None


@dataclass(frozen=True)
class Watch:
    """An extra informer a reconciler needs besides its primary kind and owned children.

    ``label_selector`` narrows it; ``indexers`` are passed to the informer; ``to_keys`` maps a
    changed object to the primary keys to enqueue (may return none).
    """

    resource: Resource
    label_selector: str | None = None
    indexers: dict[str, Callable[..., object]] = field(default_factory=dict)
    to_keys: Callable[..., list[str]] | None = None


@dataclass(frozen=True)
class Context:
    """What a reconciler is given: the cached client, an event recorder, settings and a clock (UTC)."""

    client: CachedClient
    recorder: EventRecorder
    settings: OperatorSettings
    now: Callable[[], datetime]


class Reconciler(Protocol):
    """One controller: a primary kind, the kinds it owns (children with a controller ownerReference
    to the primary, labelled ``app.kubernetes.io/managed-by=<settings.managed_by>``) and extra watches."""

    name: str
    primary: Resource
    owned: tuple[Resource, ...]
    watches: tuple[Watch, ...]

    def reconcile(self, key: str) -> Result: ...
