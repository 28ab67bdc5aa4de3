from django.urls import path

from . import api

urlpatterns = [
    path("scores", api.ScoresView.as_view(), name="scores"),
    path("players/<str:player_id>", api.PlayerView.as_view(), name="player"),
    path("players/<str:player_id>/friends", api.FriendsView.as_view(), name="player-friends"),
    path("clans/<str:clan_id>", api.ClanView.as_view(), name="clan"),
]
