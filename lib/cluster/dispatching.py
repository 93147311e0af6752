"""Delivering an informer's changes to its handlers, on a thread of their own.

:class:`Dispatcher` is owned by one :class:`cluster.informers.Informer`: the watch thread enqueues
deltas and returns to reading at once, so a slow handler — or one that writes and then reads its own
write through the cached client, which waits for this very informer — can never stall the cache.
Handlers run one at a time in event order; an exception in a handler is logged, not propagated. Adds of
the initial list — the objects already cached when a handler subscribes (the replay), and the informer's
first list — go to a handler's ``on_initial_add`` when it has one (client-go's ``isInInitialList``): a
controller queues them at low priority.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cluster.bodies import FrozenDict
from cluster.stores import Delta

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Handler:
    """Callbacks for one subscriber; any may be None. ``on_update`` gets (old, new); ``on_initial_add`` gets the adds
    of the initial list (None: ``on_add`` gets them too)."""

    on_add: Callable[[FrozenDict], Any] | None = None
    on_update: Callable[[FrozenDict, FrozenDict], Any] | None = None
    on_delete: Callable[[FrozenDict], Any] | None = None
    on_initial_add: Callable[[FrozenDict], Any] | None = None

    def deliver(self, delta: Delta, *, initial: bool = False) -> None:
        kind, obj, previous = delta
        if kind == "ADDED" and initial and self.on_initial_add is not None:
            self.on_initial_add(obj)
        elif kind == "ADDED" and self.on_add is not None:
            self.on_add(obj)
        elif kind == "MODIFIED" and self.on_update is not None:
            self.on_update(previous if previous is not None else obj, obj)
        elif kind == "DELETED" and self.on_delete is not None:
            self.on_delete(obj)


_STOP = object()


class Dispatcher:
    """A queue of (handlers, delta) drained by one thread."""

    def __init__(self, *, name: str) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._handlers: list[Handler] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def add(self, handler: Handler, *, replay: Iterable[FrozenDict] = ()) -> None:
        """Subscribe; ``replay`` (the objects already cached) is delivered to this handler as adds first."""
        with self._lock:
            self._handlers.append(handler)
            for obj in replay:
                self._queue.put(((handler,), ("ADDED", obj, None), True))

    @property
    def has_handlers(self) -> bool:
        """Whether anyone subscribed (an informer need not keep the deltas of a list nobody gets)."""
        return bool(self._handlers)

    def publish(self, deltas: Iterable[Delta], *, initial: bool = False) -> None:
        """Queue ``deltas`` for every handler; ``initial``: they are the informer's first list."""
        with self._lock:
            handlers = tuple(self._handlers)
            if handlers:
                for delta in deltas:
                    self._queue.put((handlers, delta, initial))

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float) -> None:
        self._queue.put(_STOP)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            handlers, delta, initial = item
            for handler in handlers:
                try:
                    handler.deliver(delta, initial=initial)
                except Exception:
                    log.exception("informer handler failed on %s of %s", delta[0], delta[1].get("metadata", {}).get("name"))
