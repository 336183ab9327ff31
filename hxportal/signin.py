"""Sign-in throttling on top of django-axes: where a client is, when an account is
under attack, and what a refused client sees.

django-axes counts failed sign-ins in the database (``axes.AccessAttempt``), so every
gunicorn worker and every web host sees the same counts, and its authentication
backend guards every path that calls ``django.contrib.auth.authenticate`` (``/login/``
and ``/admin/login/``). Counts are kept per (username, address) pair
(``AXES_LOCKOUT_PARAMETERS``), so an attacker locks only the pair they use, never the
owner at another address. This module adds the per-account part: once an account has
``HX_LOGIN_ACCOUNT_FAILURE_LIMIT`` failures from all addresses within the cool-off, a
pair with any failure of its own is refused, while an address with no failure for that
account still gets its try (the owner signs in; a spread-out attacker gets one guess
per address and cool-off). Why this design: docs/operations.md, "Sign-in throttling".
"""

from __future__ import annotations

import ipaddress
import math
from datetime import datetime, timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def _valid_address(value: str | None) -> str | None:
    """``value`` as a normalised IP address, or None when it is not one."""
    try:
        return str(ipaddress.ip_address((value or "").strip()))
    except ValueError:
        return None


def client_address(request: HttpRequest) -> str | None:
    """The client's IP address: ``REMOTE_ADDR``, or behind ``HX_TRUSTED_PROXY_COUNT``
    proxies the address the outermost of them saw.

    Each proxy appends the address it received the request from to
    ``X-Forwarded-For``, so with n trusted proxies the client is the n-th entry from
    the right; anything further left was written by the client and is ignored. With no
    trusted proxy the header is ignored altogether (anyone can send it)."""
    direct = _valid_address(request.META.get("REMOTE_ADDR"))
    proxies = settings.HX_TRUSTED_PROXY_COUNT
    if proxies <= 0:
        return direct
    forwarded = [part for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
                 if part.strip()]
    if len(forwarded) < proxies:  # did not come through every proxy: trust only the peer
        return direct
    return _valid_address(forwarded[-proxies]) or direct


def account_failures(username: str, since: datetime) -> int:
    """Failed sign-ins for ``username`` from every address since ``since``."""
    total = (AccessAttempt.objects.filter(username=username, attempt_time__gte=since)
             .aggregate(total=Sum("failures_since_start"))["total"])
    return total or 0


class PairAndAccountHandler(AxesDatabaseHandler):
    """Axes' database handler, counting per (username, address) pair; while the account
    is under attack a pair's first failure counts as a full set, so that pair is refused
    until the cool-off ends and untouched pairs (the owner's) are not."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        failures = super().get_failures(request, credentials)
        limit = get_failure_limit(request, credentials)
        if failures == 0 or failures >= limit:
            return failures
        username = get_client_username(request, credentials)
        if not username:
            return failures
        since = request.axes_attempt_time - get_cool_off(request)
        if account_failures(username, since) >= settings.HX_LOGIN_ACCOUNT_FAILURE_LIMIT:
            return limit
        return failures


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict | None = None) -> HttpResponse:
    """429 with the sign-in page's look and a Retry-After the client can honour."""
    cool_off: timedelta = get_cool_off(request)
    seconds = max(1, int(cool_off.total_seconds()))
    response = render(request, "registration/locked_out.html",
                      {"minutes": math.ceil(seconds / 60)},
                      status=settings.AXES_HTTP_RESPONSE_CODE)
    response["Retry-After"] = str(seconds)
    return response

