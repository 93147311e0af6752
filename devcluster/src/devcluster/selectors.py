"""Label and field selectors of list and watch requests, parsed and matched the way kube-apiserver does it.

Label selectors are the shared ``labelselectors`` package (``labels.Parse`` token for token, kube's
error texts); this module turns its :class:`~labelselectors.InvalidSelector` into the 400 kube sends.

Field selectors follow ``k8s.io/apimachinery/pkg/fields.ParseSelector`` (comma-separated terms,
``=`` / ``==`` / ``!=``, backslash escaping of ``\\ , =`` in values) followed by the per-kind
field-label conversion the API server runs before listing: each kind accepts ``metadata.name``,
usually ``metadata.namespace`` and the extra labels in :attr:`ResourceType.field_labels`; anything
else is a 400 whose message is the one that kind's conversion function returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import labelselectors
from devcluster import gofmt
from devcluster.errors import bad_request
from devcluster.resources import ResourceType
from labelselectors import LabelSelector, Requirement

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "field_value",
    "label_selector_from_dict",
    "parse_field_selector",
    "parse_label_selector",
]


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a ``labelSelector`` query value (``labels.Parse``); raises 400 BadRequest when invalid."""
    try:
        return labelselectors.parse(text)
    except labelselectors.InvalidSelector as exc:
        raise bad_request(str(exc)) from None


def label_selector_from_dict(selector: dict[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: None matches nothing, ``{}`` matches everything; 400 when invalid."""
    try:
        return labelselectors.from_dict(selector)
    except labelselectors.InvalidSelector as exc:
        raise bad_request(str(exc)) from None


# ---------------------------------------------------------------------------------------------
# Field selectors
# ---------------------------------------------------------------------------------------------


class _SelectorError(Exception):
    pass


# Kinds whose field-label conversion function reports "field label not supported: <label>"
# (k8s.io/kubernetes/pkg/apis/core/v1/conversion.go). Custom resources use the same text
# (apiextensions-apiserver's crConverter). Every other kind falls back to
# runtime.DefaultMetaV1FieldSelectorConversion, which accepts metadata.name/metadata.namespace
# and words its error differently.
_CONVERTING_KINDS = frozenset(
    {("", "Pod"), ("", "Node"), ("", "ReplicationController"), ("", "Event"), ("", "Namespace"), ("", "Secret"), ("", "Service")}
)
# Labels a kind rewrites before matching (old clients' spellings).
_LABEL_ALIASES: dict[tuple[str, str], dict[str, str]] = {("", "Pod"): {"spec.host": "spec.nodeName"}}


@dataclass(frozen=True)
class FieldRequirement:
    """One field term: ``field`` equals (``equal``) or differs from ``value``."""

    field: str
    value: str
    equal: bool = True

    def matches(self, fields: dict[str, str]) -> bool:
        return (fields.get(self.field, "") == self.value) == self.equal

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return f"{self.field}{'=' if self.equal else '!='}{escaped}"


def _render_field(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return ""


def _lookup(obj: dict[str, Any], path: str) -> Any:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current


def field_value(obj: dict[str, Any], label: str, kind: str = "", group: str = "") -> str:
    """The string a field label has on ``obj`` (``""`` when absent), as the kind's field set builds it."""
    if not group and kind == "Event":
        if label == "source":
            source = _lookup(obj, "source.component")
            return _render_field(source) if source else _render_field(obj.get("reportingComponent"))
    elif not group and kind == "Pod":
        if label == "status.podIP":
            pod_ips = _lookup(obj, "status.podIPs")
            if isinstance(pod_ips, list) and pod_ips and isinstance(pod_ips[0], dict):
                return _render_field(pod_ips[0].get("ip"))
        elif label == "spec.hostNetwork":
            return "true" if _lookup(obj, "spec.hostNetwork") is True else "false"
    return _render_field(_lookup(obj, label))


@dataclass(frozen=True)
class FieldSelector:
    """A parsed, converted field selector for one kind: the AND of its terms."""

    requirements: tuple[FieldRequirement, ...] = ()
    kind: str = ""
    group: str = ""

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, obj: dict[str, Any]) -> bool:
        if not self.requirements:
            return True
        fields = {r.field: field_value(obj, r.field, self.kind, self.group) for r in self.requirements}
        return all(r.matches(fields) for r in self.requirements)

    def requires_exact_match(self, field: str) -> str | None:
        for r in self.requirements:
            if r.field == field and r.equal:
                return r.value
        return None

    def exact_name(self) -> str | None:
        """The name the selector pins with ``metadata.name=`` (``RequiresExactMatch``), else None."""
        return self.requires_exact_match("metadata.name")

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape(value: str) -> str:
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise _SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go formats the rune with %v, i.e. as its code point.
            raise _SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise _SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _parse_terms(text: str) -> list[FieldRequirement]:
    """``fields.ParseSelector`` without the label conversion."""
    terms: list[FieldRequirement] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise _SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        terms.append(FieldRequirement(lhs, _unescape(rhs), op != "!="))
    return terms


# (group, kind, namespaced, is custom, extra field labels): what field-label conversion depends on.
_KindKey = tuple[str, str, bool, bool, tuple[str, ...]]


def _convert_label(label: str, kind: _KindKey) -> str:
    """The kind's field-label conversion: the label to match on, or a 400 naming it."""
    group, kind_name, namespaced, custom, extra = kind
    label = _LABEL_ALIASES.get((group, kind_name), {}).get(label, label)
    converting = custom or (group, kind_name) in _CONVERTING_KINDS
    if label == "metadata.name" or label in extra:
        return label
    if label == "metadata.namespace" and (namespaced or not converting):
        return label
    if converting:
        raise bad_request(f"field label not supported: {label}")
    raise bad_request(f'{gofmt.quote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"')


@lru_cache(maxsize=512)
def _parse_field_selector_cached(text: str, kind: _KindKey) -> FieldSelector:
    try:
        terms = _parse_terms(text)
    except _SelectorError as exc:
        raise bad_request(str(exc)) from None
    converted = tuple(FieldRequirement(_convert_label(t.field, kind), t.value, t.equal) for t in terms)
    return FieldSelector(converted, kind[1], kind[0])


def parse_field_selector(text: str | None, resource: ResourceType) -> FieldSelector:
    """Parse a ``fieldSelector`` query value for ``resource``; raises 400 BadRequest when invalid."""
    if not text:
        return FieldSelector((), resource.kind, resource.group)
    key: _KindKey = (resource.group, resource.kind, resource.namespaced, resource.is_custom, tuple(resource.field_labels))
    return _parse_field_selector_cached(text, key)
