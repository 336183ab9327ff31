"""The top bar is declared once (hxportal/navigation.py) and shows only what a role may open."""

from __future__ import annotations

import re

import pytest

ALL = ["Overview", "Jobs", "Recommendations", "Submit a job", "Health", "Spares",
       "Simulations", "What-if", "Glossary", "API", "Settings", "Admin"]
HIDDEN = {"viewer": {"Submit a job", "Settings", "Admin"},
          "operator": {"Settings", "Admin"}, "admin": set()}


def nav_labels(html: str) -> list[str]:
    nav = re.search(r'<nav aria-label="Main">(.*?)</nav>', html, re.S).group(1)
    return re.findall(r'<a href="[^"]+">([^<]+)</a>', nav)


@pytest.mark.parametrize("role", list(HIDDEN))
def test_nav_links_follow_the_role_in_the_declared_order(client, users, role):
    client.force_login(users[role])
    html = client.get("/glossary/").content.decode()
    assert nav_labels(html) == [label for label in ALL if label not in HIDDEN[role]]


def test_nav_hrefs_are_the_pages_urls(client, users):
    client.force_login(users["admin"])
    nav = re.search(r'<nav aria-label="Main">(.*?)</nav>',
                    client.get("/glossary/").content.decode(), re.S).group(1)
    for href in ("/", "/jobs/", "/recommendations/", "/recommend/", "/api/docs/",
                 "/admin/", "/simulation/"):
        assert f'<a href="{href}">' in nav, href


def test_signed_out_pages_have_no_nav(client):
    html = client.get("/login/").content.decode()
    assert '<nav aria-label="Main">' not in html
