"""WebSocket routes: live leaderboards under /ws/v1/, beside the REST API's /api/v1/."""

from django.urls import path

from . import consumers

websocket_urlpatterns = [
    path("ws/v1/leaderboard/<str:board>/", consumers.leaderboard_socket),
]
