"""The query of a list or watch request (kube's ``ListOptions``), parsed and validated as kube does.

:func:`parse` reads ``labelSelector`` (:mod:`cluster.selectors`), ``fieldSelector`` (:mod:`cluster.fieldselectors`
over the fields :data:`FIELDS` names — ``metadata.name``, ``metadata.namespace``, ``spec.priority``,
``spec.taskState``), ``limit``, ``continue``, ``resourceVersion``, ``resourceVersionMatch``, ``watch``,
``allowWatchBookmarks``, ``sendInitialEvents`` and ``timeoutSeconds``, and answers bad input with the
status kube-apiserver gives: 400 BadRequest for what does not parse, 422 Invalid (``ListOptions``) for
combinations its validation forbids. Used by :mod:`aggregator.app`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aggregator.statuses import ApiError, bad_request, invalid_list_options
from cluster import fieldselectors
from cluster.errors import BadRequest
from cluster.fieldselectors import METADATA, FieldSelector, Value
from cluster.selectors import LabelSelector
from cluster.selectors import parse as parse_labels
from kinds.tasks import SELECTABLE

EXACT = "Exact"
NOT_OLDER_THAN = "NotOlderThan"


# The selectable fields of a CombinedTask: every kind's metadata fields and the Task CRD's selectableFields.
FIELDS: Mapping[str, Value] = {**METADATA, **SELECTABLE}


def parse_fields(text: str | None) -> FieldSelector:
    """A field selector (``a=b,c!=d``, ``==`` as ``=``); 400 for syntax errors and fields not in :data:`FIELDS`."""
    try:
        return fieldselectors.parse(text, FIELDS)
    except BadRequest as e:
        raise bad_request(e.message) from e


@dataclass(frozen=True)
class ListOptions:
    labels: LabelSelector
    fields: FieldSelector
    limit: int
    continue_token: str
    resource_version: str
    resource_version_match: str
    watch: bool
    allow_watch_bookmarks: bool
    send_initial_events: bool | None
    timeout_s: int | None

    @property
    def selects_all(self) -> bool:
        return self.labels.empty and self.fields.empty


def _bool(args: Mapping[str, str], name: str) -> bool | None:
    if name not in args:
        return None
    value = args[name].lower()
    if value in ("true", "1", "t"):
        return True
    if value in ("false", "0", "f", ""):
        return False
    raise bad_request(f'{name}: invalid value "{args[name]}": strconv.ParseBool: parsing "{args[name]}": invalid syntax')


def _int(args: Mapping[str, str], name: str) -> int | None:
    if name not in args or args[name] == "":
        return None
    try:
        return int(args[name])
    except ValueError:
        raise bad_request(f'{name}: invalid value "{args[name]}": strconv.ParseInt: parsing "{args[name]}": invalid syntax') from None


def parse(args: Mapping[str, str], *, watch_path: bool = False) -> ListOptions:
    """The list/watch options of a request's query; raises :class:`ApiError` (400 / 422) for bad input."""
    try:
        labels = parse_labels(args.get("labelSelector") or None)
    except BadRequest as e:
        raise bad_request(e.message) from e
    watch = bool(_bool(args, "watch")) or watch_path
    options = ListOptions(
        labels=labels,
        fields=parse_fields(args.get("fieldSelector")),
        limit=max(_int(args, "limit") or 0, 0),
        continue_token=args.get("continue", ""),
        resource_version=args.get("resourceVersion", ""),
        resource_version_match=args.get("resourceVersionMatch", ""),
        watch=watch,
        allow_watch_bookmarks=bool(_bool(args, "allowWatchBookmarks")),
        send_initial_events=_bool(args, "sendInitialEvents"),
        timeout_s=_int(args, "timeoutSeconds"),
    )
    causes = _watch_causes(options) if watch else _list_causes(options)
    if causes:
        raise invalid_list_options(causes)
    return options


def _forbidden(message: str, field: str = "resourceVersionMatch") -> tuple[str, str, str]:
    return (field, "FieldValueForbidden", f"Forbidden: {message}")


def _unsupported(value: str, supported: tuple[str, ...]) -> tuple[str, str, str]:
    names = ", ".join(f'"{s}"' for s in supported)
    return ("resourceVersionMatch", "FieldValueNotSupported", f'Unsupported value: "{value}": supported values: {names}')


def _list_causes(options: ListOptions) -> list[tuple[str, str, str]]:
    """k8s.io/apimachinery's ValidateListOptions for a list."""
    causes = []
    match = options.resource_version_match
    if match:
        if not options.resource_version:
            causes.append(_forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if options.continue_token:
            causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            causes.append(_unsupported(match, (EXACT, NOT_OLDER_THAN, "")))
        if match == EXACT and options.resource_version == "0":
            causes.append(_forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if options.send_initial_events is not None:
        causes.append(_forbidden("sendInitialEvents is forbidden for list", "sendInitialEvents"))
    return causes


def _watch_causes(options: ListOptions) -> list[tuple[str, str, str]]:
    """k8s.io/apimachinery's validateWatchOptions."""
    causes = []
    match = options.resource_version_match
    if options.send_initial_events is not None:
        if match != NOT_OLDER_THAN:
            causes.append(_forbidden(f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}"))
        if options.send_initial_events and not options.allow_watch_bookmarks:
            causes.append(_forbidden("sendInitialEvents requires setting allowWatchBookmarks to true", "allowWatchBookmarks"))
    if match:
        if options.send_initial_events is None:
            causes.append(_forbidden("resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != NOT_OLDER_THAN:
            causes.append(_unsupported(match, (NOT_OLDER_THAN,)))
        if options.continue_token:
            causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
    return causes


def resource_version_number(text: str) -> int:
    """A resourceVersion as the integer the view orders by; 400 as kube's storage answers for one that is not."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ApiError(400, "BadRequest", f'invalid resource version: resourceVersion: Invalid value: "{text}": invalid resource version')
    return value
