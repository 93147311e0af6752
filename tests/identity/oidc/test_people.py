"""Every request acts as the person who makes it: alice, bob and carol through the same control panel (real control plane,
real identity provider, passthrough: their own ID tokens go to kube-apiserver).

Behaviours: an API client's bearer ID token lists exactly the Darkrooms its person may list (alice: team-a; bob:
team-a and team-b; carol: none), asking for a namespace one may not list is 403 naming verb, resource and
namespace; a browser signs in through the provider (code flow with PKCE) and the session acts as that person;
``/namespaces`` offers the namespaces each may see.
"""

from __future__ import annotations

import uuid
from typing import Any

import requests

from tests.identityfixtures import TEAM_A, TEAM_B, Panel, Teams


def _darkroom(namespace: str) -> dict[str, Any]:
    name = f"dr-{uuid.uuid4().hex[:6]}"
    return {"name": name, "namespace": namespace, "source": {"type": "WebFolder", "baseUrl": "https://example.com/i"}, "subDomains": [name]}


def test_each_person_lists_what_they_may(panel: Panel, teams: Teams) -> None:
    for namespace in (TEAM_A, TEAM_B):
        created = requests.post(
            f"{panel.url}/darkrooms", json=_darkroom(namespace), headers=panel.bearer("bob" if namespace == TEAM_B else "alice"), timeout=10
        )
        assert created.status_code == 201, created.text
    seen = {}
    for person in ("alice", "bob", "carol"):
        listed = requests.get(f"{panel.url}/darkrooms", headers=panel.bearer(person), timeout=10)
        assert listed.status_code == 200, listed.text
        seen[person] = {item["namespace"] for item in listed.json()["items"]}
    assert seen == {"alice": {TEAM_A}, "bob": {TEAM_A, TEAM_B}, "carol": set()}
    refused = requests.get(f"{panel.url}/darkrooms?namespace={TEAM_B}", headers=panel.bearer("alice"), timeout=10)
    assert refused.status_code == 403
    problem = refused.json()
    assert (problem["verb"], problem["resource"], problem["namespace"], problem["user"]) == ("list", "darkrooms", TEAM_B, "oidc:alice")


def test_a_browser_signs_in_through_the_provider(panel: Panel) -> None:
    alice = panel.browser_login("alice")
    listed = alice.get(f"{panel.url}/darkrooms", timeout=10)
    assert listed.status_code == 200 and {i["namespace"] for i in listed.json()["items"]} <= {TEAM_A}
    assert alice.get(f"{panel.url}/darkrooms?namespace={TEAM_B}", timeout=10).status_code == 403
    names = {n["name"] for n in alice.get(f"{panel.url}/namespaces", timeout=10).json()["items"]}
    assert names == {TEAM_A}
