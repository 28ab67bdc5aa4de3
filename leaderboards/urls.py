from django.urls import path

from . import api

urlpatterns = [
    path("leaderboard/top", api.TopView.as_view(), name="leaderboard-top"),
    path("leaderboard/ranks", api.RanksView.as_view(), name="leaderboard-ranks"),
    path(
        "leaderboard/players/<str:player_id>",
        api.PlayerRankView.as_view(),
        name="leaderboard-player",
    ),
    path(
        "leaderboard/players/<str:player_id>/around",
        api.AroundView.as_view(),
        name="leaderboard-around",
    ),
]
