from django.urls import path

from . import api

urlpatterns = [
    path("boards", api.BoardListView.as_view(), name="board-list"),
    path("seasons", api.SeasonListView.as_view(), name="season-list"),
    path("seasons/<slug:slug>", api.SeasonDetailView.as_view(), name="season-detail"),
    path("seasons/<slug:slug>/rewards", api.SeasonRewardsView.as_view(), name="season-rewards"),
]
