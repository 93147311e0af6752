"""What the generic resource endpoints need to know about one kind: :class:`Kind`.

:class:`backend.core.services.KindService` reads, checks and writes any kind's objects through one of these,
and :mod:`backend.api.endpoints` builds the collection and item views from that service;
:mod:`backend.core.kinds.darkrooms`, :mod:`backend.core.kinds.tasks` and :mod:`backend.core.kinds.postgresqls` subclass it. Adding a kind
means a CRD, its :class:`cluster.Resource`, schemas (:mod:`backend.core.schemas`), conversions
(:mod:`backend.core.conversions`), a ``Kind`` subclass and its line in :data:`backend.core.kinds.registry.KINDS` —
nothing generic changes.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, ClassVar

from marshmallow import Schema

from backend.core.ordering import Sort
from backend.settings import ApiSettings
from cluster import Resource, thaw
from cluster.acting import ActingClient
from cluster.fieldselectors import METADATA, Value
from cluster.indexers import IndexFunction
from kinds.states import ConditionMeaning, State


class Kind:
    """One kind of the API. Subclasses set the class attributes and implement the conversions.

    Hooks with defaults: :meth:`check` (validation that needs the stored object), :meth:`conflicts` (clashes with
    other objects), :meth:`patch_base`
    (adjust the merge base of a PATCH), :meth:`after_write` (writes of other objects that belong
    to this one; raising undoes the primary write) and :meth:`after_dry_run` (the same, checked
    with dry-run writes).
    """

    resource: ClassVar[Resource]
    title: ClassVar[str]  # "Darkroom": also prefixes its schemas' names ("DarkroomCreate", ...)
    plural: ClassVar[str]  # URL segment, "darkrooms"
    schemas: ClassVar[Mapping[str, type[Schema]]]  # the kind's schemas by OpenAPI name (its schemas module's SCHEMAS)
    states: ClassVar[tuple[State, ...]]  # what the dashboard shows for each state (from kinds/<plural>.py)
    conditions: ClassVar[Mapping[str, ConditionMeaning]]  # what each condition means (from kinds/<plural>.py)
    renames: ClassVar[Mapping[str, str]] = {}  # CR spec paths whose friendly name differs
    sorts: ClassVar[Mapping[str, Sort]]  # its lists' sort keys (``?sort=``: backend.core.ordering.sorts)
    # The field labels ``?fieldSelector=`` accepts, as kube does for the kind: metadata's, and the CRD's selectableFields.
    selectable_fields: ClassVar[Mapping[str, Value]] = METADATA
    # The indexes of the kind's informer (name → function), for what the kind's hooks look up among all its objects.
    indexers: ClassVar[Mapping[str, IndexFunction]] = {}

    @property
    def field_indexes(self) -> dict[str, str]:
        """The index of each selectable field but the metadata's (read off the keys), by field label: a field selector
        on it is answered from the index (:meth:`backend.core.services.KindService.list`), not by reading objects."""
        return {label: f"field:{label}" for label in self.selectable_fields if label not in METADATA}

    @property
    def field_indexers(self) -> dict[str, IndexFunction]:
        """The functions of :attr:`field_indexes`: the field's value, as the field selector compares it."""
        return {index: _one(self.selectable_fields[label]) for label, index in self.field_indexes.items()}

    # The schemas the OpenAPI document names for this kind are the ones that validate: one lookup, no drift.
    @property
    def create_schema(self) -> type[Schema]:
        return self.schemas[f"{self.title}Create"]

    @property
    def update_schema(self) -> type[Schema]:
        return self.schemas[f"{self.title}Update"]

    @property
    def patch_schema(self) -> type[Schema]:
        """Checks a merge patch itself, before it is applied."""
        return self.schemas[f"{self.title}Patch"]

    def to_friendly(self, obj: Mapping[str, Any], *, settings: ApiSettings | None) -> dict[str, Any]:
        """The friendly form; ``settings`` None means raw (no display defaults: the base of a PATCH)."""
        raise NotImplementedError

    def to_spec(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
        raise NotImplementedError

    def check(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, list[str]]:
        """Errors by friendly path that depend on the stored object (``existing`` None on create).

        Also called with a partly valid ``friendly`` (the fields that passed the schema, :meth:`backend.core.services.KindService.problems`)
        to report its problems beside the schema's: read fields with ``.get``; errors on failed fields are dropped."""
        return {}

    def patch_base(self, base: dict[str, Any], patch: Any) -> dict[str, Any]:
        return base

    def after_write(
        self, client: ActingClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        """Write what belongs to the object just written; the object as it now is (``written`` unless changed)."""
        return written

    def after_dry_run(
        self, client: ActingClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        """On a dry run (``?dryRun=All``), in place of :meth:`after_write`: ask the API server (dry-run writes,
        nothing stored) whether those writes would succeed, raising the same problems; the object as it would be."""
        return written

    def conflicts(self, client: ActingClient, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, list[str]]:
        """How storing ``friendly`` would clash with other objects or what is left of them, by friendly field path
        (empty: no clash). ``existing``: the stored object on a replace or patch (its identity is the object's), None
        on a create. Answered 409 (:class:`backend.core.errors.Conflict` with these ``errors``) when it is the only
        problem, and beside the field errors in one 422 otherwise. Like :meth:`check`, also called with a partly
        valid ``friendly``: read fields with ``.get``."""
        return {}

    # The annotation a create carries until what belongs to the object is written (None: a kind written in one
    # request). Its value is a random token of the attempt; a retry that takes the object over writes its own, so the
    # reconciler, which removes a create left unfinished (darkroom_operator.unfinished), gives that retry its time.
    unfinished_mark: str | None = None

    def resumable(self, existing: Mapping[str, Any]) -> bool:
        """Whether ``existing`` is a create that was cut short, which a new create of the same name completes."""
        return self.unfinished_mark is not None and self.unfinished_mark in (existing["metadata"].get("annotations") or {})

    def mark_unfinished(self, body: dict[str, Any]) -> None:
        """Put :attr:`unfinished_mark` on ``body`` with a new attempt token."""
        assert self.unfinished_mark is not None, f"{self.title} is written in one request"
        body["metadata"].setdefault("annotations", {})[self.unfinished_mark] = secrets.token_hex(8)

    # -- CR bodies -------------------------------------------------------------------------

    def new_object(self, friendly: Mapping[str, Any], *, client: ActingClient | None = None) -> dict[str, Any]:
        """The CR body a create sends; ``client`` (the caller's) lets a kind note what it finds before the create."""
        return {
            "apiVersion": self.resource.api_version,
            "kind": self.resource.kind,
            "metadata": {"name": friendly["name"], "namespace": friendly["namespace"]},
            "spec": self.to_spec(friendly, existing=None),
        }

    def replaced_object(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
        """``existing`` with the spec of ``friendly``; everything else (labels, finalizers, ...) kept."""
        body: dict[str, Any] = thaw(existing)
        body["spec"] = self.to_spec(friendly, existing=existing)
        body["metadata"]["resourceVersion"] = resource_version
        body.pop("status", None)
        return body


def _one(value: Value) -> IndexFunction:
    return lambda obj: (value(obj),)
