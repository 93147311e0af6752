"""What the person may do, for the dashboard's pages: their :class:`backend.identity.permissions.Permissions` per request.

Installed by :mod:`backend.dashboard` with the app's ``SelfSubjectAccessReview`` reviewer
(:attr:`backend.core.access.ClusterAccess.self_reviews`). Pages ask through the template globals:

- ``may(verb, kind, namespace, name='')`` — an :class:`~backend.identity.permissions.Allowance` (truthy, or with the
  reason as a sentence). Verbs are kube-apiserver's: ``create`` (New, the create form), ``update`` (Edit, Scale,
  Mark finished: the dashboard stores whole objects), ``delete``, ``get`` ``Secret`` (Show password).
- ``may_anywhere(verb, kind, namespaces)`` — in at least one of them (the list's New button, across namespaces).
- ``row_denials(kind, items)`` — for a list section: per namespace on the page, the reason of each row action the
  person may not take (``{"team-a": {"update": "You may not ...", "delete": ...}}``). Rows pushed over SSE are
  rendered once for every tab (:mod:`.liverows`), so they cannot carry one person's answers: they show their
  actions as allowed and ``static/dashboard.js`` applies the section's denials to each pushed row (a row
  rendered for the person — the page, a list swap — already carries them; the same markup either way:
  ``_macros.html`` ``refused``). Lists ask per namespace, never per row: fifty rows in two namespaces cost two
  questions per action. Detail pages ask about the object itself (its name).

How a refusal shows, and why (the answer of each control):

- **Disabled, with the reason** wherever a person would otherwise wonder: Edit, Delete…, Scale, Mark finished, Show
  password, the New button, Save/Create on a form. The control stays in its place (dimmed, ``aria-disabled``,
  still focusable so its reason — the ``title``, and on detail pages a visible note — is reachable), so the page
  reads the same for everyone and says what this person cannot do there and whom to ask.
- **Hidden** only where a control would invite a request that cannot succeed and its absence needs no explaining:
  the "create your first" calls to action of empty lists (the heading's New button already says why), and a form's
  namespaces the person may not create in (offered disabled, with the reason, rather than as choices).
- A person who may list nothing sees an empty list with a sentence saying so — not an error.

Outside a request (a live row rendered once for every tab) there is no person: everything answers allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from flask import Blueprint, current_app, g, has_request_context

from backend.core.kinds.registry import KINDS
from backend.identity import callers
from backend.identity.permissions import ALLOWED, Allowance, Permissions
from cluster import SECRETS, Resource
from cluster.reviewing import SelfAccessReviewer

KEY = "darkroom_permissions"
EXTENSION = "darkroom_dashboard_allowing"  # the app's Asking
SHARED = "darkroom_rendering_for_everyone"  # set by .liverows while it renders a row once for every tab
RESOURCES: Mapping[str, Resource] = {**{kind.title: kind.resource for kind in KINDS}, "Secret": SECRETS}
ROW_VERBS = ("update", "delete")  # what a row's controls need: Edit, Mark finished (update); Delete… (delete)


def permissions(reviewer: SelfAccessReviewer) -> Permissions | None:
    """This request's person's permissions (made once per request); None outside a request, before authentication and
    while a row is rendered for every tab (:func:`for_everyone`)."""
    if not has_request_context() or g.get(SHARED):
        return None
    found = g.get(KEY)
    if isinstance(found, Permissions):
        return found
    caller = callers.known()
    if caller is None:
        return None
    made = Permissions(reviewer=reviewer, caller=caller)
    setattr(g, KEY, made)
    return made


def for_everyone() -> None:
    """Mark this (application) context as rendering for every person: pages then show every action as allowed."""
    setattr(g, SHARED, True)


class Asking:
    """The template globals of one app (see the module docstring), over its reviewer."""

    def __init__(self, reviewer: SelfAccessReviewer) -> None:
        self.reviewer = reviewer

    def may(self, verb: str, kind: str, namespace: str | None = None, name: str = "") -> Allowance:
        found = permissions(self.reviewer)
        return found.may(verb, RESOURCES[kind], namespace or None, name) if found is not None else ALLOWED

    def may_anywhere(self, verb: str, kind: str, namespaces: Iterable[str]) -> Allowance:
        found = permissions(self.reviewer)
        return found.anywhere(verb, RESOURCES[kind], tuple(namespaces)) if found is not None else ALLOWED

    def row_denials(self, kind: str, items: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
        """Per namespace of ``items`` (friendly objects, or CombinedTasks by their metadata): the reason of each refused row verb."""
        denied: dict[str, dict[str, str]] = {}
        for namespace in sorted({_namespace_of(item) for item in items}):
            reasons = {verb: answer.reason for verb in ROW_VERBS if not (answer := self.may(verb, kind, namespace))}
            if reasons:
                denied[namespace] = reasons
        return denied


def _namespace_of(item: Mapping[str, Any]) -> str:
    return str(item.get("namespace") or (item.get("metadata") or {}).get("namespace") or "")


def current() -> Permissions | None:
    """This request's person's permissions, for views (:func:`permissions` over the app's reviewer)."""
    asking = current_app.extensions.get(EXTENSION)
    return permissions(asking.reviewer) if isinstance(asking, Asking) else None


def install(blueprint: Blueprint, *, reviewer: SelfAccessReviewer) -> Asking:
    """Add ``may``, ``may_anywhere`` and ``row_denials`` to every template of the app; the globals' object."""
    asking = Asking(reviewer)
    blueprint.record_once(lambda state: state.app.extensions.__setitem__(EXTENSION, asking))
    blueprint.add_app_template_global(asking.may, "may")
    blueprint.add_app_template_global(asking.may_anywhere, "may_anywhere")
    blueprint.add_app_template_global(asking.row_denials, "row_denials")
    return asking
