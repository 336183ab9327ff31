"""Every HTML page of the URL registry at 1366, 800 and 390 px, in the light scheme and
again in the dark one (``color_scheme="dark"``: the system preference the stylesheet
follows): no sideways scrolling of the page, no console error (CSP violations
included), no 4xx/5xx of the page's own requests, and a navigation reachable from the
keyboard at every width. Each page is loaded once and then resized and switched to
the dark scheme in place, so it must also follow a window that changes under it.

The pages come from the same walk of the URL registry as the permission matrix
(``tests/test_permission_matrix.routes``), with concrete URLs from its ``world``
fixture plus a busier site (``seed_site``) for the variants in ``VARIANTS``. Every
route answering GET must render an HTML page for the signed-in admin or be listed
in ``NOT_PAGES`` with a reason; anything else fails naming the route, so a new page
is covered without editing this file.

``HX_SCREENSHOTS=DIR`` also writes full-page screenshots at 1366 px into DIR
(``HX_SCREENSHOT_WIDTHS=1366,390`` for more widths).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.test import Client

from allocation.services import jobs, machines
from health import services as health
from health import tasks
from health.models import EstimationRun
from hxportal.models import RunStatus
from recommendations import services as recommendations
from simulation import services as simulations
from tests import test_permission_matrix as matrix
from tests.health.test_health_spares import seed_history
from tests.simulation.conftest import TINY
from tests.test_permission_matrix import concrete, routes

pytestmark = pytest.mark.django_db(transaction=True)
# The permission matrix's fixture: one object of every kind, so every <pk> route resolves.
world = matrix.world

WIDTHS = (1366, 800, 390)
#: Colour schemes and the widths each is checked at (dark: the widest and narrowest).
SCHEMES = (("light", WIDTHS), ("dark", (1366, 390)))
HEIGHT = 900
# Routes answering GET that are not HTML pages: route -> why the browser skips it.
# (The API, /admin/ and routes without GET - logout and the POST-only actions -
# are left out before this list is consulted.)
NOT_PAGES = {
    "favicon.ico": "redirect to the static icon",
    "simulation/reproduction/start/": "GET redirects to the reproduction page; the form POSTs",
    "simulation/sweeps/study/": "GET redirects to the new-sweep page; its study form POSTs",
    "simulation/sweeps/<int:pk>/results.csv": "CSV download",
    "simulation/sweeps/<int:pk>/results.json": "JSON download",
    "jobs.csv": "CSV download of the job list",
    "machines/<str:name>/nodes.csv": "CSV download of a machine's node list",
    "whatif/new/": "GET redirects to the what-if list; its upload form POSTs",
    "whatif/<int:pk>/results.csv": "CSV download of a what-if study",
    "whatif/<int:pk>/results.json": "JSON download of a what-if study",
}
# Extra URLs of a route, on the busy site of ``seed_site`` or with a query that
# fills in the page's results: route -> URL templates formatted with its ids.
VARIANTS = {
    "": ["/?range=day", "/?range=month"],
    "search/": ["/search/?q=nosuch[1-3]", "/search/?q=hx[001-004],n01"],
    "jobs/": ["/jobs/?machine=hx"],
    "machines/<str:name>/": ["/machines/hx/"],
    "machines/<str:name>/nodes/": ["/machines/hx/nodes/"],
    "machines/<str:name>/nodes/state/": [
        "/machines/hx/nodes/state/?hostlist=hx[001-004]&state=drained"],
    "machines/<str:name>/compare/": ["/machines/hx/compare/?size=64"],
    "recommendations/<int:pk>/": ["/recommendations/{rec}/"],
    "jobs/<int:pk>/": ["/jobs/{job}/"],
    "jobs/<int:pk>/select-fastest/": [
        "/jobs/{bench_job}/select-fastest/?benchmark=stream&n_node=12"],
    "simulation/runs/<int:pk>/": ["/simulation/runs/{run}/", "/simulation/runs/{failed}/"],
    "simulation/sweeps/<int:pk>/": ["/simulation/sweeps/{sweep}/"],
    "recommendations/calibrations/<int:pk>/": [
        "/recommendations/calibrations/{calibration}/?load=0.375"],
    "spares/": ["/spares/?n_node=100&p_abn=0.005&alpha_abn=10&t_bench=0.1&t_cmpt=10"],
}


def seed_site(owner, m4) -> dict:
    """A busy 8x8 machine; a benchmark history and an estimate on the 4x4 one (``m4``);
    a recommendation, finished and failed simulations, a finished sweep."""
    hx = machines.create_machine(name="hx", sides=[8, 8], concentration=8,
                                 description="Reference HyperX: 8x8 switches, c = 8")
    held = []
    for i, policy in enumerate(["row", "diagonal", "rectangular"]):
        job = jobs.submit_job(owner=owner, machine=hx, name=f"bg{i}", node_count=64,
                              pattern="all-to-all", policy=policy, spares=4 if i == 0 else 0)
        held.append(job)
        if i == 0:
            jobs.start_job(job)
    # A drained and a down node inside a job: the grid must show both states.
    inside = list(held[0].allocations.values_list("node__hostname", flat=True)[:2])
    machines.set_node_state(hx, inside[0], "drained", "ECC errors")
    machines.set_node_state(hx, inside[1], "down", "no heartbeat")
    jobs.create_job(owner=owner, machine=hx, name="waiting", node_count=128,
                    pattern="stencil-4")
    machines.set_node_state(hx, "hx[505-512]", "drained", "fan failure on the last switch")
    benchmarked = seed_history(m4, owner)[0]
    run = health.start_estimation(m4)
    tasks.run_estimation.apply(args=[run.pk])
    EstimationRun.objects.create(machine=m4, status=RunStatus.FAILED,
                                 error="no benchmark results in the window")
    rec, _ = recommendations.request_recommendation(
        user=owner, machine=hx, node_count=64, pattern="all-to-all", t_cmpt=100.0,
        t_comm=50.0, simulate=False)  # hx has no estimate: the spare card says so
    done = simulations.start_run(dict(TINY))
    simulations.execute_run(done.pk)
    failed = simulations.start_run({**TINY, "seed": 7})
    type(failed).objects.filter(pk=failed.pk).update(status=RunStatus.FAILED,
                                                     error="worker lost")
    sweep = simulations.create_sweep(name="layout", base=dict(TINY),
                                     parameters={"policy": ["row", "diagonal"]})
    for sweep_run in sweep.runs.all():
        simulations.execute_run(sweep_run.pk)
    calibration, _ = recommendations.start_calibration(hx, axes={
        "patterns": ["all2all"], "sizes": [8, 32], "loads": [0.375], "seeds": [0, 1],
        "policies": ["row", "diagonal", "random_switch"]})
    calibration = recommendations.prepare_calibration(calibration.pk)
    for calibration_run in calibration.sweep.runs.all():
        simulations.execute_run(calibration_run.pk)
    return {"rec": rec.pk, "run": done.pk, "failed": failed.pk, "job": held[0].pk,
            "bench_job": benchmarked.pk, "sweep": sweep.pk, "calibration": calibration.pk}


def page_routes() -> tuple[list[str], list[str]]:
    """(routes that may be pages, routes left out): every non-API route with GET; a
    function view (no recorded methods) is probed too."""
    candidates, left_out = [], []
    for path, cls, actions, is_api in routes():
        if is_api:
            left_out.append(f"/{path} (API)")
        elif "GET" in actions or cls is None:
            candidates.append(path)
        else:
            left_out.append(f"/{path} ({', '.join(actions) or 'no GET'} only)")
    return candidates, left_out


def pages(world_ids: dict, site_ids: dict, admin) -> list[tuple[str, str]]:
    """(route, URL) of every HTML page; fails naming each route that is neither an
    HTML page for the admin nor listed in NOT_PAGES (or listed but now a page)."""
    client = Client()
    client.force_login(admin)
    candidates, _ = page_routes()
    found, problems = [], []
    for route in candidates:
        url = concrete(route, world_ids)
        response = client.get(url)
        kind = response.get("Content-Type", "").split(";")[0]
        is_page = response.status_code == 200 and kind == "text/html"
        if route in NOT_PAGES:
            if is_page:
                problems.append(f"/{route}: listed in NOT_PAGES but {url} is an HTML page")
            elif response.status_code >= 400:
                problems.append(f"/{route}: GET {url} answered {response.status_code}")
            continue
        if not is_page:
            problems.append(f"/{route}: GET {url} answered {response.status_code} {kind!r}, "
                            "not an HTML page; give world an object for it, or list it "
                            "in NOT_PAGES with a reason")
            continue
        found.append((route, url))
        found.extend((route, variant.format(**site_ids)) for variant in VARIANTS.get(route, []))
    stale = (set(NOT_PAGES) | set(VARIANTS)) - set(candidates)
    problems.extend(f"/{route}: listed here but not a GET route of the registry"
                    for route in sorted(stale))
    assert not problems, "routes the layout test does not cover:\n" + "\n".join(problems)
    return found


def screenshot_dir() -> Path | None:
    raw = os.environ.get("HX_SCREENSHOTS")
    if not raw:
        return None
    path = Path(raw)
    path.mkdir(parents=True, exist_ok=True)
    return path


def screenshot_widths() -> set[int]:
    raw = os.environ.get("HX_SCREENSHOT_WIDTHS", "1366")
    return {int(w) for w in raw.split(",") if w.strip()}


def watch(page, origin: str) -> list[str]:
    """Problems seen while the page loads: console errors and failed own requests."""
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}")
            if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status} {r.url}")
            if r.status >= 400 and r.url.startswith(origin) else None)
    # A page's own poll (fetch) cut short by the test moving on to the next page fails
    # as net::ERR_ABORTED: not a problem of the page; any other failure is.
    page.on("requestfailed", lambda r: problems.append(f"request failed {r.url} ({r.failure})")
            if r.url.startswith(origin) and not (
                r.failure == "net::ERR_ABORTED" and r.resource_type in ("fetch", "xhr"))
            else None)
    return problems


#: How long a page must go without a request in flight to count as loaded. Playwright's
#: "networkidle" waits 500 ms, which was 80 % of this file's time; the pages issue their
#: requests while loading (their polls start 1 s later, after the check either way).
QUIET_MS = 200


def in_flight(page) -> set:
    """The page's requests not finished yet, kept up to date from its events."""
    pending: set = set()
    page.on("request", lambda r: pending.add(r))
    page.on("requestfinished", lambda r: pending.discard(r))
    page.on("requestfailed", lambda r: pending.discard(r))
    return pending


def settle(page, pending: set, timeout_ms: int = 15_000) -> bool:
    """Wait until no request has been in flight for ``QUIET_MS`` (False: never)."""
    quiet, step = 0, 50
    for _ in range(timeout_ms // step):
        page.wait_for_timeout(step)
        quiet = 0 if pending else quiet + step
        if quiet >= QUIET_MS:
            return True
    return False


def overflow(page) -> int:
    """How many pixels the document is wider than the window (0: no sideways scroll)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def shot_name(url: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", url.lower()).strip("-") or "home"


#: Every (scheme, width) a page is checked at after one load, widest light first.
VIEWS = tuple((scheme, width) for scheme, widths in SCHEMES for width in widths)


def next_frame(page) -> None:
    """Wait until the browser has laid out and painted once more (after a resize)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def check_layout(page, where: str, scheme: str) -> list[str]:
    """The layout problems of the page as it is now shown."""
    failures = []
    extra = overflow(page)
    if extra > 0:
        wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
            .filter(e => !e.closest('.table-wrap, pre'))
            .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' +
                                 Math.round(e.getBoundingClientRect().right))""")
        failures.append(f"{where}: {extra}px sideways overflow ({wide})")
    if scheme == "dark" and page.evaluate(
            "getComputedStyle(document.body).backgroundColor") == "rgb(246, 247, 249)":
        failures.append(f"{where}: still light in the dark scheme")
    return failures


def check_pages(browser, session, origin: str, urls, shots_dir: Path | None) -> list[str]:
    """Every page loaded once, then shown at every width and scheme: the problems found.

    The window is resized and the scheme switched on the loaded page, as a user turning
    a tablet or changing the system theme would, so a page that lays itself out only
    at load (not on resize) fails here too. One load per page instead of one per
    width and scheme took this test from 90 s to about 35 s.
    """
    failures = []
    first_scheme, first_width = VIEWS[0]
    context = browser.new_context(base_url=origin, storage_state=session,
                                  viewport={"width": first_width, "height": HEIGHT},
                                  color_scheme=first_scheme)
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems = watch(page, origin)
    pending = in_flight(page)
    for _route, url in urls:
        problems.clear()
        page.emulate_media(color_scheme=first_scheme)
        page.set_viewport_size({"width": first_width, "height": HEIGHT})
        page.goto(url, wait_until="load")
        if not settle(page, pending):
            failures.append(f"{url}: requests still in flight after 15 s "
                            f"({sorted(r.url for r in pending)[:3]})")
        if page.url.startswith(f"{origin}/login/") and "login" not in url:
            failures.append(f"{url}: signed out ({page.url})")
        for scheme, width in VIEWS:
            page.emulate_media(color_scheme=scheme)
            page.set_viewport_size({"width": width, "height": HEIGHT})
            next_frame(page)
            failures.extend(check_layout(page, f"{url} at {width}px {scheme}", scheme))
            if shots_dir and width in screenshot_widths():
                page.screenshot(path=str(shots_dir / f"{shot_name(url)}-{width}-{scheme}.png"),
                                full_page=True)
        failures.extend(f"{url}: {p}" for p in problems)
    context.close()
    return failures


def test_every_page_fits_the_window_without_errors(browser_page, login, live_server, world,
                                                   users, machine):
    site_ids = seed_site(users["operator"], machine)
    urls = pages(world, site_ids, users["admin"])
    assert len({route for route, _ in urls}) >= 25, "the registry's pages were found"
    signed_in = login(browser_page, "ada", "admin")  # every page, the settings page too
    session = signed_in.context.storage_state()
    browser = signed_in.context.browser
    shots_dir = screenshot_dir()
    failures = check_pages(browser, session, live_server.url, urls, shots_dir)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("width", WIDTHS)
def test_navigation_is_reachable_from_the_keyboard(browser_page, login, width):
    page = login(browser_page, "otto", "operator")
    page.set_viewport_size({"width": width, "height": HEIGHT})
    page.goto("/glossary/")
    toggle = page.locator("[data-testid=nav-toggle]")
    jobs_link = page.locator("[data-testid=nav] a", has_text="Jobs")
    who = page.locator("[data-testid=whoami]")
    if width >= 1000:
        assert not toggle.is_visible() and jobs_link.is_visible() and who.is_visible()
    else:
        assert toggle.is_visible() and toggle.inner_text().strip() == "Menu"
        assert not jobs_link.is_visible(), "collapsed behind the menu button"
        page.keyboard.press("Tab")  # the skip link, the brand link, then the menu button
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.testid") == "nav-toggle"
        page.keyboard.press("Enter")
        assert toggle.get_attribute("aria-expanded") == "true"
        assert jobs_link.is_visible() and who.is_visible()
        assert page.evaluate("document.activeElement.closest('[data-testid=nav]') !== null")
        page.keyboard.press("Escape")
        assert toggle.get_attribute("aria-expanded") == "false" and not jobs_link.is_visible()
        assert page.evaluate("document.activeElement.dataset.testid") == "nav-toggle"
        toggle.click()
    box = who.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, "user menu on screen"
    jobs_link.click()
    page.wait_for_url("**/jobs/")
    assert overflow(page) <= 0


def test_api_docs_load_without_csp_violations(browser_page, login, live_server):
    page = login(browser_page, "vera", "viewer")
    problems = watch(page, live_server.url)
    page.goto("/api/docs/")
    page.locator(".swagger-ui .info").wait_for(timeout=20_000)
    page.wait_for_load_state("networkidle")
    assert not problems, problems
    favicon = page.request.get("/favicon.ico")
    assert favicon.ok and favicon.url.endswith("favicon.svg")


def test_recommendation_progress_text_and_bar_move_together(browser_page, login, make_user):
    from datetime import timedelta

    from django.utils import timezone

    from recommendations.models import PolicyPrediction, Recommendation

    owner = make_user("resident", "operator")
    machine = machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    rec, _ = recommendations.request_recommendation(
        user=owner, machine=machine, node_count=8, pattern="uniform", t_cmpt=10.0,
        p_abn=0.02, alpha_abn=3.0, t_bench=0.1, simulate=False)
    Recommendation.objects.filter(pk=rec.pk).update(
        status="computing", deadline=timezone.now() + timedelta(minutes=10))
    for policy in ("row", "diagonal", "full_spread", "rectangular"):
        PolicyPrediction.objects.create(recommendation=rec, policy=policy, user=owner)
    page = login(browser_page, "resident", "operator")
    page.goto(f"/recommendations/{rec.pk}/")
    text = page.locator("[data-testid=progress-text]")
    assert text.inner_text() == "0 of 4 simulations done"
    PolicyPrediction.objects.filter(policy__in=["row", "diagonal", "full_spread"]).update(
        status=RunStatus.SUCCEEDED)
    page.locator("[data-progress-done]").filter(has_text="3").wait_for()
    assert text.inner_text() == "3 of 4 simulations done"
    bar = page.locator("[data-testid=progress]")
    assert bar.evaluate("b => [b.value, b.max]") == [3, 4]
    assert not page.console_errors, page.console_errors
