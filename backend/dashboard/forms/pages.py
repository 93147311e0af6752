"""The page of a generated form: :class:`FormPage` (a kind's words and paths) and :func:`generated_flow`,
the :class:`backend.dashboard.editing.Flow` that serves a :class:`.values.Form` with ``frontend/templates/form_page.html``.

Each kind's pages module (:mod:`backend.dashboard.darkroompages`, :mod:`backend.dashboard.taskpages`,
:mod:`backend.dashboard.pgpages`) declares its
FormPage and, in its ``install``, routes its new/edit/delete views to the flow over the kind's service; no
kind has a form template of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Response

from backend.core.services import KindService
from backend.dashboard import editing
from backend.dashboard.forms.values import Form


@dataclass(frozen=True, kw_only=True)
class FormPage:
    """The words and paths of a kind's form page (``frontend/templates/form_page.html``)."""

    form_id: str  # the form element's id, also the htmx target of its POSTs ("darkroom-form")
    nav: str  # the navigation entry it belongs to
    list_title: str  # the breadcrumb to the list ("Darkrooms")
    list_path: str  # "/" or "/ui/tasks"
    item_base: str  # "/ui/darkrooms": <item_base>/new, <item_base>/<ns>/<name>, .../edit
    noun: str  # "Darkroom", "database"
    new_title: str  # "New Darkroom"
    create_button: str  # "Create Darkroom"
    name_hint: str  # the rule for names
    max_name_length: int
    live: str  # the live stream of the kind's detail pages, /ui/live/<live>/<ns>/<name> (backend.dashboard.livedetail)


TEMPLATE = "form_page.html"  # every kind's form page; its block "form" is the htmx fragment


@dataclass(frozen=True, kw_only=True)
class GeneratedFlow(editing.Flow):
    """:class:`backend.dashboard.editing.Flow` for a form that :mod:`.generating` generated: its page gets the form and its words."""

    generated: Form
    page: FormPage

    def form(
        self, *, mode: str, values: Mapping[str, Any], status: int = 200, errors: Mapping[str, list[str]] | None = None, **extra: Any
    ) -> Response:
        extra.setdefault("conflict", None)
        return super().form(mode=mode, values=values, status=status, errors=errors, **extra)

    def form_context(self, mode: str, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"form": self.generated, "page": self.page}


def generated_flow(form: Form, page: FormPage, *, service: KindService, saved_path: Callable[[str, str], str]) -> GeneratedFlow:
    """The flow of a kind's generated form: its values, payload and buttons are the form's, its page ``form_page.html``."""
    return GeneratedFlow(
        service=service,
        template=TEMPLATE,
        target=page.form_id,
        list_path=page.list_path,
        saved_path=saved_path,
        generated=form,
        page=page,
        blank=form.blank,
        form_values=form.form_values,
        values_of=form.values_of,
        payload=form.payload,
        rearranged=form.rearranged,
        kept=form.kept,
    )
