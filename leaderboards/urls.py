from django.urls import path

from . import api, group_api, history_api

urlpatterns = [
    path("players", group_api.PlayerSearchView.as_view(), name="player-search"),
    path(
        "players/<str:player_id>/seasons",
        history_api.PlayerSeasonsView.as_view(),
        name="player-seasons",
    ),
    path(
        "seasons/<slug:slug>/rewards",
        history_api.SeasonRewardsView.as_view(),
        name="season-rewards",
    ),
    path("leaderboard/top", api.TopView.as_view(), name="leaderboard-top"),
    path("leaderboard/ranks", api.RanksView.as_view(), name="leaderboard-ranks"),
    # The clan board's top first: a clan named "top" is read by its page, not here.
    path("leaderboard/clans/top", group_api.ClansTopView.as_view(), name="leaderboard-clans-top"),
    path(
        "leaderboard/clans/<str:clan_id>",
        group_api.ClanStandingView.as_view(),
        name="leaderboard-clan",
    ),
    path(
        "leaderboard/players/<str:player_id>",
        api.PlayerRankView.as_view(),
        name="leaderboard-player",
    ),
    path(
        "leaderboard/players/<str:player_id>/friends",
        group_api.FriendsRankView.as_view(),
        name="leaderboard-friends",
    ),
    path(
        "leaderboard/players/<str:player_id>/around",
        api.AroundView.as_view(),
        name="leaderboard-around",
    ),
]
