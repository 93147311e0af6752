"""The resource tree of the detail pages in a real browser, at 1366 and 390 px, light and dark.

Behaviours: a Darkroom's page (the reconciler made its children) shows Deployment → ReplicaSet → Pod, the Pod Running,
and Service → its EndpointSlice, ready; when the Pod's status changes through the cluster's client (its container
crash-looping, restarted three times) its node says so — CrashLoopBackOff, "3 restarts" — without a reload and
without a poll (the page's one stream), and a fold the user closed stays closed across that refresh. A Postgresql's
page shows StatefulSet → Pod → its claim, whose YAML link opens its read-only YAML page. A Pod's Logs link, reached
with the keyboard, opens the logs page with that pod chosen. At 390 px the tree fits the
width (nothing scrolls sideways). Screenshots: ``tree-*.png``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack
from tests.browser.test_live_details import LIVE_S, POSTGRESQLS, SIZES, assert_not_reloaded, make, open_live

DARKROOMS = ("deployments.example.com", "v1alpha1", "darkrooms")
COMBINATIONS = [("1366", "light"), ("1366", "dark"), ("390", "light"), ("390", "dark")]


@pytest.mark.pairwise_with_kinds(("size", "scheme"), COMBINATIONS)
def test_a_pods_node_follows_its_status_without_a_reload(stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    name = f"tree-{size}-{scheme}"
    spec = {"replicas": 1, "source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": [f"{name}-img"]}
    make(stack, DARKROOMS, name, spec)
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}"))
    tree = page.locator("#darkroom-children .tree")
    pod = tree.locator("li[data-kind=Deployment] li[data-kind=ReplicaSet] li[data-kind=Pod]").first
    expect(pod).to_have_attribute("data-state", "ready", timeout=LIVE_S)
    line = pod.locator("> .node-line")
    expect(line.locator(".badge")).to_have_text("Running")
    expect(line.get_by_role("link", name=f"YAML of Pod {pod.get_attribute('data-name')}")).to_be_visible()
    endpoints = tree.locator(f"li[data-kind=Service][data-name='{name}'] li[data-kind=EndpointSlice]")
    expect(endpoints).to_have_attribute("data-state", "ready", timeout=LIVE_S)  # the Service's slice: its Pod's endpoint
    assert_fits(page)
    shot(page, f"tree-darkroom-{size}-{scheme}")

    crashing = {
        "name": "darkroom",
        "restartCount": 3,
        "ready": False,
        "state": {"running": None, "waiting": {"reason": "CrashLoopBackOff"}},
    }
    pod_name = pod.get_attribute("data-name")
    pods_fold = tree.locator("li[data-kind=ReplicaSet] > details[data-group=Pods]").first
    pods_fold.locator("> summary").click()  # the user folds the Pods: the live refresh keeps them folded
    expect(pods_fold).not_to_have_attribute("open", "")
    stack.core().patch_namespaced_pod_status(
        pod_name, stack.namespace, {"status": {"containerStatuses": [crashing]}}, _preload_content=False
    )
    changed = tree.locator(f"li[data-kind=Pod][data-name='{pod_name}']")
    expect(changed).to_have_attribute("data-state", "crashloopbackoff", timeout=LIVE_S)
    page.wait_for_function("() => !document.querySelector('#darkroom-children li[data-kind=ReplicaSet] > details[data-group=Pods]').open")
    pods_fold.locator("> summary").click()
    expect(changed.locator("> .node-line .badge")).to_have_text("CrashLoopBackOff")
    expect(changed.locator("> .node-line")).to_contain_text("3 restarts")
    assert_not_reloaded(page)
    assert_fits(page)
    shot(page, f"tree-darkroom-crashing-{size}-{scheme}")


@pytest.mark.parametrize(("size", "scheme"), [("1366", "dark"), ("390", "light")])
def test_a_postgresqls_tree_is_statefulset_pod_and_claim(stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    name = f"tree-pg-{size}"
    make(stack, POSTGRESQLS, name, {})
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), stack.when_shown(f"/ui/postgresqls/{stack.namespace}/{name}"))
    claim = page.locator(
        f"#postgresql-children li[data-kind=StatefulSet] li[data-kind=Pod] li[data-kind=PersistentVolumeClaim][data-name='data-{name}-0']"
    )
    expect(claim).to_be_visible(timeout=LIVE_S)
    assert_fits(page)
    shot(page, f"tree-postgresql-{size}-{scheme}")
    claim.locator("> .node-line").get_by_role("link", name=f"YAML of PersistentVolumeClaim data-{name}-0").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"PersistentVolumeClaim data-{name}-0")
    expect(page.locator("pre.yaml")).to_contain_text("kind: PersistentVolumeClaim")
    assert_fits(page)
    shot(page, f"tree-yaml-{size}-{scheme}")


def test_a_pods_logs_link_opens_its_logs_with_that_pod_chosen(stack: Stack, new_page: Callable[..., Watched]) -> None:
    name = "tree-logs"
    spec = {"replicas": 2, "source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": [f"{name}-img"]}
    make(stack, DARKROOMS, name, spec)
    page = open_live(new_page(viewport=SIZES["1366"]), stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}"))
    pod = page.locator("#darkroom-children li[data-kind=ReplicaSet] li[data-kind=Pod]").last
    expect(pod).to_have_attribute("data-state", "ready", timeout=LIVE_S)
    pod_name = pod.get_attribute("data-name")
    link = pod.locator("> .node-line").get_by_role("link", name=f"Logs of Pod {pod_name}")
    expect(link).to_have_attribute("href", f"/ui/darkrooms/{stack.namespace}/{name}/logs?pod={pod_name}&follow=1")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/ui/darkrooms/{stack.namespace}/{name}/logs?pod={pod_name}&follow=1")
    expect(page.locator("select[name=pod]")).to_have_value(str(pod_name))
    expect(page.locator("#log-heading")).to_have_text(str(pod_name))
