"""OpenAPI v3 of ``search.task.example.example.com/v1``: what ``kubectl explain combinedtasks`` reads.

``GET /openapi/v3`` lists the group-version document (``serverRelativeURL`` with a content hash, as
kube-apiserver does), ``GET /openapi/v3/apis/<group>/v1`` is the document: the paths this server
serves and the schemas ``CombinedTask`` (tagged ``x-kubernetes-group-version-kind``, which is how
kubectl finds it), ``CombinedTaskList``, and the ``core/v1`` Event and ``meta/v1`` types they refer to.
The Task's ``spec`` schema is read from its CRD in ``crds/`` (the source of truth), so the two cannot
drift. Built once per process by :func:`document`.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

import orjson
import yaml

import productfiles
from aggregator import resources

CRD_FILE = "tasks.example.example.com.yaml"
PREFIX = "com.example.example.task.search.v1"
META = "io.k8s.apimachinery.pkg.apis.meta.v1"
CORE = "io.k8s.api.core.v1"


def _ref(name: str, description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"allOf": [{"$ref": f"#/components/schemas/{name}"}]}
    if description:
        schema["description"] = description
    return schema


def _s(description: str, type_: str = "string", **more: Any) -> dict[str, Any]:
    return {"type": type_, "description": description, **more}


def _task_schema() -> dict[str, Any]:
    crd = yaml.safe_load(productfiles.crd_file(CRD_FILE).read_text())
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def _meta_schemas() -> dict[str, Any]:
    time = {"type": "string", "format": "date-time", "description": "Time is a wrapper around time.Time (RFC 3339)."}
    micro = {"type": "string", "format": "date-time", "description": "MicroTime is version of Time with microsecond level precision."}
    labels = {"type": "object", "additionalProperties": {"type": "string", "default": ""}}
    return {
        f"{META}.Time": time,
        f"{META}.MicroTime": micro,
        f"{META}.ObjectMeta": {
            "type": "object",
            "description": "ObjectMeta is metadata that all persisted resources must have.",
            "properties": {
                "name": _s("Name must be unique within a namespace."),
                "namespace": _s("Namespace defines the space within which each name must be unique."),
                "uid": _s("UID is the unique in time and space value for this object."),
                "resourceVersion": _s("An opaque value that represents the internal version of this object."),
                "generation": _s("A sequence number representing a specific generation of the desired state.", "integer", format="int64"),
                "creationTimestamp": _ref(f"{META}.Time", "When this object was created."),
                "deletionTimestamp": _ref(f"{META}.Time", "When this object will be deleted."),
                "labels": {**labels, "description": "Map of string keys and values that can be used to organize objects."},
                "annotations": {**labels, "description": "Unstructured key value map stored with a resource."},
                "finalizers": {"type": "array", "items": {"type": "string"}, "description": "Must be empty before the object is deleted."},
            },
        },
        f"{META}.ListMeta": {
            "type": "object",
            "description": "ListMeta describes metadata that synthetic resources must have, including lists.",
            "properties": {
                "resourceVersion": _s("The version of the list; a watch from it continues after it."),
                "continue": _s("Set when the list was cut at ``limit``: pass it as ``continue`` for the next page."),
                "remainingItemCount": _s("How many more items the list has after this page.", "integer", format="int64"),
            },
        },
    }


def _event_schemas() -> dict[str, Any]:
    return {
        f"{CORE}.ObjectReference": {
            "type": "object",
            "description": "ObjectReference contains enough information to let you inspect or modify the referred object.",
            "properties": {
                k: _s(d)
                for k, d in (
                    ("apiVersion", "API version of the referent."),
                    ("kind", "Kind of the referent."),
                    ("name", "Name of the referent."),
                    ("namespace", "Namespace of the referent."),
                    ("uid", "UID of the referent."),
                    ("resourceVersion", "Specific resourceVersion to which this reference is made, if any."),
                    ("fieldPath", "The field of the referent this is about, if not the entire object."),
                )
            },
        },
        f"{CORE}.EventSource": {
            "type": "object",
            "description": "EventSource contains information for an event.",
            "properties": {
                "component": _s("Component from which the event is generated."),
                "host": _s("Node name on which the event is generated."),
            },
        },
        f"{CORE}.EventSeries": {
            "type": "object",
            "description": "EventSeries contain information on series of events.",
            "properties": {
                "count": _s("Number of occurrences in this series up to the last heartbeat time.", "integer", format="int32"),
                "lastObservedTime": _ref(f"{META}.MicroTime", "Time of the last occurrence observed."),
            },
        },
        f"{CORE}.Event": {
            "type": "object",
            "description": "Event is a report of an event somewhere in the cluster (here: in the life of a Task).",
            "required": ["metadata", "involvedObject"],
            "properties": {
                "apiVersion": _s("APIVersion of this representation of the Event."),
                "kind": _s("Kind: Event."),
                "metadata": _ref(f"{META}.ObjectMeta", "Standard object's metadata."),
                "involvedObject": _ref(f"{CORE}.ObjectReference", "The object that this event is about (the Task)."),
                "reason": _s("A short, machine understandable string that gives the reason for the transition (TaskCreated, ...)."),
                "message": _s("A human-readable description of the status of this operation."),
                "type": _s("Type of this event (Normal, Warning)."),
                "count": _s("The number of times this event has occurred.", "integer", format="int32"),
                "firstTimestamp": _ref(f"{META}.Time", "The time at which the event was first recorded."),
                "lastTimestamp": _ref(f"{META}.Time", "The time at which the most recent occurrence of this event was recorded."),
                "eventTime": _ref(f"{META}.MicroTime", "Time when this Event was first observed."),
                "series": _ref(f"{CORE}.EventSeries", "Data about the Event series this event represents."),
                "action": _s("What action was taken/failed regarding the involved object."),
                "source": _ref(f"{CORE}.EventSource", "The component reporting this event."),
                "reportingComponent": _s("Name of the controller that emitted this Event."),
                "reportingInstance": _s("ID of the controller instance."),
            },
        },
    }


def _combined_schemas() -> dict[str, Any]:
    task = _task_schema()
    task_status = task["properties"]["status"]["properties"]
    gvk = [{"group": resources.GROUP, "kind": resources.KIND, "version": resources.VERSION}]
    return {
        f"{PREFIX}.CombinedTask": {
            "type": "object",
            "description": "CombinedTask is a Task with its Events: the Task's metadata and spec, and its Events in status.events.",
            "properties": {
                "apiVersion": task["properties"]["apiVersion"],
                "kind": task["properties"]["kind"],
                "metadata": _ref(f"{META}.ObjectMeta", "The Task's metadata (resourceVersion: the version of the combination)."),
                "spec": task["properties"]["spec"],
                "status": {
                    "type": "object",
                    "description": "The Task's Events, oldest first, and its own conditions.",
                    "properties": {
                        "events": {
                            "type": "array",
                            "description": "The Events of the Task: labelled with its UID (example.example.com/task-uid) or about it.",
                            "items": _ref(f"{CORE}.Event"),
                        },
                        "conditions": task_status["conditions"],
                        "observedGeneration": task_status["observedGeneration"],
                    },
                },
            },
            "x-kubernetes-group-version-kind": gvk,
        },
        f"{PREFIX}.CombinedTaskList": {
            "type": "object",
            "description": "CombinedTaskList is a list of CombinedTasks.",
            "required": ["items"],
            "properties": {
                "apiVersion": task["properties"]["apiVersion"],
                "kind": task["properties"]["kind"],
                "metadata": _ref(f"{META}.ListMeta", "Standard list metadata."),
                "items": {"type": "array", "items": _ref(f"{PREFIX}.CombinedTask")},
            },
            "x-kubernetes-group-version-kind": [{**gvk[0], "kind": resources.LIST_KIND}],
        },
    }


def _operation(action: str, summary: str, response: str, parameters: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "get": {
            "description": summary,
            "operationId": f"{action}SearchTaskV1{resources.KIND}",
            "tags": ["searchTask_v1"],
            "parameters": parameters,
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": _ref(response)}}}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": resources.GROUP, "version": resources.VERSION, "kind": resources.KIND},
        }
    }


def _parameters(*names: str) -> list[dict[str, Any]]:
    query = ("labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "resourceVersionMatch", "watch",
             "allowWatchBookmarks", "sendInitialEvents", "timeoutSeconds")  # fmt: skip
    path = [{"name": n, "in": "path", "required": True, "schema": {"type": "string", "uniqueItems": True}} for n in names]
    return path + [
        {"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}} for n in query if not names or "name" not in names
    ]


@cache
def document() -> bytes:
    """The group-version document (JSON bytes)."""
    base = resources.BASE_PATH
    schemas = {**_meta_schemas(), **_event_schemas(), **_combined_schemas()}
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Darkroom Control Panel aggregated API", "version": resources.GROUP_VERSION},
        "paths": {
            f"{base}/{resources.PLURAL}": _operation(
                "list", "list or watch CombinedTasks in every namespace", f"{PREFIX}.CombinedTaskList", _parameters()
            ),
            f"{base}/namespaces/{{namespace}}/{resources.PLURAL}": _operation(
                "list", "list or watch the CombinedTasks of a namespace", f"{PREFIX}.CombinedTaskList", _parameters("namespace")
            ),
            f"{base}/namespaces/{{namespace}}/{resources.PLURAL}/{{name}}": _operation(
                "get", "read one CombinedTask", f"{PREFIX}.CombinedTask", _parameters("namespace", "name")
            ),
        },
        "components": {"schemas": schemas},
    }
    return orjson.dumps(doc)


@cache
def root() -> bytes:
    """``GET /openapi/v3``: where the group-version document is, with its hash (clients cache by it)."""
    digest = hashlib.sha512(document()).hexdigest().upper()
    key = f"apis/{resources.GROUP}/{resources.VERSION}"
    return orjson.dumps({"paths": {key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}}})
