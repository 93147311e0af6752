"""Field-by-field comparison of the two sides' normalised transcripts of one sequence.

Steps are compared in order (a sequence whose two runs took different paths shows that as one
difference at the first step whose label differs). Within a step every field is compared: status
code, the Content-Type and Warning headers, the body. Lists whose elements all carry a distinct
name (``metadata.name`` for objects; ``name`` for discovery resources, table columns, containers;
``type`` for conditions) are compared element by element by that name and, separately, by the
order of the names both sides have, so one extra object on one side is one difference rather than
a shifted list. Other lists are compared by index.

JSON key order is not compared (it carries no meaning in JSON, and kube's is simply Go's struct
field order) except for ``metav1.Status``, whose field order was reported as a difference and is
cheap to match exactly (path suffix ``<key order>``). Used by ``test_corpus.py``.

Two things the clusters' shared use decides, not the servers, are left out. The product's own API
groups (``crds/``) in discovery lists: the corpus runs on the session's clusters, where the product's
tests on the same pytest-xdist worker may or may not have installed its CRDs on either side; the
corpus's own custom resources have groups of their own. And the order of managedFields entries of
one operation: kube sorts them by operation, then by the whole second each was written in, then by
manager — so under load the two runs of a sequence, seconds apart, may straddle a second boundary on
one side only; the order of the operations (Apply entries before Update ones) is still compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from fidelity.normalising import normalise
from fidelity.transcript import Step

REPOSITORY = Path(__file__).resolve().parents[3]
PRODUCT_GROUPS = frozenset(
    str(doc["spec"]["group"])
    for path in sorted((REPOSITORY / "crds").glob("*.yaml"))
    for doc in yaml.safe_load_all(path.read_text())
    if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"
)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


def show(value: Any, limit: int = 300) -> str:
    if value is ABSENT:
        return "<absent>"
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() if not isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Difference:
    """One place where the two servers disagree; ``key`` is what DIFFERENCES.md patterns match."""

    sequence: str
    step: str
    request: str
    path: str
    kube: Any
    dev: Any

    @property
    def key(self) -> str:
        return f"{self.sequence}/{self.step} {self.path} kube={show(self.kube)} dev={show(self.dev)}"

    def report(self) -> str:
        return f"{self.sequence}/{self.step} [{self.request}]\n    {self.path}\n    kube: {show(self.kube)}\n    dev:  {show(self.dev)}"


def _element_key(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    meta = item.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
        return f"{meta.get('namespace', '')}/{meta['name']}" if meta.get("namespace") else meta["name"]
    if isinstance(item.get("manager"), str) and isinstance(item.get("operation"), str):  # managedFields
        return f"{item['manager']}/{item['operation']}/{item.get('subresource', '')}".rstrip("/")
    if isinstance(item.get("name"), str):
        return str(item["name"])
    if isinstance(item.get("type"), str) and "status" in item:  # conditions
        return str(item["type"])
    return None


def _managed_fields(items: list[Any]) -> bool:
    return bool(items) and all(_element_key(i) is not None and isinstance(i.get("operation"), str) and "manager" in i for i in items)


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    if not items:
        return None
    keys = [_element_key(item) for item in items]
    if any(k is None for k in keys) or len(set(keys)) != len(keys):
        return None
    return dict(zip(keys, items, strict=True))  # type: ignore[arg-type]


def _segment(key: str) -> str:
    return f".{key}" if key.replace("_", "").replace("-", "").isalnum() else f"[{key}]"


def summary(document: dict[str, Any]) -> dict[str, Any]:
    """What identifies a response body: a Status by code, reason and message, an object by kind and name."""
    if document.get("kind") == "Status":
        return {k: document.get(k) for k in ("kind", "code", "reason", "message") if k in document}
    meta: dict[str, Any] = document["metadata"] if isinstance(document.get("metadata"), dict) else {}
    return {"kind": document.get("kind"), "name": meta.get("name")}


def _different_documents(kube: dict[str, Any], dev: dict[str, Any]) -> bool:
    """One side answered with a Status where the other sent an object (or a different kind)."""
    kinds = (kube.get("kind"), dev.get("kind"))
    return all(isinstance(k, str) for k in kinds) and kinds[0] != kinds[1] and "Status" in kinds


def compare_values(path: str, kube: Any, dev: Any, out: list[tuple[str, Any, Any]], subset: tuple[str, ...] = ()) -> None:
    """Append (path, kube value, dev value) for every difference; ``subset``: see :attr:`Step.subset`.

    Where one side sent a Status and the other an object, that is one difference (their summaries),
    not one per field.
    """
    if isinstance(kube, dict) and isinstance(dev, dict) and _different_documents(kube, dev):
        out.append((f"{path}.<document>", summary(kube), summary(dev)))
        return
    if isinstance(kube, dict) and isinstance(dev, dict):
        if kube.get("kind") == "Status" and dev.get("kind") == "Status" and list(kube) != list(dev):
            out.append((f"{path}.<key order>", list(kube), list(dev)))
        keys = [k for k in kube if k in dev or path not in subset] + [k for k in dev if k not in kube]
        for key in keys:
            compare_values(path + _segment(key), kube.get(key, ABSENT), dev.get(key, ABSENT), out, subset)
        return
    if isinstance(kube, list) and isinstance(dev, list):
        kube_keyed, dev_keyed = _keyed(kube), _keyed(dev)
        if kube_keyed is None and not kube and dev_keyed is not None:
            kube_keyed = {}
        if dev_keyed is None and not dev and kube_keyed is not None:
            dev_keyed = {}
        if kube_keyed is not None and dev_keyed is not None:
            if path in subset:
                kube_keyed = {k: v for k, v in kube_keyed.items() if k in dev_keyed}
            kube_keyed = {k: v for k, v in kube_keyed.items() if k not in PRODUCT_GROUPS}
            dev_keyed = {k: v for k, v in dev_keyed.items() if k not in PRODUCT_GROUPS}
            for key in [*kube_keyed, *(k for k in dev_keyed if k not in kube_keyed)]:
                compare_values(f"{path}[name={key}]", kube_keyed.get(key, ABSENT), dev_keyed.get(key, ABSENT), out, subset)
            common_kube = [k for k in kube_keyed if k in dev_keyed]
            common_dev = [k for k in dev_keyed if k in kube_keyed]
            if _managed_fields(kube):  # their order by operation only (see the module docstring)
                common_kube = [kube_keyed[k]["operation"] for k in common_kube]
                common_dev = [dev_keyed[k]["operation"] for k in common_dev]
            if common_kube != common_dev:
                out.append((f"{path}.<order>", common_kube, common_dev))
            return
        for i in range(max(len(kube), len(dev))):
            compare_values(f"{path}[{i}]", kube[i] if i < len(kube) else ABSENT, dev[i] if i < len(dev) else ABSENT, out, subset)
        return
    if kube is ABSENT or dev is ABSENT or type(kube) is not type(dev) or kube != dev:
        out.append((path, kube, dev))


_SEGMENT = re.compile(r"\.([^.\[]+)|\[name=([^\]]+)\]|\[([^\]]+)\]")


def drop(view: Any, path: str) -> None:
    """Remove ``path`` (comparer syntax below the step: ``body.a[b.c][name=x]``) from ``view``, and any
    map or list that removing it left empty."""
    segments = [(m.group(2), "name") if m.group(2) else (m.group(1) or m.group(3), "key") for m in _SEGMENT.finditer("." + path)]
    _drop(view, segments)


def _drop(node: Any, segments: list[tuple[str, str]]) -> bool:
    """True when ``node`` became empty through the removal."""
    key, how = segments[0]
    if how == "key" and isinstance(node, dict) and key in node:
        if len(segments) == 1 or _drop(node[key], segments[1:]):
            del node[key]
    elif how == "name" and isinstance(node, list):
        for i, item in enumerate(node):
            if _element_key(item) == key and (len(segments) == 1 or _drop(item, segments[1:])):
                del node[i]
                break
    else:
        return False
    return not node


def compare(sequence: str, kube_steps: list[Step], dev_steps: list[Step]) -> list[Difference]:
    """Every difference between the two runs of ``sequence``."""
    kube_views, dev_views = normalise(kube_steps), normalise(dev_steps)
    differences: list[Difference] = []
    for i in range(max(len(kube_steps), len(dev_steps))):
        kube_step = kube_steps[i] if i < len(kube_steps) else None
        dev_step = dev_steps[i] if i < len(dev_steps) else None
        if kube_step is None or dev_step is None or kube_step.label != dev_step.label:
            label = (kube_step or dev_step).label  # type: ignore[union-attr]
            request = (kube_step or dev_step).request  # type: ignore[union-attr]
            differences.append(
                Difference(
                    sequence,
                    label,
                    request,
                    "<step>",
                    kube_step.label if kube_step else ABSENT,
                    dev_step.label if dev_step else ABSENT,
                )
            )
            break
        found: list[tuple[str, Any, Any]] = []
        for path in kube_step.ignore:
            drop(kube_views[i], path)
            drop(dev_views[i], path)
        compare_values(kube_step.kind, kube_views[i], dev_views[i], found, tuple(f"{kube_step.kind}.{p}" for p in kube_step.subset))
        differences += [Difference(sequence, kube_step.label, kube_step.request, p, k, d) for p, k, d in found]
    return differences
