"""The top bar's navigation, declared once: what base.html links to, in order.

Each entry names a URL and a label; the role it needs is the page's own
``required_role`` (the view is the one place a page's role is declared), so the
bar never offers a page the user would be refused. ``role`` is given only for a
page outside our views (Django's admin).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.urls import resolve, reverse

from hxportal.roles import UNDECLARED, Role, page_role, role_at_least


@dataclass(frozen=True)
class NavEntry:
    """One link of the top bar: a URL name, its label and, if not the view's, a role."""

    url_name: str
    label: str
    role: str | None = None


NAVIGATION: tuple[NavEntry, ...] = (
    NavEntry("dashboard:home", "Overview"),
    NavEntry("allocation:job_list", "Jobs"),
    NavEntry("recommendations:recommendation_list", "Recommendations"),
    NavEntry("recommendations:recommend", "Submit a job"),
    NavEntry("health:health_index", "Health"),
    NavEntry("health:spares", "Spares"),
    NavEntry("simulation:run_list", "Simulations"),
    NavEntry("whatif:study_list", "What-if"),
    NavEntry("dashboard:glossary", "Glossary"),
    NavEntry("api-docs", "API"),
    NavEntry("allocation:site_settings", "Settings"),
    NavEntry("admin:index", "Admin", role=Role.ADMIN),
)


@cache
def _resolved() -> tuple[tuple[str, str, str], ...]:
    """(href, label, role) per entry; URLs and views do not change while running."""
    out = []
    for entry in NAVIGATION:
        href = reverse(entry.url_name)
        role = entry.role or page_role(resolve(href).func)
        out.append((href, entry.label, Role.VIEWER if role in (None, UNDECLARED) else role))
    return tuple(out)


def links_for(user) -> list[dict]:
    """The entries ``user``'s role may open, in the declared order."""
    return [{"href": href, "label": label} for href, label, role in _resolved()
            if role_at_least(user, role)]
