"""The :class:`Writer`: create, update, patch (all four formats), apply, delete and deletecollection with
kube-apiserver's order of decoding, admission, validation, managedFields, preconditions and storage.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

import orjson

from devcluster import decoding, errors, typedpatch
from devcluster.admission import admit
from devcluster.catalog import Catalog
from devcluster.duplicates import Duplicates, loads
from devcluster.errors import Cause, StatusError
from devcluster.fieldmanagement import ApplyConflict, apply, record_update
from devcluster.gofmt import format_value
from devcluster.naming import validate_object_meta
from devcluster.patching import PatchError, json_patch, merge_patch, strategic_merge_patch
from devcluster.preparing import prepare
from devcluster.resources import ResourceType
from devcluster.schemas import apply_defaults, prune, validate
from devcluster.store import Store
from devcluster.writing.options import (
    _NAME_CHARS,
    _OBJECT_META_FIELDS,
    _SYSTEM_META,
    APPLY_PATCH,
    FOREGROUND_FINALIZER,
    JSON_PATCH,
    MERGE_PATCH,
    ORPHAN_FINALIZER,
    STRATEGIC_PATCH,
    WriteOptions,
    WriteResult,
    _decode_error_context,
    _patch_error_context,
    _spec_view,
    at_version,
    copy,
)
from devcluster.writing.registry import (
    _check_applied_fields,
    _drop_empty_metadata,
    _parse_apply_body,
    _registry_prefix,
    _same_but_managed_times,
    _set_condition,
)


class Writer:
    """Executes writes against ``store`` for the resources in ``catalog``; ``clock`` returns RFC 3339 UTC."""

    def __init__(self, *, store: Store, catalog: Catalog, clock: Callable[[], str]) -> None:
        self.store = store
        self.catalog = catalog
        self.clock = clock

    # -- create ------------------------------------------------------------------------------

    def create(
        self, resource: ResourceType, namespace: str, body: Any, opts: WriteOptions, *, duplicates: Duplicates | None = None
    ) -> WriteResult:
        obj = self._check_body(resource, body)
        with _decode_error_context(resource):
            warnings = self._decode(resource, obj, opts, duplicates=duplicates)
        meta = obj.setdefault("metadata", {})
        self._check_namespace_field(resource, namespace, meta)
        if meta.get("resourceVersion"):  # etcd3's Create refuses it with a plain (500) error
            raise errors.internal("resourceVersion should not be set on objects to be created")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._generate_name(resource, namespace, str(meta["generateName"]))
        with _decode_error_context(resource):
            result = self._create(resource, namespace, obj, opts, managed=False)
        result.warnings[:0] = warnings
        return result

    def _create(self, resource: ResourceType, namespace: str, obj: dict[str, Any], opts: WriteOptions, *, managed: bool) -> WriteResult:
        meta = obj["metadata"]
        name = str(meta.get("name") or "")
        if resource.namespaced:
            meta["namespace"] = namespace
            self._check_namespace_open(resource, namespace, name)
        else:
            meta.pop("namespace", None)
        if name and self.store.get(resource.storage_key, namespace, name) is not None:
            raise errors.already_exists(resource.plural, resource.group, name)
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self.clock()
        if resource.tracks_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if resource.status_subresource and resource.is_custom:
            obj.pop("status", None)
        result = self._commit_write(resource, None, obj, opts, managed=managed)
        result.code = 201
        return result

    def _generate_name(self, resource: ResourceType, namespace: str, prefix: str) -> str:
        for _ in range(8):
            name = prefix[:58] + "".join(random.choice(_NAME_CHARS) for _ in range(5))
            if self.store.get(resource.storage_key, namespace, name) is None:
                return name
        raise StatusError(409, "AlreadyExists", f"{resource.group_resource} could not generate a unique name for prefix {prefix!r}")

    # -- update ------------------------------------------------------------------------------

    def update(
        self,
        resource: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        opts: WriteOptions,
        *,
        duplicates: Duplicates | None = None,
    ) -> WriteResult:
        obj = self._check_body(resource, body)
        with _decode_error_context(resource):
            warnings = self._decode(resource, obj, opts, duplicates=duplicates)
        meta = obj.setdefault("metadata", {})
        self._check_namespace_field(resource, namespace, meta)
        if meta.get("name") != name:
            raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
        old = self._existing(resource, namespace, name)
        requested = meta.get("resourceVersion")
        if requested:
            if requested != old["metadata"]["resourceVersion"]:
                raise errors.conflict(resource.plural, resource.group, name, errors.STALE)
        elif not resource.unconditional_update and not opts.subresource:
            # The registry reports the uint64 0 under GroupKind{group, plural}.
            cause = errors.Cause("metadata.resourceVersion", "FieldValueInvalid", "Invalid value: 0: must be specified for an update")
            raise errors.invalid(resource.plural, resource.group, name, [cause])
        with _decode_error_context(resource):
            result = self._update(resource, old, obj, opts)
        result.warnings[:0] = warnings
        return result

    def _update(
        self, resource: ResourceType, old: dict[str, Any], new: dict[str, Any], opts: WriteOptions, *, managed: bool = False
    ) -> WriteResult:
        meta, old_meta = new["metadata"], old["metadata"]
        if meta.get("uid") and meta["uid"] != old_meta.get("uid"):
            # etcd3's GuaranteedUpdate precondition, wrapped in a StorageError that names the key
            key = (
                f"/registry/{_registry_prefix(resource)}/" + (f"{old_meta['namespace']}/" if resource.namespaced else "") + old_meta["name"]
            )
            detail = f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: {old_meta.get('uid')}"
            raise errors.conflict(
                resource.plural,
                resource.group,
                old_meta["name"],
                f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: {detail}",
            )
        if opts.subresource == "status":
            status = new.get("status")
            managed_fields = meta.get("managedFields", old_meta.get("managedFields"))
            annotations = meta.get("annotations")
            new = copy(old)
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
            if (resource.group, resource.plural) == ("apps", "deployments"):
                # kube's deploymentStatusStrategy resets only spec and labels: the deployment controller writes its
                # revision annotation with the status
                new["metadata"]["annotations"] = annotations
                if not annotations:
                    del new["metadata"]["annotations"]
            if managed_fields is not None:
                new["metadata"]["managedFields"] = managed_fields
            meta = new["metadata"]
        elif resource.status_subresource:
            if "status" in old:
                new["status"] = copy(old["status"])
            else:
                new.pop("status", None)
        for key in _SYSTEM_META:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        meta["name"] = old_meta["name"]
        if "namespace" in old_meta:
            meta["namespace"] = old_meta["namespace"]
        meta.pop("selfLink", None)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if "managedFields" not in meta and "managedFields" in old_meta:
            meta["managedFields"] = old_meta["managedFields"]
        return self._commit_write(resource, old, new, opts, managed=managed)

    # -- patch -------------------------------------------------------------------------------

    def patch(
        self, resource: ResourceType, namespace: str, name: str, content_type: str, raw: bytes, opts: WriteOptions, *, force: bool
    ) -> WriteResult:
        if content_type not in self.patch_types(resource):
            if resource.is_custom:
                raise errors.unsupported_media_type(content_type, self.patch_types(resource))
            # built-ins are routed by go-restful, whose Consumes() check answers before the handler
            raise StatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", empty_details=True)
        if content_type == APPLY_PATCH:
            return self._apply(resource, namespace, name, raw, opts, force=force)
        patch, patch_duplicates = self._decode_json(raw)
        old = self._existing(resource, namespace, name)
        new = _patched(resource, content_type, copy(at_version(old, resource)), patch)
        if not isinstance(new, dict):
            raise errors.bad_request("the patched object is not a JSON object")
        patched = new
        strategic = content_type == STRATEGIC_PATCH
        new = self._check_body(resource, new)
        if (new.get("metadata") or {}).get("uid") not in (None, old["metadata"].get("uid")):  # a patch cannot precondition
            uid = new["metadata"]["uid"]
            raise errors.invalid(resource.kind, resource.group, name, [errors.invalid_value("metadata.uid", uid, "field is immutable")])

        def rendered() -> str:
            return format_value(patch) if strategic else orjson.dumps(patched, option=orjson.OPT_SORT_KEYS).decode()

        with _patch_error_context(rendered):
            style = decoding.UNSTRUCTURED if strategic else decoding.JSON
            duplicates = None if content_type == JSON_PATCH else patch_duplicates
            warnings = self._decode(resource, new, opts, style=style, sort_keys=True, patch_duplicates=duplicates)
            meta = new.setdefault("metadata", {})
            if meta.get("name") != name:
                raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
            if meta.get("resourceVersion") and meta["resourceVersion"] != old["metadata"]["resourceVersion"]:
                raise errors.conflict(resource.plural, resource.group, name, errors.STALE)
            result = self._update(resource, old, new, opts)
        result.warnings[:0] = warnings
        return result

    def patch_types(self, resource: ResourceType) -> list[str]:
        types = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
        return types if resource.is_custom else [*types, STRATEGIC_PATCH]

    def _apply(self, resource: ResourceType, namespace: str, name: str, raw: bytes, opts: WriteOptions, *, force: bool) -> WriteResult:
        config = _parse_apply_body(raw)
        if not isinstance(config, dict):
            raise errors.bad_request("the applied configuration must be a YAML or JSON object")
        if not config.get("apiVersion") or not config.get("kind"):
            group_version = str(config.get("apiVersion") or "")
            shown = group_version if "/" in group_version else f"/{group_version}"  # schema.GroupVersionKind's String()
            raise errors.bad_request(f"invalid object type: {shown}, Kind={config.get('kind') or ''}")
        config = self._check_body(resource, config)
        if resource.is_custom and resource.schema is not None:
            _check_applied_fields(config, resource)
        meta = config.setdefault("metadata", {})
        if meta.get("name") not in (None, name):
            raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
        meta["name"] = name
        self._check_namespace_field(resource, namespace, meta)
        if meta.get("managedFields"):
            raise errors.bad_request("metadata.managedFields must be nil")
        decoder = None if resource.is_custom else decoding.decoder_for(resource.group_version, resource.kind)
        if decoder is not None:
            typedpatch.check(config, decoder.root, group_version=resource.group_version, kind=resource.kind)
        old = self.store.get(resource.storage_key, namespace if resource.namespaced else "", name)
        if opts.subresource == "status":
            reset = frozenset(k for k in {*config, *(old or {})} if k not in ("status", "apiVersion", "kind"))
        else:
            reset = frozenset({"status"}) if resource.status_subresource else frozenset()
        if old is None and opts.subresource:
            raise errors.not_found(resource.plural, resource.group, name)
        requested = meta.get("resourceVersion")
        if old is not None and requested and requested != old["metadata"]["resourceVersion"]:
            raise errors.conflict(resource.plural, resource.group, name, errors.STALE)
        live = copy(at_version(old, resource)) if old is not None else None
        try:
            merged = apply(
                live,
                config,
                manager=opts.manager,
                force=force,
                structure=resource.structure,
                api_version=resource.group_version,
                now=self.clock(),
                reset_fields=reset,
                subresource=opts.subresource,
            )
        except ApplyConflict as e:
            # errors.NewApplyConflict: the details carry only the causes.
            raise StatusError(409, "Conflict", e.message(), {"causes": [c.as_dict() for c in e.causes()]}) from e
        if decoder is not None:
            try:
                decoder.decode(merged, style=decoding.UNSTRUCTURED)
            except decoding.DecodeError as e:
                raise typedpatch.conversion_error(config, e.message, group_version=resource.group_version, kind=resource.kind) from e
        if old is None:
            return self._create(resource, namespace, merged, opts, managed=True)
        return self._update(resource, old, merged, opts, managed=True)

    # -- delete ------------------------------------------------------------------------------

    def delete(self, resource: ResourceType, namespace: str, name: str, options: dict[str, Any], opts: WriteOptions) -> WriteResult:
        old = self._existing(resource, namespace, name)
        old_meta = old["metadata"]
        _check_delete_preconditions(resource, name, old_meta, options.get("preconditions") or {})
        finalizers = _finalizers_on_delete(resource, old_meta, _propagation_policy(options))
        pending_spec = resource.plural == "namespaces" and not resource.group and bool((old.get("spec") or {}).get("finalizers"))
        if finalizers or pending_spec:
            if old_meta.get("deletionTimestamp") and finalizers == list(old_meta.get("finalizers") or []):
                return WriteResult(at_version(old, resource))
            new = self._marked_deleted(resource, old, finalizers, pending_spec=pending_spec)
            if opts.dry_run:
                return WriteResult(at_version(new, resource))
            change = self.store.put(resource.storage_key, new)
            return WriteResult(at_version(change.obj, resource))
        if opts.dry_run:
            return WriteResult(at_version(old, resource), deleted=True)
        change = self.store.delete(resource.storage_key, old_meta.get("namespace", ""), name)
        return WriteResult(at_version(change.obj, resource), deleted=True)

    def _marked_deleted(self, resource: ResourceType, old: dict[str, Any], finalizers: list[str], *, pending_spec: bool) -> dict[str, Any]:
        """``old`` with a deletionTimestamp and ``finalizers``: what a delete that must wait stores."""
        old_meta = old["metadata"]
        new = copy(old)
        meta = new["metadata"]
        meta.setdefault("deletionTimestamp", self.clock())
        if finalizers:
            meta["finalizers"] = finalizers
        else:
            meta.pop("finalizers", None)
        crd_cleanup = _is_crd(resource)
        # Namespaces and CRDs have their own Delete: no grace period, no generation bump.
        if not (pending_spec or crd_cleanup or (resource.plural == "namespaces" and not resource.group)):
            meta.setdefault("deletionGracePeriodSeconds", 0)
            if resource.tracks_generation and not old_meta.get("deletionTimestamp"):
                meta["generation"] = int(meta.get("generation") or 0) + 1
        if pending_spec:
            new.setdefault("status", {})["phase"] = "Terminating"
        if crd_cleanup and not old_meta.get("deletionTimestamp"):
            _set_condition(
                new,
                {
                    "type": "Terminating",
                    "status": "True",
                    "lastTransitionTime": meta["deletionTimestamp"],
                    "reason": "InstanceDeletionPending",
                    "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
                },
            )
        return new

    # -- the shared pipeline -----------------------------------------------------------------

    def _commit_write(
        self, resource: ResourceType, old: dict[str, Any] | None, new: dict[str, Any], opts: WriteOptions, *, managed: bool
    ) -> WriteResult:
        meta = new["metadata"]
        name = str(meta.get("name") or "")
        warnings: list[str] = []
        causes: list[Cause] = []
        if resource.is_custom and resource.schema is not None:
            unknown = [f"metadata.{k}" for k in meta if k not in _OBJECT_META_FIELDS]
            for key in list(meta):
                if key not in _OBJECT_META_FIELDS:
                    del meta[key]
            pruned, unknown_fields = prune(new, resource.schema)
            unknown += unknown_fields
            new = apply_defaults(pruned, resource.schema)
            meta = new["metadata"]
            warnings += decoding.field_validation([f'unknown field "{path}"' for path in unknown], opts.field_validation)
            causes += validate(new, resource.schema)
        _drop_empty_metadata(meta)
        causes += admit(resource.group, resource.plural, new, old, subresource=opts.subresource)
        causes += validate_object_meta(
            meta,
            name_rule=resource.name_rule,
            namespaced=resource.namespaced,
            creating=old is None,
            builtin=not resource.is_custom and resource.group != "apiextensions.k8s.io",  # core's ObjectMeta rules
        )
        if old is not None:
            causes += self._finalizer_rules(old, new)
        if causes:
            raise errors.invalid(resource.kind, resource.group, name, causes)
        storage_api_version = new.get("apiVersion")
        if resource.is_custom:
            version = self.catalog.storage_version_of(resource)
            storage_api_version = f"{resource.group}/{version}"
        if old is not None and resource.tracks_generation and _spec_view(new, resource) != _spec_view(old, resource):
            meta["generation"] = int(old["metadata"].get("generation") or 0) + 1
        if not managed:
            new = record_update(
                copy(at_version(old, resource)) if old is not None else None,
                new,
                manager=opts.manager,
                structure=resource.structure,
                api_version=resource.group_version,
                now=self.clock(),
                subresource=opts.subresource,
                typed=not resource.is_custom,
            )
            meta = new["metadata"]
        prepare(
            resource.group, resource.plural, new, old, lookup=self.store.get, subresource=opts.subresource
        )  # after field management, as kube does
        new["apiVersion"] = storage_api_version
        if old is not None:
            is_namespace = resource.plural == "namespaces" and not resource.group
            spec_finalizers = (new.get("spec") or {}).get("finalizers") if is_namespace else None
            if meta.get("deletionTimestamp") and not meta.get("finalizers") and not spec_finalizers:
                # The last finalizer is gone: the object is deleted (as stored), and the caller gets the
                # object it sent, at the resourceVersion it had (the registry's deleteWithoutFinalizers).
                if not opts.dry_run:
                    self.store.delete(resource.storage_key, old["metadata"].get("namespace", ""), old["metadata"]["name"])
                return WriteResult(at_version(new, resource), warnings=warnings)
            if new == old or _same_but_managed_times(new, old):
                # kube compares after defaulting: a write that changes nothing but a manager's timestamp
                # (a re-apply whose config omits defaulted fields) is a no-op, not a new resourceVersion.
                return WriteResult(at_version(old, resource), warnings=warnings)
        if opts.dry_run:
            if old is None:
                meta.pop("resourceVersion", None)
            return WriteResult(at_version(new, resource), warnings=warnings)
        change = self.store.put(resource.storage_key, new)
        return WriteResult(at_version(change.obj, resource), warnings=warnings)

    @staticmethod
    def _finalizer_rules(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
        if not old["metadata"].get("deletionTimestamp"):
            return []
        added = [f for f in new["metadata"].get("finalizers") or [] if f not in (old["metadata"].get("finalizers") or [])]
        if added:
            listed = ", ".join(f'"{f}"' for f in added)
            return [
                errors.forbidden(
                    "metadata.finalizers",
                    f"no new finalizers can be added if the object is being deleted, found new finalizers []string{{{listed}}}",
                )
            ]
        return []

    # -- helpers -----------------------------------------------------------------------------

    def _existing(self, resource: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.store.get(resource.storage_key, namespace if resource.namespaced else "", name)
        if obj is None:
            raise errors.not_found(resource.plural, resource.group, name)
        return obj

    def _check_body(self, resource: ResourceType, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise errors.bad_request("the object provided is not a JSON object")
        obj = copy(body)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version and api_version != resource.group_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version ({resource.group_version})"
            )
        if kind and kind != resource.kind:
            raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({resource.kind})")
        obj["apiVersion"], obj["kind"] = resource.group_version, resource.kind
        if not isinstance(obj.get("metadata", {}), dict):
            raise errors.bad_request("metadata must be an object")
        return obj

    @staticmethod
    def _check_namespace_field(resource: ResourceType, namespace: str, meta: dict[str, Any]) -> None:
        if resource.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")

    def _check_namespace_open(self, resource: ResourceType, namespace: str, name: str) -> None:
        ns = self.store.get("/namespaces", "", namespace)
        if ns is None:
            raise errors.not_found("namespaces", "", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            raise StatusError(
                403,
                "Forbidden",
                f'{resource.group_resource} "{name}" is forbidden: unable to create new content in namespace {namespace} because it is being terminated',  # noqa: E501
                {
                    "name": name,
                    **({"group": resource.group} if resource.group else {}),
                    "kind": resource.plural,
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {namespace} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )

    @staticmethod
    def _decode_json(raw: bytes) -> tuple[Any, Duplicates | None]:
        try:
            return loads(raw, merge=False)
        except orjson.JSONDecodeError as e:  # Go's json.Valid check on the patch, before decoding it
            raise errors.bad_request("invalid JSON patch") from e

    @staticmethod
    def _decode(
        resource: ResourceType,
        obj: dict[str, Any],
        opts: WriteOptions,
        *,
        style: str = decoding.JSON,
        sort_keys: bool = False,
        duplicates: Duplicates | None = None,
        patch_duplicates: Duplicates | None = None,
    ) -> list[str]:
        """Typed decoding of a built-in object in place (``decoding.py``) and the body's duplicate fields,
        under ``fieldValidation``: the warnings to send (custom resources are pruned in ``_commit_write``)."""
        decoder = None if resource.is_custom else decoding.decoder_for(resource.group_version, resource.kind)
        problems = patch_duplicates.problems() if patch_duplicates else []
        if decoder is not None:
            problems += decoder.decode(obj, style=style, sort_keys=sort_keys, duplicates=duplicates)
        elif duplicates is not None:
            problems += duplicates.problems()
        return decoding.field_validation(problems, opts.field_validation)


def _check_delete_preconditions(resource: ResourceType, name: str, old_meta: dict[str, Any], preconditions: dict[str, Any]) -> None:
    """DeleteOptions.preconditions: the registry checks them itself and reports them under the kind (not the resource)."""
    if preconditions.get("uid") and preconditions["uid"] != old_meta.get("uid"):
        detail = f"the UID in the precondition ({preconditions['uid']}) does not match the UID in record ({old_meta.get('uid')})"
        raise errors.conflict(resource.kind, resource.group, name, f"{detail}. The object might have been deleted and then recreated")
    if preconditions.get("resourceVersion") and preconditions["resourceVersion"] != old_meta["resourceVersion"]:
        detail = (
            f"the ResourceVersion in the precondition ({preconditions['resourceVersion']}) does not match the ResourceVersion "
            f"in record ({old_meta['resourceVersion']})"
        )
        raise errors.conflict(resource.kind, resource.group, name, f"{detail}. The object might have been modified")


def _propagation_policy(options: dict[str, Any]) -> str | None:
    """DeleteOptions.propagationPolicy (or the deprecated orphanDependents); 422 for an unknown one."""
    policy = options.get("propagationPolicy")
    if policy is None and options.get("orphanDependents") is not None:
        policy = "Orphan" if options["orphanDependents"] else "Background"
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            [errors.not_supported("propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"])],
        )
    return policy


def _is_crd(resource: ResourceType) -> bool:
    return resource.plural == "customresourcedefinitions" and resource.group == "apiextensions.k8s.io"


def _finalizers_on_delete(resource: ResourceType, old_meta: dict[str, Any], policy: str | None) -> list[str]:
    """The object's finalizers once deletion is asked for: the policy's (orphan / foregroundDeletion) added,
    the other one's removed, and a CRD's customresourcecleanup."""
    finalizers = list(old_meta.get("finalizers") or [])
    extra = {"Orphan": ORPHAN_FINALIZER, "Foreground": FOREGROUND_FINALIZER}.get(policy or "")
    if extra and extra not in finalizers:
        finalizers.append(extra)
    if policy in ("Orphan", "Foreground", "Background"):
        finalizers = [f for f in finalizers if f not in ({ORPHAN_FINALIZER, FOREGROUND_FINALIZER} - {extra})]
    if _is_crd(resource) and "customresourcecleanup.apiextensions.k8s.io" not in finalizers:
        finalizers.append("customresourcecleanup.apiextensions.k8s.io")
    return finalizers


def _patched(resource: ResourceType, content_type: str, current: dict[str, Any], patch: Any) -> Any:
    """``current`` with a JSON, merge or strategic merge ``patch`` applied; the patch library's errors as kube answers them."""
    try:
        if content_type == JSON_PATCH:
            return json_patch(current, patch)
        if content_type == MERGE_PATCH:
            if patch is not None and not isinstance(patch, dict):  # decoded into a map[string]interface{} first
                kind = {list: "array", str: "string", bool: "bool"}.get(type(patch), "number")
                go_type = "map[string]interface {}"
                raise errors.bad_request(f"error decoding patch: json: cannot unmarshal {kind} into Go value of type {go_type}")
            return merge_patch(current, patch)
        if not isinstance(patch, dict):
            raise errors.bad_request("json: cannot unmarshal array into Go value of type map[string]interface {}")
        return strategic_merge_patch(current, patch, resource.structure)
    except PatchError as e:
        if e.code == 400:
            raise errors.bad_request(e.message) from e
        if e.code == 500:
            raise errors.internal(e.message) from e
        # kube-apiserver answers NewGenericServerResponse(422, ...), which drops the patch library's text
        raise StatusError(422, "Invalid", "the server rejected our request due to an error in our request", empty_details=True) from e
