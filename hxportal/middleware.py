"""Request-wide guards: body size, sign-in for pages, security headers."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from hxportal.templatetags.hxformat import byte_size


class BodySizeLimitMiddleware:
    """Answer 413 before reading a body larger than ``HX_MAX_BODY_BYTES``: JSON for the
    API, a page with the way back to the form for everything else. It sits after the
    authentication middleware (which reads no body) so that page knows who is signed in.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        raw = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number."}, status=400)
        limit = settings.HX_MAX_BODY_BYTES
        if length > limit:
            if not request.path_info.startswith("/api/"):
                return _too_large_page(request, length, limit)
            return JsonResponse(
                {"detail": f"Request body of {length} bytes exceeds the limit of {limit} bytes."},
                status=413)
        if _has_nul(request):
            return JsonResponse({"detail": "NUL characters are not allowed in requests.",
                                 "errors": {"non_field_errors": ["NUL character"]}},
                                status=400)
        return self.get_response(request)


def _too_large_page(request, length: int, limit: int):
    """The form page's 413: what was too large and a link back to the form (the page it
    came from, or the posted URL)."""
    back = request.META.get("HTTP_REFERER", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        back = request.path
    return render(request, "413.html", {"size": byte_size(length), "limit": byte_size(limit),
                                        "back": back}, status=413)


def _has_nul(request) -> bool:
    """NUL cannot be stored in PostgreSQL text; refuse it up front, wherever it hides."""
    if "%00" in request.META.get("QUERY_STRING", "") or "\x00" in request.path:
        return True
    content_type = request.META.get("CONTENT_TYPE", "")
    if content_type.startswith("application/x-www-form-urlencoded"):
        return b"%00" in request.body or b"\x00" in request.body
    return False


class PagesLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Every page needs a signed-in user; the API answers 401 itself (DRF)."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class SecurityHeadersMiddleware:
    """Content-Security-Policy without inline scripts, and a strict Permissions-Policy."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.HX_CSP)
        response.headers.setdefault("Permissions-Policy",
                                    "camera=(), microphone=(), geolocation=()")
        response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        return response
