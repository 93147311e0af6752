"""Custom resources against their CRD's structural ``openAPIV3Schema``, as kube-apiserver does it.

Pure functions on plain JSON values (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``);
inputs are never mutated.

* :func:`prune` - ``apiextensions-apiserver/pkg/apiserver/schema/pruning``: properties the schema
  does not know are dropped (and reported as ``spec.foo``-style paths, which the server turns into
  ``unknown field "spec.foo"`` warnings or strict-decoding errors with ``decoding.field_validation``,
  as it does for built-in kinds), except under
  ``x-kubernetes-preserve-unknown-fields: true``. The root, like every
  ``x-kubernetes-embedded-resource``, keeps ``apiVersion``/``kind`` (strings) and ``metadata``
  (an object); ``additionalProperties`` schemas apply to every key.
* :func:`apply_defaults` - ``schema/defaulting``: a property's ``default`` is set when the
  property is missing (or a non-nullable ``null``) and its parent object exists; defaults are
  applied top-down, so defaults nested in a defaulted object apply too. Non-nullable ``null``s
  without a default are removed first (``PruneNonNullableNullsWithoutDefaults``). The root's
  ``apiVersion``/``kind``/``metadata`` are never defaulted.
* :func:`validate` - ``apiserver/validation`` over kube-openapi's validator, with its error texts
  and its translation to field errors (``kubeOpenAPIResultToFieldErrors``), plus the
  ``x-kubernetes-list-type`` set/map uniqueness checks (``schema/listtype``) and the
  apiVersion/kind checks of embedded resources. The root ``metadata`` is left to
  :mod:`devcluster.naming`. ``allOf``/``anyOf``/``oneOf``/``not`` failures are reported as kube
  reports them: field ``<nil>``, ``Invalid value: "": "spec.x" must validate ...``.
* :func:`validate_crd` - the ``ValidateCustomResourceDefinition`` checks that matter here:
  name = plural.group, group, names, scope, versions (one storage version), structural schemas,
  defaults valid against their schema, additionalPrinterColumns.

Known differences from kube-apiserver:

* ``x-kubernetes-validations`` (CEL rules) are **not evaluated**; neither are
  transition rules or ratcheting of unchanged invalid values on update.
* String formats are those kube supports (``date-time``, ``date``, ``byte``, ``uri``, ``email``,
  ``uuid``/``uuid3``/``uuid4``/``uuid5``, ``hostname``, ``ipv4``, ``ipv6``, ``cidr``, ``mac``,
  ``duration``, ``hexcolor``, ``bsonobjectid``, ...); like kube, unsupported formats - including
  the numeric ``int32``/``int64``/``float``/``double`` - are ignored. ``email``/``uri``/``hostname``
  are close approximations of the Go parsers.
* Patterns are matched with Python's ``re`` (search semantics, like Go's ``MatchString``); RE2 and
  Python agree on everything CRDs normally use.
* Errors inside one object come in schema-property order (kube's order follows Go map iteration,
  i.e. is unspecified).

The package: ``paths`` (extension names, error paths), ``pruning``, ``defaulting``, ``values``,
``formats``, ``validation`` and ``crds``, one module per function above and its helpers.
"""

from __future__ import annotations

from devcluster.schemas.crds import validate_crd
from devcluster.schemas.defaulting import apply_defaults
from devcluster.schemas.paths import EMBEDDED, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, PRESERVE
from devcluster.schemas.pruning import prune
from devcluster.schemas.validation import validate

__all__ = ["EMBEDDED", "INT_OR_STRING", "LIST_MAP_KEYS", "LIST_TYPE", "PRESERVE", "apply_defaults", "prune", "validate", "validate_crd"]
