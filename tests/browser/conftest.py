"""Playwright with Debian's chromium against pytest-django's live server.

Playwright's own browser download cannot work here, so the tests launch
``/usr/bin/chromium``; without it they skip (and fail in CI).
"""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import CHROMIUM, skip_or_fail

CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PASSWORD = "pw-browser-123"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture
def browser_page(live_server, monkeypatch):
    """A fresh chromium page on the live server; Playwright runs only inside the test,
    so its event loop never overlaps another test's database setup."""
    if not shutil.which(CHROMIUM):
        skip_or_fail(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the ORM calls the
    # test makes between page actions are still synchronous and safe.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=live_server.url)
        page = context.new_page()
        page.set_default_timeout(15_000)
        errors: list[str] = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.console_errors = errors
        yield page
        context.close()
        browser.close()


@pytest.fixture
def login(make_user):
    """``login(page, "alice", "operator")`` creates the user and signs in through the form."""

    def sign_in(page, username: str, role: str = "viewer"):
        make_user(username, role, password=PASSWORD)
        page.goto("/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_selector("[data-testid=whoami]")
        return page
    return sign_in
