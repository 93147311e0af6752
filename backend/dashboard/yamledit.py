"""Edit an object of our kinds as YAML: review a server-side apply dry run, then apply exactly what was reviewed.

Installed by each kind's pages module (:mod:`.darkroompages`, :mod:`.taskpages`, :mod:`.pgpages`: :func:`install`) at
``<item>/<ns>/<name>/yaml`` (the detail page's "Edit YAML"). Template ``yaml_edit.html``; its block ``editor`` (element
``yaml-editor``) is what htmx swaps after a POST. Every request is made as the person (the kind's service's
:class:`cluster.acting.ActingClient`: a fresh read, a dry-run apply, an apply). The pure half is :mod:`.yamldiff`.

- ``GET``: the object as stored, as YAML (apiVersion, kind, metadata name/namespace/labels/annotations, spec — never
  status, managedFields or resourceVersion; our kinds keep credentials in Secrets their spec only refers to, so the text
  never holds one).
- ``POST action=review``: the text is parsed (a syntax error: its line and column, nothing sent: 422) and must name this
  object (another apiVersion, kind, name or namespace, metadata other than name/namespace/labels/annotations, a status:
  422 naming the field, nothing sent). Then a **server-side apply dry run** (``dryRun=All``, the dashboard's
  fieldManager, no force) with the object's current resourceVersion in it. Shown: the field-by-field diff between the
  stored object and the dry run's answer (:func:`.yamldiff.changes`; a change at a path the text does not have is the
  server's default; removing needs the field to have been set here before), leaves the answer lacks ("will be dropped:
  not in the schema"), kube's 422 causes at the line of their field, a 409 field manager conflict per manager and field
  (the diff is then the forced dry run's, and a force checkbox takes ownership on Apply), a 403 as the person's refusal.
  A clean review carries the reviewed resourceVersion and a digest (HMAC with the app's secret key) of the text and it.
- ``POST action=apply``: the text must be the reviewed one (its digest; else a new review, 409) and is applied with
  ``metadata.resourceVersion`` set to the reviewed version, so kube refuses (409) when the object changed meanwhile: the
  page says so with the new diff and nothing is written. Success: the detail page with its "saved" notice.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from flask import Blueprint, Response, current_app, request
from werkzeug.wrappers import Response as BaseResponse

from backend.core.errors import Failure
from backend.core.services import KindService, version
from backend.dashboard import allowing, browsing, editing, rendering, yamldiff
from backend.dashboard.forms.pages import FormPage
from backend.identity.permissions import ALLOWED, Allowance
from cluster import ClusterError, Conflict, Forbidden, thaw
from cluster.errors import Invalid

TEMPLATE = "yaml_edit.html"
TARGET = "yaml-editor"
METADATA = ("name", "namespace", "labels", "annotations")  # what the text holds of metadata, and all one may edit
MAX_TEXT = 256 * 1024  # characters: far above any object of ours, far below what a request may carry
DEFAULTED = "set by the server (a default): not in your YAML"
REMOVED = "removed: no longer in your YAML"
DROPPED = "will be dropped: not in the schema"
UNDECLARED = re.compile(r"(\.[^\s:]+): field not declared in schema")
MAX_DROPPED = 50  # fields not in the schema dropped from one text at most (each costs a round trip)
NOT_REVIEWED = "Review the YAML first: Apply sends exactly what was reviewed."


def text_of(obj: Mapping[str, Any]) -> str:
    """The editable YAML of a stored object (see the module docstring)."""
    meta = obj["metadata"]
    shown = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {key: thaw(meta[key]) for key in METADATA if meta.get(key)},
        "spec": thaw(obj.get("spec") or {}),
    }
    return yaml.safe_dump(shown, sort_keys=False, allow_unicode=True, default_flow_style=False)


@dataclass(frozen=True)
class Note:
    """A message about a line of the text (``line`` None: about the whole text)."""

    message: str
    line: int | None = None
    path: str = ""


@dataclass
class Review:
    """What a review (or a refused apply) found; the template shows it."""

    status: int = 200
    errors: list[Note] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[Note] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    version: str = ""  # the reviewed resourceVersion
    digest: str = ""  # set when Apply may send this text
    headline: str = ""  # why the review is shown again (an apply refused)


def digest(text: str, resource_version: str, where: str) -> str:
    """HMAC of the reviewed text, its object and the version it was reviewed at, with the app's secret key."""
    key = str(current_app.secret_key or "").encode()
    return hmac.new(key, f"{where}\n{resource_version}\n{text}".encode(), hashlib.sha256).hexdigest()


def identity_errors(parsed: yamldiff.Parsed, service: KindService, namespace: str, name: str) -> list[Note]:
    """Whatever in the text is not this object, or not editable here, each at its line."""
    data, resource = parsed.data, service.resource
    found: list[tuple[str, str]] = []
    for key, wanted in (("apiVersion", resource.api_version), ("kind", resource.kind)):
        if data.get(key) != wanted:
            found.append((key, f"must be {wanted}: this page edits {service.title} {namespace}/{name} only"))
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        found.append(("metadata", "must be a mapping with the name (and namespace, labels, annotations)"))
        meta = {}
    if meta.get("name") != name:
        found.append(("metadata.name", f"must be {name}: this page edits {service.title} {namespace}/{name} only"))
    if meta.get("namespace", namespace) != namespace:
        found.append(("metadata.namespace", f"must be {namespace}: this page edits {service.title} {namespace}/{name} only"))
    only = "is not edited here: only name, namespace, labels and annotations"
    found += [(f"metadata.{key}", only) for key in meta if key not in METADATA]
    if "status" in data:
        found.append(("status", "is written by the reconciler, not edited here: leave it out"))
    return [Note(f"{path} {message}", yamldiff.line_of(parsed.root, path), path) for path, message in found]


def _causes(error: ClusterError) -> list[dict[str, str]]:
    details = error.body.get("details") or {}
    return [c for c in details.get("causes") or () if isinstance(c, dict)]


def manager_conflicts(error: ClusterError, root: Any, *, own: str) -> list[dict[str, Any]]:
    """The field manager conflicts of a 409 (none: the resourceVersion precondition failed). ``own``: this panel's field
    manager, which its forms and JSON API write with (an update, not an apply: another owner to server-side apply)."""
    found = []
    for cause in _causes(error):
        if cause.get("reason") != "FieldManagerConflict":
            continue
        message = str(cause.get("message") or "")
        manager = message.split('"')[1] if message.count('"') >= 2 else message
        path = str(cause.get("field") or "")
        if manager == own:
            manager += " (this panel's forms and JSON API)"
        found.append({"manager": manager, "field": path.lstrip("."), "line": yamldiff.line_of(root, path), "message": message})
    return found


def invalid_notes(error: Invalid, root: Any) -> list[Note]:
    """kube's 422 causes, each at the line of its field (the whole text's when it names none)."""
    if not error.causes:
        return [Note(error.message)]
    return [Note(f"{c.field}: {c.message}" if c.field else c.message, yamldiff.line_of(root, c.field), c.field) for c in error.causes]


def _diff(stored: Mapping[str, Any], answer: Mapping[str, Any], data: Mapping[str, Any], root: Any) -> list[dict[str, Any]]:
    found = []
    for change in yamldiff.changes(stored, answer):
        note = ""
        if not yamldiff.present(data, change.path):
            note = REMOVED if change.op == "removed" else DEFAULTED
        line = yamldiff.line_of(root, change.path) if not note else None
        found.append({"path": change.path, "op": change.op, "old": change.old, "new": change.new, "note": note, "line": line})
    return found


@dataclass(frozen=True)
class YamlEditor:
    """The YAML editor of one kind."""

    service: KindService
    item_base: str  # e.g. /ui/darkrooms
    list_path: str  # the kind's list page (the breadcrumb)
    list_title: str
    nav: str
    saved_path: Callable[[str, str], str]

    def page(self, namespace: str, name: str) -> BaseResponse:
        try:
            current = self.service.fetch(namespace, name, fresh=True)
        except (Failure, ClusterError) as error:
            return browsing.problem_page(error)
        if request.method == "GET":
            return self.render(namespace, name, text_of(current), Review(version=version(current)))
        text = (request.form.get("yaml") or "").replace("\r\n", "\n")
        if len(text) > MAX_TEXT:
            too_long = Note(f"The YAML is too long (at most {MAX_TEXT} characters).")
            return self.render(namespace, name, text[:MAX_TEXT], Review(422, [too_long]))
        if request.form.get("action") == "apply":
            return self.apply(namespace, name, text, current)
        return self.render(namespace, name, text, self.review(namespace, name, text, current))

    def review(self, namespace: str, name: str, text: str, current: Mapping[str, Any], *, headline: str = "") -> Review:
        """Parse, check and dry-run ``text`` over ``current`` (see the module docstring)."""
        try:
            parsed = yamldiff.parse(text)
        except yamldiff.SyntaxProblem as problem:
            where = f"line {problem.line}, column {problem.column}"
            return Review(422, [Note(f"YAML syntax error at {where}: {problem.message}", problem.line)], headline=headline)
        wrong = identity_errors(parsed, self.service, namespace, name)
        if wrong:
            return Review(422, wrong, headline=headline)
        reviewed = version(current)
        body = self.body(parsed.data, namespace, reviewed)
        found = Review(version=reviewed, headline=headline)
        try:
            answer, undeclared = self.send(body, dry_run=True)
        except Conflict as error:
            found.conflicts = manager_conflicts(error, parsed.root, own=self.service.settings.field_manager)
            if not found.conflicts:  # changed between the read and the dry run
                return Review(409, [Note("The object changed while it was being reviewed: review again.")], headline=headline)
            try:
                answer, undeclared = self.send(body, dry_run=True, force=True)
            except ClusterError as forced:
                return self.failed(forced, parsed, found)
        except ClusterError as error:
            return self.failed(error, parsed, found)
        found.changes = _diff(current, answer, parsed.data, parsed.root)
        missing = [p for p in yamldiff.leaf_paths(parsed.data) if not yamldiff.present(answer, p)]
        missing = undeclared + [p for p in missing if not any(p == u or p.startswith((u + ".", u + "[")) for u in undeclared)]
        found.dropped = [Note(DROPPED, yamldiff.line_of(parsed.root, path), path) for path in missing]
        found.digest = digest(text, reviewed, f"{namespace}/{name}")
        return found

    def send(self, body: Mapping[str, Any], *, dry_run: bool, force: bool = False) -> tuple[dict[str, Any], list[str]]:
        """Apply ``body`` as the person: the answer, and the fields dropped from it first. Server-side apply refuses a
        field the schema does not declare (500 "field not declared in schema", where any other write prunes it): such
        fields are dropped, as pruning would, and the rest sent again — in the review and in the apply alike."""
        sent = copy.deepcopy(dict(body))
        dropped: list[str] = []
        while True:
            try:
                return self.service.client.apply(self.service.resource, sent, dry_run=dry_run, force=force), dropped
            except ClusterError as error:
                paths = UNDECLARED.findall(error.message) if error.status == 500 else []
                if not paths or len(dropped) >= MAX_DROPPED or not all(yamldiff.remove(sent, path) for path in paths):
                    raise
                dropped += [yamldiff.render(yamldiff.split(path)) for path in paths]

    def failed(self, error: ClusterError, parsed: yamldiff.Parsed, found: Review) -> Review:
        """A dry run kube refused: its causes at their lines (422), the person's refusal (403), else what it said."""
        found.status = error.status or 502
        if isinstance(error, Invalid):
            found.errors = invalid_notes(error, parsed.root)
        elif isinstance(error, Forbidden) and (refused := browsing.refusal_of(error)) is not None:
            found.errors = [Note(f"{browsing.refusal_sentence(refused)} Apply needs the patch permission; ask your cluster administrator.")]
        else:
            problem = editing.problem_of(error)
            found.errors = [Note(problem.detail or problem.title)]
        return found

    def body(self, data: Mapping[str, Any], namespace: str, reviewed: str) -> dict[str, Any]:
        """The applied object: the text's, in this namespace, conditioned on the reviewed version."""
        meta = {**data["metadata"], "namespace": namespace}
        if reviewed:
            meta["resourceVersion"] = reviewed
        return {**data, "metadata": meta}

    def apply(self, namespace: str, name: str, text: str, current: Mapping[str, Any]) -> BaseResponse:
        """Apply the reviewed text at the reviewed version (see the module docstring); the page again when refused."""
        reviewed = (request.form.get("reviewed_version") or "").strip()
        given = (request.form.get("reviewed_digest") or "").strip()
        if not given or not reviewed or not hmac.compare_digest(given, digest(text, reviewed, f"{namespace}/{name}")):
            headline = "This is not the YAML you reviewed (or it was never reviewed): review it again. Nothing was saved."
            return self.render(namespace, name, text, self.review(namespace, name, text, current, headline=headline), status=409)
        parsed = yamldiff.parse(text)  # the reviewed text: valid
        try:
            self.send(self.body(parsed.data, namespace, reviewed), dry_run=False, force=request.form.get("force") == "on")
        except Conflict as error:
            if manager_conflicts(error, parsed.root, own=""):
                headline = "Other field managers own fields you change: tick Force to take them over. Nothing was saved."
            else:
                headline = "Changed since you reviewed: review again. Nothing was saved; this is the new diff."
            try:
                latest = self.service.fetch(namespace, name, fresh=True)
            except (Failure, ClusterError) as gone:
                return browsing.problem_page(gone)
            return self.render(namespace, name, text, self.review(namespace, name, text, latest, headline=headline), status=409)
        except ClusterError as error:
            return self.render(namespace, name, text, self.failed(error, parsed, Review(version=reviewed)))
        self.service.on_write(self.service.resource)
        return browsing.go(self.saved_path(namespace, name))

    def render(self, namespace: str, name: str, text: str, found: Review, *, status: int | None = None) -> Response:
        may_patch = self.allowance(namespace, name)
        can_apply: Allowance = may_patch if not may_patch else ALLOWED if found.digest else Allowance(False, NOT_REVIEWED)
        context = {
            "kind": self.service.title,
            "nav": self.nav,
            "namespace": namespace,
            "name": name,
            "item_base": self.item_base,
            "list_path": self.list_path,
            "list_title": self.list_title,
            "text": text,
            "review": found,
            "may_patch": may_patch,
            "can_apply": can_apply,
            "lines": max(12, min(40, text.count("\n") + 2)),
        }
        return rendering.page_or_block(TEMPLATE, context, block_name="editor", target=TARGET, status=status or found.status)

    def allowance(self, namespace: str, name: str) -> Allowance:
        asked = allowing.current()
        return asked.may("patch", self.service.resource, namespace, name) if asked is not None else ALLOWED


def install(blueprint: Blueprint, service: KindService, *, page: FormPage, saved_path: Callable[[str, str], str]) -> None:
    """Add ``<item_base>/<ns>/<name>/yaml`` (GET the editor, POST review or apply) for ``service``'s kind, with the paths
    and words of its form ``page``; a saved change goes to ``saved_path(namespace, name)``."""
    editor = YamlEditor(
        service=service, item_base=page.item_base, list_path=page.list_path, list_title=page.list_title, nav=page.nav, saved_path=saved_path
    )
    summary = f"Edit a {service.title} as YAML: POST action=review (a server-side apply dry run and its diff) or action=apply"
    rule = f"{page.item_base}/<namespace>/<name>/yaml"
    rendering.add_views(blueprint, ((rule, f"yaml_{page.live}", editor.page, ("get", "post"), summary),))
