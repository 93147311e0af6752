"""The three PATCH body formats kube-apiserver accepts, applied to plain JSON-like objects.

This module owns the *patch arithmetic* of devcluster: the request handlers apply a PATCH body to
the stored object with it, then validate and persist the result themselves.

* :func:`merge_patch` -- ``application/merge-patch+json`` (RFC 7386; ``null`` deletes a key): the shared
  leaf package ``mergepatch``, the one implementation the API's PATCH uses too.
* :func:`json_patch` -- ``application/json-patch+json`` (RFC 6902, through the ``jsonpatch``
  library). kube-apiserver answers 400 when the body is not a list of operation objects and 422
  (with the patch library's text) when an operation cannot be applied.
* :func:`strategic_merge_patch` -- ``application/strategic-merge-patch+json``, a port of
  ``k8s.io/apimachinery/pkg/util/strategicpatch`` (the server-side ``StrategicMergeMapPatch``):
  maps merge per key, lists merge according to a :class:`~devcluster.structure.Structure`
  (``map`` lists by merge key, ``set`` lists by value, ``atomic`` lists are replaced), and the
  directives ``$patch`` (``replace``/``delete``), ``$deleteFromPrimitiveList/<field>``,
  ``$setElementOrder/<field>`` and ``$retainKeys`` are honoured and never left in the result.

Every function is pure: inputs are never mutated and the result shares no mutable object with them.
Failures raise :class:`PatchError` carrying the HTTP status kube-apiserver answers with.

Deliberate fidelity notes (apimachinery behaviour, kept on purpose):

* Without ``$setElementOrder``, items a strategic patch adds to a merging list are placed *before*
  the items only the server had (apimachinery's ``normalizeElementOrder``/``mergeSortedSlice``);
  kubectl apply sends ``$setElementOrder`` to control the order.
* ``{"$patch": "merge"}`` is rejected, as apimachinery rejects it (only ``replace`` and ``delete``
  are accepted in a map; ``merge`` in a list item gives "merging lists cannot yet be specified").

Error codes follow ``interpretStrategicMergePatchError``: malformed directive lists are 400 and
lists of lists 422. Errors kube-apiserver passes through unclassified (unknown ``$patch`` value,
missing merge key, ``$setElementOrder`` mismatch; a 500 there) are reported as 400 here.

Where apimachinery would store a directive verbatim (its typed decoding drops it later) devcluster,
which stores unstructured objects, drops it instead: a ``{"$patch": "delete"}`` map removes the
field, and directive keys or ``null`` values inside newly added values are not kept.

The package: ``common`` (PatchError), ``rfc6902`` (JSON patch), and the
strategic merge patch in ``directives``, ``ordering`` and ``strategic``.
"""

from __future__ import annotations

from devcluster.patching.common import PatchError
from devcluster.patching.rfc6902 import json_patch
from devcluster.patching.strategic import strategic_merge_patch
from mergepatch import merge_patch

__all__ = ["PatchError", "json_patch", "merge_patch", "strategic_merge_patch"]
