from django.urls import path

from . import views

app_name = "pages"

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("boards/<slug:board>/", views.board, name="board"),
    path("boards/<slug:board>/seasons/<slug:season>/", views.board, name="season"),
    path("boards/<slug:board>/clans/", views.clans, name="clans"),
    path("boards/<slug:board>/clans/<str:clan_id>/", views.clan, name="clan"),
    path("players/", views.player_lookup, name="player-lookup"),
    path("players/<str:player_id>/", views.player, name="player"),
]
