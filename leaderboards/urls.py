from django.urls import path

from . import api

urlpatterns = [
    path("players/<str:player_id>/seasons", api.PlayerSeasonsView.as_view(), name="player-seasons"),
    path("seasons/<slug:slug>/rewards", api.SeasonRewardsView.as_view(), name="season-rewards"),
    path("leaderboard/top", api.TopView.as_view(), name="leaderboard-top"),
    path("leaderboard/ranks", api.RanksView.as_view(), name="leaderboard-ranks"),
    path(
        "leaderboard/players/<str:player_id>",
        api.PlayerRankView.as_view(),
        name="leaderboard-player",
    ),
    path(
        "leaderboard/players/<str:player_id>/friends",
        api.FriendsRankView.as_view(),
        name="leaderboard-friends",
    ),
    path(
        "leaderboard/players/<str:player_id>/around",
        api.AroundView.as_view(),
        name="leaderboard-around",
    ),
]
