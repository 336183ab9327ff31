"""The operations board in a real browser (Debian's chromium): the demo machine's
synthetic week drawn and labelled, the range picker as permalinks, the live refresh
("updated N s ago", paused while the tab is hidden, caught up when shown), sortable
tables, the skip link, and dark mode (system preference) with readable colours.

``HX_BOARD_SCREENS=DIR`` also saves the board at 1366, 800 and 390 px wide, light and
dark, as ``board-<width>-<scheme>.png`` in DIR.
"""

from __future__ import annotations

import io
import os
import random
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from allocation.models import Machine
from allocation.services import jobs, machines
from health import services as health
from health import tasks
from health.models import Estimate
from tests.browser.conftest import CHROMIUM_ARGS

pytestmark = pytest.mark.django_db(transaction=True)

WIDTHS = (1366, 800, 390)


def busy_demo(owner) -> Machine:
    """hx_demo's machine and synthetic week, plus what a working day adds: live jobs, a
    queue, drains with reasons, four fleet-wide health rounds and their estimates."""
    call_command("hx_demo", "--password", "pw-browser-123", stdout=io.StringIO())
    hx = Machine.objects.get(name="hx")
    for i, (policy, size) in enumerate([("row", 64), ("diagonal", 128), ("rectangular", 64),
                                        ("least_loaded_diagonal", 32)]):
        job = jobs.submit_job(owner=owner, machine=hx, name=f"live-{policy}", node_count=size,
                              pattern="all2all", policy=policy)
        if i % 2 == 0:
            jobs.start_job(job)
    jobs.create_job(owner=owner, machine=hx, name="waiting-big", node_count=256,
                    pattern="stencil4")
    machines.set_node_state(hx, "hx[505-512]", "drained", "fan failure on switch (7,7)")
    machines.set_node_state(hx, "hx[200-201]", "drained", "ECC errors")
    machines.set_node_state(hx, "hx377", "down", "no heartbeat since 04:10")
    rng = random.Random(4)
    slow = {"hx017", "hx090", "hx333"}
    up = [f"hx{i:03d}" for i in range(1, 505) if i not in (200, 201, 377)]
    for _ in range(4):
        health.ingest_payload({"machine": "hx", "benchmark": "stream", "results": [
            {"node": h, "seconds": round(0.0167 * (1.32 if h in slow else 1)
                                         * rng.gauss(1, 0.01), 5)} for h in up]})
        run = health.start_estimation(hx)
        tasks.run_estimation.apply(args=[run.pk])
    now = timezone.now()
    for k, e in enumerate(Estimate.objects.filter(machine=hx).order_by("created_at")):
        Estimate.objects.filter(pk=e.pk).update(created_at=now - timedelta(days=6 - 2 * k))
    return hx


def contrast_problems(page, limit: int = 12) -> list[str]:
    """Text whose colour is too close to its background (WCAG contrast < 4.5, or < 3 for
    large or bold text), on every visible element that holds text of its own."""
    return page.evaluate("""(limit) => {
      const rgb = (s) => { const m = s.match(/[\\d.]+/g); return m ? m.map(Number) : null; };
      const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92
                                    : Math.pow((c + 0.055) / 1.055, 2.4); };
                                   return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
      const bgOf = (el) => { for (let e = el; e; e = e.parentElement) {
          const c = rgb(getComputedStyle(e).backgroundColor);
          if (c && (c.length < 4 || c[3] > 0.5)) return c; }
        return rgb(getComputedStyle(document.body).backgroundColor); };
      const out = [];
      for (const el of document.querySelectorAll('body *')) {
        if (out.length >= limit) break;
        if (!el.offsetParent && getComputedStyle(el).position !== 'fixed') continue;
        const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!own || el.closest('.visually-hidden, .skip-link, canvas')) continue;
        const st = getComputedStyle(el);
        const fg = rgb(st.color), bg = bgOf(el);
        const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        const ratio = (a + 0.05) / (b + 0.05);
        const size = parseFloat(st.fontSize);
        const large = size >= 18.6 || (size >= 14 && Number(st.fontWeight) >= 700);
        const what = el.textContent.trim().slice(0, 30);
        if (ratio < (large ? 3 : 4.5))
          out.push(`${el.tagName}.${el.className} "${what}" ${ratio.toFixed(2)}`);
      }
      return out;
    }""", limit)


@pytest.fixture
def session(browser_page, login, users, live_server):
    busy_demo(users["operator"])
    page = login(browser_page, "ada", "admin")
    return page.context.browser, page.context.storage_state(), live_server.url


def new_page(session, *, width=1366, scheme="light", clock=False):
    browser, state, base = session
    context = browser.new_context(base_url=base, storage_state=state,
                                  viewport={"width": width, "height": 900},
                                  color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    if clock:
        page.clock.install()
    return page


def test_board_draws_the_labelled_week_and_the_range_permalinks(session):
    page = new_page(session)
    page.goto("/")
    page.locator("[data-testid=usage-hx][data-rendered='1']").wait_for()
    assert "Synthetic history" in page.locator("[data-testid=synthetic-note]").inner_text()
    assert page.locator("[data-testid=thumb-hx] .switch").count() == 64
    assert page.locator("[data-testid=trend-hx][data-rendered='1']").count() == 1
    assert "fan failure on switch (7,7)" in page.locator("[data-testid=drains]").inner_text()
    page.locator("[data-testid=range-day]").click()
    page.wait_for_url("**/?range=day")
    assert page.locator("[data-testid=range-day]").get_attribute("aria-current") == "true"
    assert "last day" in page.locator("[data-testid=usage-hx] .chart-title").inner_text()
    page.reload()  # the permalink: the same selection after a reload
    assert "last day" in page.locator("[data-testid=usage-hx] .chart-title").inner_text()
    assert not page.errors, page.errors


def test_live_refresh_counts_up_pauses_when_hidden_and_swaps_in_changes(session):
    page = new_page(session, clock=True)
    fetches: list[str] = []
    page.on("request", lambda r: fetches.append(r.url)
            if r.headers.get("x-hx-live") == "1" else None)
    page.goto("/?range=day")
    page.locator("[data-testid=usage-hx][data-rendered='1']").wait_for()
    page.evaluate("window.notReloaded = true")
    status = page.locator("[data-testid=live-status]")
    page.clock.run_for(12_000)
    assert "Updated 12 s ago" in status.inner_text()
    machines.set_node_state(Machine.objects.get(name="hx"), "hx100", "drained", "PSU swap")
    page.clock.run_for(20_000)  # 32 s: one refresh of the day's board
    page.locator("[data-testid=drains]", has_text="PSU swap").wait_for()
    assert len(fetches) == 1 and fetches[0].endswith("/?range=day")
    assert page.evaluate("window.notReloaded"), "swapped in place, not reloaded"
    page.locator("[data-testid=usage-hx][data-rendered='1']").wait_for()
    # A hidden tab fetches nothing, and says it is paused.
    page.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true,
                              get: () => true});
                            document.dispatchEvent(new Event('visibilitychange')); }""")
    page.clock.run_for(90_000)
    assert len(fetches) == 1 and "paused while the tab is hidden" in status.inner_text()
    page.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true,
                              get: () => false});
                            document.dispatchEvent(new Event('visibilitychange')); }""")
    page.locator("[data-live-every][data-refreshes='2']").wait_for()
    assert len(fetches) == 2
    page.locator("[data-testid=live-now]").click()
    page.locator("[data-live-every][data-refreshes='3']").wait_for()
    assert not page.errors, page.errors


def test_grid_and_job_pages_refresh_too(session):
    page = new_page(session, clock=True)
    hx = Machine.objects.get(name="hx")
    job = hx.jobs.get(name="live-row")
    page.goto(f"/jobs/{job.pk}/")
    assert page.locator("[data-testid=job-status]").inner_text().startswith("Running")
    jobs.finish_job(job)
    page.clock.run_for(21_000)
    page.locator("[data-testid=job-status]", has_text="Completed").wait_for()
    page.goto("/machines/hx/")
    machines.set_node_state(hx, "hx001", "down", "cable")
    page.clock.run_for(21_000)
    page.locator("[data-testid=switch-grid] .node[data-hostname=hx001][data-state=down]").wait_for()
    assert not page.errors, page.errors


def test_tables_sort_and_search_finds(session):
    page = new_page(session)
    page.goto("/jobs/?machine=hx&source=portal")
    nodes_header = page.locator("[data-testid=jobs] thead th", has_text="Nodes")
    nodes_header.locator("button").click()
    assert nodes_header.get_attribute("aria-sort") == "ascending"
    column = page.locator("[data-testid=jobs] tbody tr td:nth-child(5)")
    values = [int(v) for v in column.all_inner_texts()]
    assert values == sorted(values) and len(values) == 5
    nodes_header.locator("button").click()
    values = [int(v) for v in column.all_inner_texts()]
    assert values == sorted(values, reverse=True)
    page.fill("[data-testid=search-input]", "hx[001-008]")
    page.keyboard.press("Enter")
    page.wait_for_url("**/machines/hx/nodes/?hostlist=*")
    assert page.locator("[data-testid=matched-hostlist]").inner_text() == "hx[001-008]"


def test_job_list_refreshes_and_keeps_the_chosen_order(session, users):
    page = new_page(session, clock=True)
    page.goto("/jobs/?machine=hx&source=portal")
    header = page.locator("[data-testid=jobs] thead th", has_text="Nodes")
    header.locator("button").click()
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "descending"
    jobs.create_job(owner=users["operator"], machine=Machine.objects.get(name="hx"),
                    name="arrived", node_count=100, pattern="uniform")
    page.clock.run_for(31_000)
    page.locator("[data-testid=jobs] td", has_text="arrived").wait_for()
    header = page.locator("[data-testid=jobs] thead th", has_text="Nodes")
    assert header.get_attribute("aria-sort") == "descending", "the order survives a refresh"
    values = [int(v) for v in page.locator(
        "[data-testid=jobs] tbody tr td:nth-child(5)").all_inner_texts()]
    assert values == sorted(values, reverse=True) and 100 in values
    assert not page.errors, page.errors


def test_skip_link_is_first_and_visible_on_focus(session):
    page = new_page(session, width=390)
    page.goto("/")
    page.keyboard.press("Tab")
    link = page.locator("[data-testid=skip-link]")
    assert page.evaluate("document.activeElement.dataset.testid") == "skip-link"
    box = link.bounding_box()
    assert box and box["y"] >= 0 and box["x"] >= 0, "on screen when focused"
    outline = link.evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline != "none", "a visible focus ring"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_dark_mode_follows_the_system_with_readable_colours(session):
    page = new_page(session, scheme="dark")
    page.goto("/")
    page.locator("[data-testid=usage-hx][data-rendered='1']").wait_for()
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 20, 26)", background
    grid_colour = page.evaluate("""document.querySelector('[data-testid=usage-hx]')
                                   .hxChart.options.scales.x.grid.color""")
    assert grid_colour == "#2c3745", "charts take the dark variables"
    free = page.locator("[data-testid=thumb-hx] .switch.occ-0").first
    held = page.locator("[data-testid=thumb-hx] .switch.occ-4").first
    assert free.evaluate("e => getComputedStyle(e).backgroundColor") != \
        held.evaluate("e => getComputedStyle(e).backgroundColor")
    for url in ("/", "/jobs/", "/machines/hx/", "/machines/hx/nodes/", "/search/"):
        page.goto(url)
        assert not contrast_problems(page), (url, contrast_problems(page))
    # The check sees what it should: a light-on-light line is flagged.
    page.evaluate("""() => { const p = document.createElement('p'); p.className = 'muted';
                             p.textContent = 'faint words'; p.style.color = '#1a2029';
                             document.querySelector('main').append(p); }""")
    assert any("faint words" in p for p in contrast_problems(page))
    assert not page.errors, page.errors


def test_light_mode_colours_are_readable_too(session):
    page = new_page(session, scheme="light")
    for url in ("/", "/jobs/", "/machines/hx/"):
        page.goto(url)
        assert not contrast_problems(page), (url, contrast_problems(page))


def test_the_board_fits_three_widths_light_and_dark(session, tmp_path):
    """The board at 1366, 800 and 390 px, light and dark: no sideways scroll, the
    usage chart drawn. HX_BOARD_SCREENS=DIR keeps the screenshots there."""
    out = Path(os.environ.get("HX_BOARD_SCREENS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        for width in WIDTHS:
            page = new_page(session, width=width, scheme=scheme)
            page.goto("/")
            page.locator("[data-testid=usage-hx][data-rendered='1']").wait_for()
            assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0
            shot = out / f"board-{width}-{scheme}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000, shot
            page.context.close()


assert CHROMIUM_ARGS  # the shared launch arguments (conftest) start these pages too
