"""Kubernetes label selectors, parsed and matched the way ``k8s.io/apimachinery/pkg/labels`` does it.

The one label-selector implementation of the product: ``cluster/`` evaluates selectors client-side
with it (lists answered from the informer cache), devcluster answers ``?labelSelector=`` and
``spec.selector`` with it. A leaf package: it imports nothing else of ours, so both may import it.

* :func:`parse` - ``labels.Parse``: the full grammar (``=``, ``==``, ``!=``, ``in``, ``notin``,
  ``key``, ``!key``, ``>``, ``<``; comma = AND) with kube's validation and error texts.
* :func:`from_dict` - ``metav1.LabelSelectorAsSelector`` (``matchLabels`` / ``matchExpressions``).
* :func:`from_set` - ``labels.SelectorFromSet`` (a mapping of required equalities).

Invalid input raises :class:`InvalidSelector`; its ``str()`` is the message kube-apiserver sends
(callers wrap it in their own 400).
"""

from __future__ import annotations

from labelselectors.parsing import from_dict, from_set, parse
from labelselectors.requirements import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EVERYTHING,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    NOTHING,
    InvalidSelector,
    LabelSelector,
    Requirement,
)

__all__ = [
    "DOES_NOT_EXIST",
    "DOUBLE_EQUALS",
    "EQUALS",
    "EVERYTHING",
    "EXISTS",
    "GREATER_THAN",
    "IN",
    "LESS_THAN",
    "NOTHING",
    "NOT_EQUALS",
    "NOT_IN",
    "InvalidSelector",
    "LabelSelector",
    "Requirement",
    "from_dict",
    "from_set",
    "parse",
]
