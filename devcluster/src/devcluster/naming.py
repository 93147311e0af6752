"""Names and object metadata, validated the way k8s.io/apimachinery validates them.

The string checks (:func:`dns1123_label_errors`, :func:`dns1035_label_errors`, and
:func:`dns1123_subdomain_errors`, :func:`qualified_name_errors`, :func:`label_value_errors` from the
shared ``labelselectors.validation``) return the message texts of
``k8s.io/apimachinery/pkg/util/validation`` (``IsDNS1123Label`` and friends), word for word, so
callers can wrap them in :func:`devcluster.errors.invalid_value`.

:func:`validate_object_meta` is ``ValidateObjectMetaAccessor`` (``apimachinery/pkg/api/validation``):
name / generateName, namespace, generation, labels, annotations (keys and total size),
ownerReferences and finalizers, reported as :class:`~devcluster.errors.Cause` lists with kube's
field paths (``metadata.name``, ``metadata.labels``, ``metadata.ownerReferences.uid`` - kube
does not index owner references in those paths, and neither do we).

Not checked here: managedFields, and immutability on update (``ValidateObjectMetaUpdate``).
"""

from __future__ import annotations

import re
from typing import Any

from devcluster.errors import Cause, forbidden, invalid_value, required
from labelselectors.validation import (
    DNS1123_SUBDOMAIN_RE,
    dns1123_subdomain_errors,
    empty_error,
    full_match,
    label_value_errors,
    max_len_error,
    qualified_name_errors,
    regex_error,
)

__all__ = [
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "empty_error",
    "label_value_errors",
    "max_len_error",
    "name_errors",
    "qualified_name_errors",
    "regex_error",
    "validate_annotations",
    "validate_finalizers",
    "validate_kube_finalizer_names",
    "validate_labels",
    "validate_object_meta",
    "validate_owner_references",
]

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_MAX_LENGTH = 63
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_MAX_LENGTH = 63
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)

_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1035_LABEL_RE = re.compile(DNS1035_LABEL_FMT)


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``: at most 63 characters of ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``."""
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not full_match(_DNS1123_LABEL_RE, value):
        if full_match(DNS1123_SUBDOMAIN_RE, value):  # a valid subdomain; the length was checked, so: dots
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1035_label_errors(value: str) -> list[str]:
    """``IsDNS1035Label``: like a DNS-1123 label but starting with a letter."""
    errs: list[str] = []
    if len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not full_match(_DNS1035_LABEL_RE, value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def _mask_trailing_dash(name: str) -> str:
    """A generateName prefix may end in '-' (the random suffix follows it)."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-1] + "a"
    return name


def name_errors(name: str, rule: str, *, prefix: bool = False) -> list[str]:
    """``NameIsDNSSubdomain`` / ``NameIsDNSLabel`` (``rule`` "subdomain" or "label")."""
    if prefix:
        name = _mask_trailing_dash(name)
    if rule == "label":
        return dns1123_label_errors(name)
    if rule == "subdomain":
        return dns1123_subdomain_errors(name)
    raise ValueError(f"unknown name rule {rule!r}")


def validate_labels(labels: Any, path: str = "metadata.labels") -> list[Cause]:
    """``ValidateLabels``: keys are qualified names, values label values; every error is at ``path``."""
    causes: list[Cause] = []
    if not isinstance(labels, dict):
        return causes
    for key, value in labels.items():
        for msg in qualified_name_errors(str(key)):
            causes.append(invalid_value(path, key, msg))
        text = value if isinstance(value, str) else str(value)
        for msg in label_value_errors(text):
            causes.append(invalid_value(path, value, msg))
    return causes


def validate_annotations(annotations: Any, path: str = "metadata.annotations") -> list[Cause]:
    """``ValidateAnnotations``: keys are qualified names (case-insensitively), total size <= 256 KiB."""
    causes: list[Cause] = []
    if not isinstance(annotations, dict):
        return causes
    total = 0
    for key, value in annotations.items():
        for msg in qualified_name_errors(str(key).lower()):
            causes.append(invalid_value(path, key, msg))
        total += len(str(key).encode()) + len(str(value if value is not None else "").encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        # field.TooLong(fldPath, "", TotalAnnotationSizeLimitB) as apimachinery 1.30 words it.
        causes.append(Cause(path, "FieldValueTooLong", f"Too long: must have at most {TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes"))
    return causes


def validate_finalizers(finalizers: Any, path: str = "metadata.finalizers") -> list[Cause]:
    """``ValidateFinalizers``: each a qualified name; orphan and foregroundDeletion exclude each other."""
    causes: list[Cause] = []
    if not isinstance(finalizers, list):
        return causes
    for finalizer in finalizers:
        for msg in qualified_name_errors(str(finalizer)):
            causes.append(invalid_value(path, finalizer, msg))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        causes.append(invalid_value(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"))
    return causes


def _version_of(api_version: str) -> str:
    """The version part of ``schema.FromAPIVersionAndKind`` ("" when the apiVersion does not parse)."""
    if api_version.count("/") > 1:
        return ""
    return api_version.rsplit("/", 1)[-1]


def validate_owner_references(refs: Any, path: str = "metadata.ownerReferences") -> list[Cause]:
    """``ValidateOwnerReferences``: apiVersion (with a version), kind, name, uid; at most one controller."""
    causes: list[Cause] = []
    if not isinstance(refs, list):
        return causes
    first_controller = ""
    for index, ref in enumerate(refs):
        if not isinstance(ref, dict):
            causes.append(invalid_value(path, ref, "must be an object"))
            continue
        api_version = str(ref.get("apiVersion") or "")
        kind = str(ref.get("kind") or "")
        where = f"{path}[{index}]"
        if not api_version:
            causes.append(required(f"{where}.apiVersion", "must not be empty"))
        elif not _version_of(api_version):
            causes.append(invalid_value(f"{where}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            causes.append(required(f"{where}.kind", "must not be empty"))
        if not ref.get("name"):
            causes.append(required(f"{where}.name", "must not be empty"))
        if not ref.get("uid"):
            causes.append(required(f"{where}.uid", "must not be empty"))
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                causes.append(
                    invalid_value(
                        path,
                        refs,
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return causes


_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_kube_finalizer_names(finalizers: Any, path: str = "metadata.finalizers") -> list[Cause]:
    """Built-in kinds only (core's ``validateKubeFinalizerName``): a finalizer without a ``/`` must be
    one of the standard ones."""
    if not isinstance(finalizers, list):
        return []
    return [
        invalid_value(f"{path}[{i}]", f, "name is neither a standard finalizer name nor is it fully qualified")
        for i, f in enumerate(finalizers)
        if "/" not in str(f) and f not in _STANDARD_FINALIZERS
    ]


def validate_object_meta(meta: dict[str, Any], *, name_rule: str, namespaced: bool, creating: bool, builtin: bool = False) -> list[Cause]:
    """``ValidateObjectMetaAccessor`` for ``meta`` (an object's ``metadata``).

    ``builtin`` adds core's finalizer-name rule (custom resources do not have it).
    ``name_rule`` is "subdomain" (most kinds) or "label" (e.g. namespaces). On create a missing name
    is fine when ``generateName`` is set (the server generates the name before storing); otherwise
    ``metadata.name: Required value: name or generateName is required``. ``namespaced`` kinds need
    a DNS-label ``metadata.namespace``; cluster-scoped ones must not carry one.
    """
    causes: list[Cause] = []
    if not isinstance(meta, dict):
        return [required("metadata", "")]
    generate_name = meta.get("generateName") or ""
    name = meta.get("name") or ""
    if generate_name:
        for msg in name_errors(str(generate_name), name_rule, prefix=True):
            causes.append(invalid_value("metadata.generateName", generate_name, msg))
    if not name:
        if not (creating and generate_name):
            causes.append(required("metadata.name", "name or generateName is required"))
    else:
        for msg in name_errors(str(name), name_rule):
            causes.append(invalid_value("metadata.name", name, msg))

    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            causes.append(required("metadata.namespace", ""))
        else:
            for msg in dns1123_label_errors(str(namespace)):
                causes.append(invalid_value("metadata.namespace", namespace, msg))
    elif namespace:
        causes.append(forbidden("metadata.namespace", "not allowed on this type"))

    generation = meta.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        causes.append(invalid_value("metadata.generation", generation, "must be greater than or equal to 0"))

    causes.extend(validate_labels(meta.get("labels")))
    causes.extend(validate_annotations(meta.get("annotations")))
    causes.extend(validate_owner_references(meta.get("ownerReferences")))
    causes.extend(validate_finalizers(meta.get("finalizers")))
    if builtin:
        causes.extend(validate_kube_finalizer_names(meta.get("finalizers")))
    return causes
