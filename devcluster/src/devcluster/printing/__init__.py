"""Server-side Table printing (``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``).

Mirrors kube-apiserver:

* built-in kinds: the column definitions and cell formats of
  ``k8s.io/kubernetes/pkg/printers/internalversion/printers.go``; the server always prints "wide"
  (``GenerateOptions{Wide: true}``), so priority-1 columns are included and clients hide them;
* kinds without a printer there (roles, clusterroles, customresourcedefinitions, ...): the default table
  convertor of ``k8s.io/apiserver/pkg/registry/rest`` (``Name``, ``Created At``);
* custom resources: ``apiextensions-apiserver/pkg/registry/customresource/tableconvertor``
  (``Name`` + the CRD version's additionalPrinterColumns, or ``Age`` when it declares none);
* the Table envelope: ``columnDefinitions`` is ``null`` when headers are suppressed (watch events
  after the first), and ``includeObject`` shapes ``rows[].object`` like ``handlers/response.go``.

The package: ``cells`` (Column, durations, ages), ``columns`` (descriptions, accessors), ``builtins``,
``custom`` (printer columns of custom resources) and ``tables`` (the public API).
"""

from __future__ import annotations

from devcluster.printing.cells import Column, human_duration
from devcluster.printing.tables import columns_for, table

__all__ = ["Column", "columns_for", "human_duration", "table"]
