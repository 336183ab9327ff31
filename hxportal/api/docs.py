"""The API's documentation page (Swagger UI): a page for people, so signing in is a
redirect to the login page that comes back here, not a 401. The schema it reads
(``/api/schema/``) stays a 401 JSON answer for scripts."""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated


class SwaggerDocsView(SpectacularSwaggerSplitView):
    """Swagger UI; a browser without a session goes to the login page with ``next=``."""

    def handle_exception(self, exc):
        if isinstance(exc, NotAuthenticated | AuthenticationFailed) and \
                "HTTP_AUTHORIZATION" not in self.request.META:
            return redirect_to_login(self.request.get_full_path())
        return super().handle_exception(exc)
