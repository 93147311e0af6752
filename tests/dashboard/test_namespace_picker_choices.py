"""The namespace picker's choices (:mod:`backend.dashboard.namespacepicker`) and the bound on "may … anywhere".

Behaviours: up to the limit the names are a select's options, above it a typeahead; suggestions are at most 20 names,
those starting with the typed text first, then those containing it, each in name order, case and spaces ignored;
nothing typed suggests the first 20; dropping names keeps the limit; for a person who may not list namespaces only the
names they may see are suggested, at most ``SUGGESTION_ASKS_MAX`` asked about per list; :meth:`Permissions.anywhere` asks at most
``ANYWHERE_ASKS_MAX`` namespaces — "allowed" when a grant is among them or when more remain unasked, refused (with
the reason) only when every namespace was asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend.dashboard.namespacepicker import SUGGESTION_ASKS_MAX, SUGGESTIONS, Namespaces
from backend.identity.callers import Caller
from backend.identity.permissions import ANYWHERE_ASKS_MAX, Permissions
from cluster import DARKROOMS
from cluster.acting import Actor
from cluster.reviewing import Decision


def test_a_select_up_to_the_limit_and_a_typeahead_above_it() -> None:
    assert not Namespaces(["a", "b"], limit=2).typeahead
    assert Namespaces(["a", "b", "c"], limit=2).typeahead
    assert Namespaces(["a", "b", "c"], limit=2).without(["b"]) == ("a", "c")
    assert Namespaces(["a", "b", "c"], limit=2).without(["b"]).limit == 2


def test_suggestions_start_with_the_typed_text_then_contain_it() -> None:
    names = Namespaces(sorted([*(f"team-{n:03}" for n in range(30)), "prod-team-7", "staging", "xteam"]), limit=5)
    assert names.suggestions("") == names[:SUGGESTIONS]
    assert names.suggestions("team-00") == tuple(f"team-00{n}" for n in range(10))
    assert names.suggestions("  STAG ") == ("staging",)
    assert names.suggestions("team-7") == ("prod-team-7",)  # contains, when nothing starts with it
    found = names.suggestions("team")
    assert len(found) == SUGGESTIONS and found == tuple(f"team-{n:03}" for n in range(SUGGESTIONS))
    few = Namespaces(["a-team", "b-team", "team"], limit=1)
    assert few.suggestions("team") == ("team", "a-team", "b-team")  # prefix first, then the others in name order
    assert names.suggestions("nothing-like-it") == ()


@dataclass
class Reviewer:
    """Answers each question from ``allowed_in`` (namespaces; None: cluster-wide), counting the questions."""

    allowed_in: set[str | None]
    asked: list[Any] = field(default_factory=list)

    def decide(self, credentials: Any, attributes: Any) -> Decision:
        self.asked.append(attributes)
        return Decision(attributes.namespace in self.allowed_in)


def permissions(reviewer: Reviewer) -> Permissions:
    caller = Caller(actor=Actor(user=None, credentials=None), via="local")  # type: ignore[arg-type]
    return Permissions(reviewer=reviewer, caller=caller)  # type: ignore[arg-type]


def test_anywhere_asks_a_bounded_number_of_namespaces() -> None:
    many = [f"ns-{n:05}" for n in range(20_000)]
    nowhere = Reviewer(allowed_in=set())
    assert permissions(nowhere).anywhere("create", DARKROOMS, many)  # not known cheaply: shown, the form asks per namespace
    assert len(nowhere.asked) <= 2 * ANYWHERE_ASKS_MAX + 1  # each namespace's question, and the cluster-wide one once
    few = many[:ANYWHERE_ASKS_MAX]
    refused = permissions(Reviewer(allowed_in=set())).anywhere("create", DARKROOMS, few)
    assert not refused and "any namespace you can see" in refused.reason
    somewhere = Reviewer(allowed_in={"ns-00003"})
    assert permissions(somewhere).anywhere("create", DARKROOMS, many)
    everywhere = Reviewer(allowed_in={""})
    assert permissions(everywhere).anywhere("create", DARKROOMS, many) and len(everywhere.asked) == 1


def test_suggestions_of_a_person_who_may_not_list_namespaces_ask_a_bounded_number() -> None:
    asked: list[str] = []

    def sees(namespace: str) -> bool:
        asked.append(namespace)
        return namespace.endswith("7")

    names = Namespaces([f"ns-{n:05}" for n in range(20_000)], limit=500, sees=sees)
    assert names.suggestions("ns-000") == tuple(f"ns-000{n}7" for n in range(6))  # only theirs, among the first asked
    assert len(asked) == SUGGESTION_ASKS_MAX
    asked.clear()
    assert names.suggestions("ns-1234") == ("ns-12347",) and len(asked) == 10
    assert names.without(["ns-00007"]).sees is sees
