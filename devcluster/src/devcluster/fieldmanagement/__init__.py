"""Server-side apply and ``metadata.managedFields`` bookkeeping, as structured-merge-diff does it.

Owns: the managedFields bookkeeping for every write (create, update, patch, status update:
:func:`record_update`) and the server-side apply merge (:func:`apply`). The request handlers call
these after decoding the request and before validation/storage; both are pure functions that never
mutate their inputs.

Model (mirrors ``sigs.k8s.io/structured-merge-diff``):

* A *field set* is a ``set`` of paths; a path is a tuple of FieldsV1 path elements:
  ``"f:<name>"`` (a struct field or a string-map key), ``"k:<json>"`` (an item of a map-list,
  identified by its key fields, sorted by name, compact JSON) and ``"v:<json>"`` (an item of a
  set-list). :func:`fields_to_set` / :func:`set_to_fields` convert to and from FieldsV1.
* Each managedFields entry is one manager's set, identified by (manager, operation, subresource).
* ``apply`` merges the applied configuration into the live object (list semantics from a
  :class:`~devcluster.structure.Structure`), prunes what this manager applied last time but no
  longer applies (unless someone else owns it), then detects conflicts: fields another manager
  owns whose value the apply changes. Without ``force`` they raise :class:`ApplyConflict`; with it
  the other managers lose those fields.
* ``record_update`` compares old and new: changed/added fields move to the writer's Update entry,
  other managers lose changed or removed fields.

Server-owned paths (apiVersion, kind, metadata.name/namespace/uid/resourceVersion/generation/
creationTimestamp/deletionTimestamp/deletionGracePeriodSeconds/selfLink/managedFields) are never in
a field set. Entry ``time`` only moves when an entry's set changes or its manager changed the object,
so a no-op apply returns an object equal to the live one.

The package: ``fieldsets`` (path types, FieldsV1), ``conflicts``, ``walks`` (typed walks and
comparisons), ``entries`` (managedFields entries) and ``operations`` (:func:`apply`, :func:`record_update`).
"""

from __future__ import annotations

from devcluster.fieldmanagement.conflicts import ApplyConflict, FieldConflict
from devcluster.fieldmanagement.fieldsets import FieldPath, FieldSet, field_path_string, fields_to_set, set_to_fields
from devcluster.fieldmanagement.operations import apply, record_update
from devcluster.fieldmanagement.walks import to_field_set

__all__ = [
    "ApplyConflict",
    "FieldConflict",
    "FieldPath",
    "FieldSet",
    "apply",
    "field_path_string",
    "fields_to_set",
    "record_update",
    "set_to_fields",
    "to_field_set",
]
