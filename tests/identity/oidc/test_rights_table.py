"""For every kind, verb, person and namespace, the control panel answers what kube-apiserver allows that person.

Real control plane, real identity provider, passthrough (each person's own ID token goes to kube-apiserver). What kube
allows is asked of kube itself, with the person's own token (a SelfSubjectAccessReview per verb); the panel must then
answer 2xx where kube allows and 403 where it does not — 404 only where kube would (the object is missing and the
person may do that to it), never revealing to someone who may not read a namespace whether an object exists there.

Behaviours, each for Darkrooms, Tasks and Postgresqls, alice/bob/carol, team-a/team-b:

- list one namespace, create (and its dry run), get (an object and a missing one), replace (PUT), change (PATCH), delete
  — each with ``?dryRun=All`` too — answer 2xx exactly where kube allows the verb, 403 otherwise; a 403 problem names
  the person, verb, group, resource and namespace; a refused write left nothing behind and an allowed one is stored;
- writes of a missing object answer 404 where kube allows the verb, 403 where it does not;
- listing every namespace answers 200 with exactly the objects of the namespaces the person may list (``total`` too);
- the Secrets the API writes with a kind go out as the person: an S3 Darkroom with inline keys and a Postgresql with a
  password are stored with their Secret for alice, refused for bob (who views team-a); erin — a custom Role that may
  create Darkrooms and Postgresqls but not Secrets — gets 403 naming ``create secrets`` (dry run too), and nothing is
  left half-created: no Darkroom, no Postgresql, no Secret.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from tests.identityfixtures import TEAM_A, TEAM_B, Panel
from tests.support import wait_for

from .control_plane import ControlPlane
from .kinds_and_bodies import BY_PLURAL, KIND_LIST, Kind, body, changed, s3_darkroom, unique
from .panel_http import loopback, problem
from .people import NAMESPACES, PEOPLE, Tokens

EDITORS = {TEAM_A: "alice", TEAM_B: "bob"}
VERBS = ("list", "get", "create", "update", "patch", "delete")
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with loopback() as session:
        yield session


@pytest.fixture(scope="module")
def targets(panel: Panel, tokens: Tokens, http: requests.Session) -> dict[tuple[str, str], str]:
    """An object of each kind in each namespace, made by that namespace's editor through the panel."""
    made = {}
    for kind in KIND_LIST:
        for namespace in NAMESPACES:
            name = unique(f"{kind.plural[:4]}-target")
            created = http.post(
                f"{panel.url}/{kind.plural}", json=body(kind.plural, name, namespace), headers=tokens.bearer(EDITORS[namespace])
            )
            assert created.status_code == 201, created.text
            made[(kind.plural, namespace)] = name
    return made


@dataclass
class Row:
    """One operation of the table: what the panel answered and what kube's decision means for it."""

    operation: str
    status: int
    expected: int
    refusal: dict[str, Any] | None = None


class Table:
    """The answers of one (kind, person, namespace) case, compared at the end so a failure shows the whole row."""

    def __init__(self, kind: Kind, person: str, namespace: str, may: dict[str, bool]) -> None:
        self.kind, self.person, self.namespace, self.may = kind, person, namespace, may
        self.rows: list[Row] = []

    def check(
        self, operation: str, response: requests.Response, verb: str, ok: int, *, missing: bool = False, refused_as: str = ""
    ) -> bool:
        """Record ``response`` against kube's decision on ``verb``; whether the panel allowed it."""
        expected = (404 if missing else ok) if self.may[verb] else 403
        refusal = response.json() if response.status_code == 403 else None
        if refusal is not None:
            wanted = {
                "user": f"oidc:{self.person}",
                "verb": refused_as or verb,
                "group": self.kind.group,
                "resource": self.kind.plural,
                "namespace": self.namespace,
            }
            if {k: refusal.get(k) for k in wanted} != wanted:
                refusal = {"unexpected": {k: refusal.get(k) for k in wanted}, "wanted": wanted}
            else:
                refusal = None
        self.rows.append(Row(operation, response.status_code, expected, refusal))
        return 200 <= response.status_code < 300

    def assert_matches(self) -> None:
        wrong = [row for row in self.rows if row.status != row.expected or row.refusal is not None]
        assert not wrong, f"{self.person} on {self.kind.plural} in {self.namespace} (kube allows {self.may}): {wrong}"


@pytest.mark.parametrize("namespace", NAMESPACES)
@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize("plural", [kind.plural for kind in KIND_LIST])
def test_each_verb_answers_what_kube_allows(
    plural: str,
    person: str,
    namespace: str,
    panel: Panel,
    tokens: Tokens,
    control_plane: ControlPlane,
    targets: dict[tuple[str, str], str],
    http: requests.Session,
) -> None:
    kind = BY_PLURAL[plural]
    may = {verb: control_plane.allows(tokens[person], verb, plural, kind.group, namespace) for verb in VERBS}
    table = Table(kind, person, namespace, may)
    headers = tokens.bearer(person)
    base = f"{panel.url}/{plural}"
    target, missing = targets[(plural, namespace)], unique("missing")
    # the panel fetches an object before it writes it: someone who may not get it is refused that get first
    item_refusal = {verb: verb if may["get"] else "get" for verb in ("update", "patch", "delete")}

    table.check("list one namespace", http.get(base, params={"namespace": namespace}, headers=headers), "list", 200)

    trial = body(plural, unique("dry"), namespace)
    table.check("create, dry run", http.post(base, params={"dryRun": "All"}, json=trial, headers=headers), "create", 201)
    assert trial["name"] not in control_plane.names(kind, namespace), "a dry run stored an object"
    own = body(plural, unique(person), namespace)
    created = table.check("create", http.post(base, json=own, headers=headers), "create", 201)
    assert (own["name"] in control_plane.names(kind, namespace)) == created

    table.check("get", http.get(f"{base}/{namespace}/{target}", headers=headers), "get", 200)
    table.check("get a missing one", http.get(f"{base}/{namespace}/{missing}", headers=headers), "get", 200, missing=True)

    url = f"{base}/{namespace}/{target}"
    replacement = body(plural, target, namespace, **changed(plural))
    refused_as = item_refusal["update"]
    table.check(
        "replace, dry run", http.put(url, params={"dryRun": "All"}, json=replacement, headers=headers), "update", 200, refused_as=refused_as
    )
    table.check("replace", http.put(url, json=replacement, headers=headers), "update", 200, refused_as=refused_as)
    patch_headers = {**headers, **MERGE}
    patch = changed(plural)
    # a PATCH is written as a whole object (the panel validates the merged result): kube refuses it as an update
    table.check(
        "patch, dry run", http.patch(url, params={"dryRun": "All"}, json=patch, headers=patch_headers), "patch", 200, refused_as=refused_as
    )
    table.check("patch", http.patch(url, json=patch, headers=patch_headers), "patch", 200, refused_as=refused_as)
    table.check(
        "delete, dry run", http.delete(url, params={"dryRun": "All"}, headers=headers), "delete", 204, refused_as=item_refusal["delete"]
    )
    assert target in control_plane.names(kind, namespace), "a dry run deleted the object"

    missing_url = f"{base}/{namespace}/{missing}"
    replaced = http.put(missing_url, json=body(plural, missing, namespace), headers=headers)
    table.check("replace a missing one", replaced, "update", 200, missing=True, refused_as=item_refusal["update"])
    patched = http.patch(missing_url, json=patch, headers=patch_headers)
    table.check("patch a missing one", patched, "patch", 200, missing=True, refused_as=item_refusal["patch"])
    removed = http.delete(missing_url, headers=headers)
    table.check("delete a missing one", removed, "delete", 204, missing=True, refused_as=item_refusal["delete"])

    # a real delete: the person's own object where they could create one, the shared target otherwise (refused: it stays)
    assert created or not may["delete"], "these roles allow delete only with create"
    victim = own["name"] if created else target
    removed = http.delete(f"{base}/{namespace}/{victim}", headers=headers)
    deleted = table.check("delete", removed, "delete", 204, refused_as=item_refusal["delete"])
    assert (victim in control_plane.names(kind, namespace)) != deleted
    table.assert_matches()


@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize("plural", [kind.plural for kind in KIND_LIST])
def test_listing_every_namespace_shows_exactly_what_the_person_may_list(
    plural: str,
    person: str,
    panel: Panel,
    tokens: Tokens,
    control_plane: ControlPlane,
    targets: dict[tuple[str, str], str],
    http: requests.Session,
) -> None:
    kind = BY_PLURAL[plural]
    listable = {ns for ns in NAMESPACES if control_plane.allows(tokens[person], "list", plural, kind.group, ns)}
    assert not control_plane.allows(tokens[person], "list", plural, kind.group), "nobody here may list every namespace"
    stored = {(ns, name) for ns in listable for name in control_plane.names(kind, ns)}

    def listed() -> dict[str, Any] | None:
        answer = http.get(f"{panel.url}/{plural}", headers=tokens.bearer(person))
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        return found if {(i["namespace"], i["name"]) for i in found["items"]} == stored else None

    page = wait_for(listed, timeout_s=10, message=f"{person}'s list of {plural} to be what kube stores where they may list")
    assert page["total"] == len(page["items"]) == len(stored)
    first = problem(http.get(f"{panel.url}/{plural}", params={"limit": 1}, headers=tokens.bearer(person)), 200)
    assert first["total"] == len(stored) and len(first["items"]) == min(1, len(stored))


# --- the Secrets a kind's write makes, as the person ---------------------------------------------------------------

KEYS = ("AKIA-IDENTITY-TEST-ACCESS", "identity-test-secret-key-do-not-leak")
PASSWORD = "identity-test-password-do-not-leak"


def _stored(control_plane: ControlPlane, kind: Kind, namespace: str, name: str) -> bool:
    return control_plane.get(kind.kube_path(namespace, name)) is not None


def test_alice_writes_the_owned_secrets_herself_and_bob_who_views_may_not(
    panel: Panel, tokens: Tokens, control_plane: ControlPlane, http: requests.Session
) -> None:
    darkroom, database = unique("s3"), unique("pg")
    made = http.post(f"{panel.url}/darkrooms", json=s3_darkroom(darkroom, TEAM_A, KEYS), headers=tokens.bearer("alice"))
    assert made.status_code == 201, made.text
    assert control_plane.secret(TEAM_A, f"{darkroom}-s3-credentials") is not None
    made = http.post(
        f"{panel.url}/postgresqls", json=body("postgresqls", database, TEAM_A, password=PASSWORD), headers=tokens.bearer("alice")
    )
    assert made.status_code == 201, made.text
    assert control_plane.secret(TEAM_A, f"{database}-credentials") is not None

    for plural, friendly in (
        ("darkrooms", s3_darkroom(unique("s3"), TEAM_A, KEYS)),
        ("postgresqls", body("postgresqls", unique("pg"), TEAM_A, password=PASSWORD)),
    ):
        refused = problem(http.post(f"{panel.url}/{plural}", json=friendly, headers=tokens.bearer("bob")), 403)
        assert (refused["user"], refused["verb"], refused["resource"], refused["namespace"]) == ("oidc:bob", "create", plural, TEAM_A)
        assert not _stored(control_plane, BY_PLURAL[plural], TEAM_A, friendly["name"])
        for suffix in ("-s3-credentials", "-credentials"):
            assert control_plane.secret(TEAM_A, friendly["name"] + suffix) is None


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dry-run"])
def test_who_may_create_darkrooms_but_not_secrets_is_told_so_and_nothing_is_left(
    dry_run: bool, panel: Panel, tokens: Tokens, control_plane: ControlPlane, http: requests.Session
) -> None:
    params = {"dryRun": "All"} if dry_run else {}
    plain = http.post(
        f"{panel.url}/darkrooms", params=params, json=body("darkrooms", unique("erin"), TEAM_A), headers=tokens.bearer("erin")
    )
    assert plain.status_code == 201, plain.text  # erin may create Darkrooms: only the Secret is what she may not write

    for plural, friendly, secret in (
        ("darkrooms", s3_darkroom(unique("s3"), TEAM_A, KEYS), "{}-s3-credentials"),
        ("postgresqls", body("postgresqls", unique("pg"), TEAM_A, password=PASSWORD), "{}-credentials"),
    ):
        answer = http.post(f"{panel.url}/{plural}", params=params, json=friendly, headers=tokens.bearer("erin"))
        refused = problem(answer, 403)
        assert (refused["user"], refused["verb"], refused["group"], refused["resource"], refused["namespace"]) == (
            "oidc:erin",
            "create",
            "",
            "secrets",
            TEAM_A,
        ), refused
        assert "create secrets" in refused["detail"]
        assert KEYS[1] not in answer.text and PASSWORD not in answer.text
        assert not _stored(control_plane, BY_PLURAL[plural], TEAM_A, friendly["name"]), f"a half-created {plural} was left"
        assert control_plane.secret(TEAM_A, secret.format(friendly["name"])) is None
