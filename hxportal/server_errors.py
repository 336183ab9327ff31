"""The last word on an unhandled error (``handler500``): JSON under ``/api/`` in
the README's error shape, a plain page elsewhere; 503 with ``Retry-After`` when
the database cannot be reached (a restart or an outage: trying again helps).

Django has already logged the exception with its traceback; the client gets no
exception text (it may name hosts, users or SQL).
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

#: Seconds a client should wait before trying again while the database is away.
RETRY_AFTER_SECONDS = 30
DATABASE_DOWN = "The database is unavailable; try again in a moment."
INTERNAL_ERROR = "Internal server error; it has been logged for the operators."


def database_unavailable(exc: BaseException | None) -> bool:
    """True for a lost or refused database connection (not for a bad query)."""
    return isinstance(exc, (OperationalError, InterfaceError))


def server_error(request: HttpRequest) -> HttpResponse:
    """Answer an unhandled exception (Django calls this inside its ``except``)."""
    unavailable = database_unavailable(sys.exc_info()[1])
    status = 503 if unavailable else 500
    if request.path_info.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"detail": DATABASE_DOWN if unavailable else INTERNAL_ERROR}, status=status)
    else:  # rendered without the request: its context would read the database
        response = HttpResponse(loader.render_to_string(f"{status}.html"), status=status)
    if unavailable:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
