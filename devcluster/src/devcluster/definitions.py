"""Defaulting and validation of CustomResourceDefinitions, the built-in kind (``admission.py`` dispatches here).

``schemas.validate_crd`` checks the structural schema and the rest of the spec; this module adds
what kube checks besides (the root ``metadata`` schema may only hold ``type: object`` and string
``name``/``generateName``) and reports every problem at the path kube-apiserver uses: kube validates
the internal CRD, where what all versions share is hoisted to ``spec.validation``,
``spec.additionalPrinterColumns`` and ``spec.subresources``.
"""

from __future__ import annotations

import re
from typing import Any

from devcluster.errors import Cause, forbidden, invalid_value
from devcluster.schemas import validate_crd


def admit_crd(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """SetDefaults_CustomResourceDefinition and the CRD validation (``schemas.validate_crd`` plus the rules here)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("conversion", {"strategy": "None"})
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):  # SetDefaults_CustomResourceDefinitionSpec
        if not names.get("singular"):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind") and names["kind"]:
            names["listKind"] = names["kind"] + "List"
    for version in spec.get("versions") or []:
        version.setdefault("served", True)
    status = obj.get("status")
    if old is not None and isinstance(status, dict) and not status.get("storedVersions"):
        # SetDefaults_CustomResourceDefinition: an empty storedVersions (a status write's too) is the storage version
        status["storedVersions"] = with_storage_version([], spec)
    causes = _metadata_schema_causes(spec) + validate_crd(obj)
    if old is not None and spec.get("scope") != old["spec"].get("scope"):
        causes.append(invalid_value("spec.scope", spec.get("scope"), "field is immutable"))
    return [_hoisted(cause, spec) for cause in causes]


def with_storage_version(stored: list[str], spec: dict[str, Any]) -> list[str]:
    """``status.storedVersions`` once an update of the CRD (not of its status) made: the storage version joins it
    (the registry's PrepareForUpdate), so no object is ever stored at a version it does not list."""
    storage = next((v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("storage")), None)
    return [*stored, storage] if isinstance(storage, str) and storage not in stored else list(stored)


def stored_versions_causes(obj: dict[str, Any]) -> list[Cause]:
    """ValidateCustomResourceDefinitionStoredVersions on an update of the CRD: ``storedVersions`` (with the storage
    version :func:`with_storage_version` adds) is not empty and names only versions of ``spec.versions``; a version
    objects may still be stored at cannot leave the spec before a storage migration takes it out of the list."""
    spec = obj.get("spec") or {}
    stored = with_storage_version(list((obj.get("status") or {}).get("storedVersions") or []), spec)
    if not stored:
        return [invalid_value("status.storedVersions", stored, "must have at least one stored version")]
    names = {v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict)}
    return [
        invalid_value(
            f"status.storedVersions[{i}]",
            version,
            f"missing from spec.versions; {version} was previously a storage version, and must remain in spec.versions until a "
            f"storage migration ensures no data remains persisted in {version} and removes {version} from status.storedVersions",
        )
        for i, version in enumerate(stored)
        if version not in names
    ]


_METADATA_SCHEMA_MESSAGE = "must not specify anything other than name and generateName, but metadata is implicitly specified"


def _metadata_schema_causes(spec: dict[str, Any]) -> list[Cause]:
    """The root schema's ``metadata`` may say ``type: object`` and give ``name``/``generateName`` a string
    schema; anything else (a description, other properties, validations) is forbidden."""
    causes: list[Cause] = []
    for i, version in enumerate(spec.get("versions") or []):
        root = ((version.get("schema") or {}) if isinstance(version, dict) else {}).get("openAPIV3Schema")
        metadata = (root.get("properties") or {}).get("metadata") if isinstance(root, dict) else None
        if not isinstance(metadata, dict):
            continue
        extra = {k: v for k, v in metadata.items() if k not in ("type", "properties")}
        properties = metadata.get("properties") or {}
        bad_properties = not isinstance(properties, dict) or any(
            k not in ("name", "generateName") or v != {"type": "string"} for k, v in properties.items()
        )
        if extra or metadata.get("type", "object") != "object" or bad_properties:
            path = f"spec.versions[{i}].schema.openAPIV3Schema.properties[metadata]"
            causes.append(forbidden(path, _METADATA_SCHEMA_MESSAGE))
    return causes


def _hoisted(cause: Cause, spec: dict[str, Any]) -> Cause:
    """kube validates the internal CRD, where what all versions share sits at the top (``spec.validation``,
    ``spec.additionalPrinterColumns``, ``spec.subresources``): its error paths name those."""
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    match = re.match(r"spec\.versions\[\d+\]\.(schema|additionalPrinterColumns|subresources)(.*)$", cause.field)
    if not versions or match is None:
        return cause
    key, rest = match.groups()
    if any(v.get(key) != versions[0].get(key) for v in versions):
        return cause
    field = ("spec.validation" + rest) if key == "schema" else f"spec.{key}{rest}"
    # kube-openapi formats "<path> in body" with the empty path of a default: two spaces
    message = cause.message.replace('": in body must be', '":  in body must be') if field.endswith(".default") else cause.message
    return Cause(field, cause.reason, message)
