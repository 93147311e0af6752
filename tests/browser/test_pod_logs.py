"""The pod logs page in a real browser, at 1366 and 390 px, light and dark.

Behaviours: the Darkroom's detail page links to Logs; the page (its Deployment made by the reconciler, its pod run by the
cluster's simulated kubelet) shows the pod's log lines as they stream, with the pod's image, marked with the pod when
all pods are shown; a followed log gets a later line without a reload; Pause holds new lines (Resume brings them),
the wrap checkbox wraps at once; Download is an attachment of the same text; the page fits a phone (nothing wider than
the viewport: the log box scrolls on its own); a pod writing 1,000 lines a second (the simulation's rate annotation)
fills the page up to the lines it keeps and no further, and Pause/Resume still answer a click at once while it streams.
No console error, CSP violation or dialog (the fixture's check).
Screenshots: ``logs-<width>-<scheme>.png``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack
from tests.browser.test_live_details import darkroom
from tests.support import wait_for

RATE_ANNOTATION = "simulation.example.com/log-lines-per-second"  # both clusters' simulated kubelets
MAX_LINES = 5000  # the lines the page keeps (static/podlogs.js)
CLICK_MS = 10_000  # a click's answer while the log streams (a generous wait: behaviour, not a timing target)
SIZES = {"1366": {"width": 1366, "height": 768}, "390": {"width": 390, "height": 844}}
LINE_S = 30_000  # ms a streamed line may take on a loaded machine (a wait, never a timing assertion)


@pytest.fixture(scope="module")
def with_pod(stack: Stack) -> tuple[str, str]:
    """A Darkroom whose pod runs (the reconciler made its Deployment): its logs page and the pod's name."""
    darkroom(stack, "logged")
    core: Any = stack.core()

    def running() -> str | None:
        pods = core.list_namespaced_pod(stack.namespace).items
        names = [p.metadata.name for p in pods if p.metadata.name.startswith("logged-") and p.status.phase == "Running"]
        return names[0] if names else None

    pod: str = wait_for(running, timeout_s=90, message="the Darkroom's pod never ran")
    return f"/ui/darkrooms/{stack.namespace}/logged/logs", pod


@pytest.mark.pairwise_with_kinds(("size", "scheme"), [(size, scheme) for size in SIZES for scheme in ("light", "dark")])
def test_the_logs_page_streams_and_fits(with_pod: tuple[str, str], new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    path, pod = with_pod
    page = new_page(viewport=SIZES[size], color_scheme=scheme).page
    page.goto(path.removesuffix("/logs"))
    page.click("#logs-link")
    expect(page).to_have_url(f"{path}?follow=1")
    lines = page.locator("#log-lines")
    expect(lines).to_contain_text("image: ", timeout=LINE_S)
    expect(page.locator("#log-lines .log-pod").first).to_have_text(pod)
    expect(page.locator("#log-status")).to_have_text("Following")
    assert_fits(page)
    shot(page, f"logs-{size}-{scheme}")


def test_follow_pause_resume_wrap_and_download(with_pod: tuple[str, str], new_page: Callable[..., Watched]) -> None:
    path, pod = with_pod
    page = new_page(viewport=SIZES["1366"], accept_downloads=True).page
    page.goto(f"{path}?pod={pod}&tail=1&follow=1")
    lines = page.locator("#log-lines .log-line")
    expect(lines).to_have_count(1, timeout=LINE_S)  # tail=1
    expect(lines).not_to_have_count(1, timeout=LINE_S)  # the simulated kubelet writes a line every few seconds
    assert page.locator("#log-lines .log-pod").count() == 0  # one pod: no marks
    page.click("#log-pause")
    expect(page.locator("#log-pause")).to_have_attribute("aria-pressed", "true")
    held = lines.count()
    expect(page.locator("#log-status")).to_contain_text("new lines", timeout=LINE_S)
    assert lines.count() == held  # paused: nothing appended
    page.click("#log-pause")
    expect(lines).not_to_have_count(held)
    expect(page.locator("#log-status")).to_have_text("Following")
    assert "wrap" not in (page.get_attribute("#log-lines", "class") or "")
    page.check("#log-wrap")
    expect(page.locator("#log-lines")).to_have_class("log-lines wrap")
    with page.expect_download() as caught:
        page.click("#log-download")
    download = caught.value
    assert download.suggested_filename == f"logged-{pod}.log"
    with open(download.path(), encoding="utf-8") as saved:
        assert len(saved.read().splitlines()) == 1  # the page's selection: tail=1


def test_a_pod_writing_1000_lines_a_second_keeps_the_page_bounded_and_usable(stack: Stack, new_page: Callable[..., Watched]) -> None:
    from kubernetes import client

    darkroom(stack, "chatty")
    apps: Any = client.AppsV1Api(stack.api_client)
    core: Any = stack.core()

    def made() -> bool | None:  # the reconciler's Deployment
        return bool(apps.list_namespaced_deployment(stack.namespace, field_selector="metadata.name=chatty").items) or None

    wait_for(made, timeout_s=60, message="the Darkroom's Deployment never came")
    template_annotation = {"spec": {"template": {"metadata": {"annotations": {RATE_ANNOTATION: "1000"}}}}}
    apps.patch_namespaced_deployment("chatty", stack.namespace, template_annotation)  # a rollout: pods writing 1,000 lines/s

    def fast_pod() -> str | None:
        for pod in core.list_namespaced_pod(stack.namespace).items:
            fast = (pod.metadata.annotations or {}).get(RATE_ANNOTATION) == "1000"
            live = pod.status.phase == "Running" and pod.metadata.deletion_timestamp is None
            if pod.metadata.name.startswith("chatty-") and fast and live:
                return str(pod.metadata.name)
        return None

    pod: str = wait_for(fast_pod, timeout_s=90, message="no pod of the new template ran")
    page = new_page(viewport=SIZES["1366"]).page
    path = f"/ui/darkrooms/{stack.namespace}/chatty/logs"
    page.goto(f"{path}?pod={pod}&follow=1")
    lines = page.locator("#log-lines .log-line")
    expect(page.locator("#log-lines")).to_contain_text("of a container writing 1000 lines/s on", timeout=LINE_S)
    expect(lines).to_have_count(MAX_LINES, timeout=LINE_S)  # 5 s of lines: the page keeps its last MAX_LINES
    pause = page.locator("#log-pause")
    # While 1,000 lines a second arrive, a click still answers. The buttons navigate nowhere: no_wait_after skips
    # Playwright's wait for navigations the click might have scheduled, which on a loaded CI machine (load average
    # ~20) outlasted the whole timeout after the click itself was done; the answer is what the expects check.
    for _ in range(2):
        pause.click(timeout=CLICK_MS, no_wait_after=True)
        expect(pause).to_have_attribute("aria-pressed", "true", timeout=CLICK_MS)
        expect(page.locator("#log-status")).to_contain_text("new lines", timeout=CLICK_MS)
        pause.click(timeout=CLICK_MS, no_wait_after=True)
        expect(pause).to_have_attribute("aria-pressed", "false", timeout=CLICK_MS)
        expect(page.locator("#log-status")).to_have_text("Following", timeout=CLICK_MS)
    page.wait_for_timeout(2000)  # two more seconds of lines: still no more than the page keeps
    assert lines.count() <= MAX_LINES
    last = lines.last.text_content() or ""
    assert "of a container writing 1000 lines/s on" in last, last
