"""The write verbs with kube-apiserver semantics: create, update, patch (four kinds), delete.

Bodies of built-in kinds are first decoded against their Go types (``decoding.py``: unknown and
duplicate fields per ``fieldValidation``, type errors, normalised values; apply configurations
through ``typedpatch.py``). Then one pipeline for every write (``_commit_write``): kind checks and
defaulting (``admission.py`` for built-ins, the CRD schema for custom resources: prune → default →
validate), metadata rules
(``naming.py``), optimistic concurrency, generation, finalizers and graceful deletion,
managedFields (``fieldmanagement/``), what the registry and admission plugins set after that
(``preparing.py``), "no change → no write", dry-run, then
:meth:`Store.put`. The HTTP layer (``serving/``) and the built-in controllers
(``controllers.py``) both call :class:`Writer`, so controller writes look like any client's.

The package: ``options`` (WriteOptions, WriteResult, content types), ``writer`` (the Writer) and
``registry`` (etcd storage keys).
"""

from __future__ import annotations

from devcluster.writing.options import (
    APPLY_PATCH,
    APPLY_PATCH_CBOR,
    FOREGROUND_FINALIZER,
    JSON_PATCH,
    MERGE_PATCH,
    ORPHAN_FINALIZER,
    STRATEGIC_PATCH,
    WriteOptions,
    WriteResult,
    at_version,
    copy,
)
from devcluster.writing.writer import Writer

__all__ = [
    "APPLY_PATCH",
    "APPLY_PATCH_CBOR",
    "FOREGROUND_FINALIZER",
    "JSON_PATCH",
    "MERGE_PATCH",
    "ORPHAN_FINALIZER",
    "STRATEGIC_PATCH",
    "WriteOptions",
    "WriteResult",
    "Writer",
    "at_version",
    "copy",
]
