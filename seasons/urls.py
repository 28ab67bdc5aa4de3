from django.urls import path

from . import api

urlpatterns = [
    path("boards", api.BoardListView.as_view(), name="board-list"),
    path("seasons", api.SeasonListView.as_view(), name="season-list"),
    path("seasons/<slug:slug>", api.SeasonDetailView.as_view(), name="season-detail"),
]
