"""Top-level URLs: pages, the v1 API, its schema and docs (served locally)."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from hxportal.api.docs import SwaggerDocsView
from hxportal.views import LogoutView, favicon

# Unhandled errors: JSON under /api/, 503 + Retry-After while the database is away.
handler500 = "hxportal.server_errors.server_error"

api_v1 = [
    path("", include("allocation.api.urls")),
    path("", include("health.api.urls")),
    path("", include("recommendations.api.urls")),
    path("", include("simulation.api.urls")),
    path("", include("whatif.api.urls")),
]

urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("login/", auth_views.LoginView.as_view(), name="login"),  # throttled by axes
    path("logout/", LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include((api_v1, "api"))),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SwaggerDocsView.as_view(url_name="schema"), name="api-docs"),
    path("simulation/", include("simulation.urls")),
    path("whatif/", include("whatif.urls")),
    path("", include("dashboard.urls")),
    path("", include("metrics.urls")),
    path("", include("allocation.urls")),
    path("", include("health.urls")),
    path("", include("recommendations.urls")),
]
