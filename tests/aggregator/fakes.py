"""An informer stand-in for the view's unit tests: a real cluster.stores.Store whose changes reach the
handlers at once, on the calling thread (the real informer's dispatcher does it on its own thread)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cluster.bodies import FrozenDict, freeze
from cluster.indexers import IndexFunction
from cluster.stores import Store


class FakeInformer:
    def __init__(self, indexers: Mapping[str, IndexFunction]) -> None:
        self.store = Store(index_functions=indexers)
        self.handlers: list[dict[str, Callable[..., Any] | None]] = []
        self.has_synced = True

    def add_handler(self, **handlers: Callable[..., Any] | None) -> None:
        self.handlers.append(handlers)

    def apply(self, kind: str, obj: Mapping[str, Any]) -> FrozenDict:
        frozen: FrozenDict = freeze(dict(obj))
        delta = self.store.apply(kind, frozen)
        if delta is None:
            return frozen
        change, new, old = delta
        for handler in self.handlers:
            if change == "ADDED" and handler.get("on_add"):
                handler["on_add"](new)  # type: ignore[misc]
            elif change == "MODIFIED" and handler.get("on_update"):
                handler["on_update"](old, new)  # type: ignore[misc]
            elif change == "DELETED" and handler.get("on_delete"):
                handler["on_delete"](new)  # type: ignore[misc]
        return frozen


def task(
    name: str, rv: int, *, uid: str | None = None, namespace: str = "ns", priority: int = 1, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "example.example.com/v1",
        "kind": "Task",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}", "resourceVersion": str(rv), "labels": labels or {}},
        "spec": {"priority": priority, "deadline": "2030-01-01T00:00:00Z"},
    }


def event(name: str, rv: int, task_uid: str, *, first: str = "2030-01-01T00:00:00Z", namespace: str = "ns") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"e-{name}",
            "resourceVersion": str(rv),
            "labels": {"example.example.com/task-uid": task_uid},
        },
        "involvedObject": {"kind": "Task", "uid": task_uid},
        "reason": name,
        "firstTimestamp": first,
    }
