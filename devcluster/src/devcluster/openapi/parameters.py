"""The query and path parameters of generated operations, with kube-apiserver's descriptions.

Which verb takes which parameters (list, write, patch, delete, deletecollection), the name and
namespace path parameters, and the response/body helpers operations share. Used by ``operations.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

# --------------------------------------------------------------------------------------------
# parameters


def _string_param(name: str, description: str, where: str = "query", required: bool = False) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where, "description": description}
    if required:
        param["required"] = True
    param["schema"] = {"type": "string", "uniqueItems": True}
    return param


def _typed_param(name: str, description: str, type_: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": {"type": type_, "uniqueItems": True}}


_PARAMS: dict[str, dict[str, Any]] = {
    "allowWatchBookmarks": _typed_param(
        "allowWatchBookmarks",
        'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may '
        "ignore this flag and bookmarks are sent at the server's discretion.",
        "boolean",
    ),
    "continue": _string_param(
        "continue",
        "The continue option should be set when retrieving more results from the server. Since this value is server "
        "defined, clients may only use the continue value from a previous query result with identical query parameters "
        "(except for the value of continue).",
    ),
    "dryRun": _string_param(
        "dryRun",
        "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive "
        "will result in an error response and no further processing of the request. Valid values are: - All: all dry run "
        "stages will be processed",
    ),
    "fieldManager": _string_param(
        "fieldManager",
        "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less "
        "than or 128 characters long, and only contain printable characters, as defined by "
        "https://golang.org/pkg/unicode/#IsPrint.",
    ),
    "fieldSelector": _string_param(
        "fieldSelector", "A selector to restrict the list of returned objects by their fields. Defaults to everything."
    ),
    "fieldValidation": _string_param(
        "fieldValidation",
        "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown "
        "or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped "
        "from the object, and will ignore all but the last duplicate field that the decoder encounters. - Warn: This will "
        "send a warning via the standard warning response header for each unknown field that is dropped from the object, "
        "and for each duplicate field that is encountered. The request will still succeed if there are no other errors, "
        "and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail "
        "the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate "
        "fields are present. The error returned from the server will contain all unknown and duplicate fields "
        "encountered.",
    ),
    "force": _typed_param(
        "force",
        'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other '
        "people. Force flag must be unset for non-apply patch requests.",
        "boolean",
    ),
    "gracePeriodSeconds": _typed_param(
        "gracePeriodSeconds",
        "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero "
        "indicates delete immediately. If this value is nil, the default grace period for the specified type will be used.",
        "integer",
    ),
    "ignoreStoreReadErrorWithClusterBreakingPotential": _typed_param(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with "
        "a corrupt object error.",
        "boolean",
    ),
    "labelSelector": _string_param(
        "labelSelector", "A selector to restrict the list of returned objects by their labels. Defaults to everything."
    ),
    "limit": _typed_param(
        "limit",
        "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the "
        "`continue` field on the list metadata to a value that can be used with the same initial query to retrieve the "
        "next set of results.",
        "integer",
    ),
    "orphanDependents": _typed_param(
        "orphanDependents",
        "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects "
        'be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list.',
        "boolean",
    ),
    "pretty": _string_param(
        "pretty",
        (
            "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a "
            "browser or command-line HTTP tool (curl and wget)."
        ),
    ),
    "propagationPolicy": _string_param(
        "propagationPolicy",
        "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not "
        "both. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
    ),
    "resourceVersion": _string_param(
        "resourceVersion",
        "resourceVersion sets a constraint on what resource versions a request may be served from. Defaults to unset",
    ),
    "resourceVersionMatch": _string_param(
        "resourceVersionMatch",
        "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that "
        "resourceVersionMatch be set for list calls where resourceVersion is set. Defaults to unset",
    ),
    "sendInitialEvents": _typed_param(
        "sendInitialEvents",
        "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with "
        "synthetic events to produce the current state of objects in the collection.",
        "boolean",
    ),
    "timeoutSeconds": _typed_param(
        "timeoutSeconds",
        "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
        "integer",
    ),
    "watch": _typed_param(
        "watch",
        "Watch for changes to the described resources and return them as a stream of add, update, and remove "
        "notifications. Specify resourceVersion.",
        "boolean",
    ),
}

_LIST_PARAMS = (
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
)
_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
_PATCH_PARAMS = ("dryRun", "fieldManager", "fieldValidation", "force")
_DELETE_PARAMS = (
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
)
_DELETECOLLECTION_PARAMS = (
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
)


def _params(names: Iterable[str]) -> list[dict[str, Any]]:
    return [copy.deepcopy(_PARAMS[name]) for name in names]


def _name_param(kind: str, what: str = "") -> dict[str, Any]:
    return _string_param("name", f"name of the {what or kind}", where="path", required=True)


def _namespace_param() -> dict[str, Any]:
    return _string_param("namespace", "object name and auth scope, such as for teams and projects", where="path", required=True)
