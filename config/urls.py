"""URL routing: the REST API under /api/v1/, its schema and docs, the admin, and the player
pages at the root."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.building_blocks import health

# The admin's own name on every page, not Django's ("Django administration").
admin.site.site_header = "Leaderboard administration"
admin.site.site_title = "Leaderboard admin"
admin.site.index_title = "Boards, seasons, players and keys"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("", include("leaderboards.readiness")),
    path("metrics", health.metrics, name="metrics"),
    path("admin/dashboard/", include("leaderboards.dashboard")),
    path("admin/", admin.site.urls),
    path("api/v1/ping", health.PingView.as_view(), name="ping"),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include("seasons.urls")),
    path("api/v1/", include("matches.urls")),
    path("api/v1/", include("leaderboards.urls")),
    path("", include("pages.urls")),
]

handler404 = "config.building_blocks.errors.json_not_found"
handler500 = "config.building_blocks.errors.json_server_error"
