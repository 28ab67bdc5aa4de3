"""Admin for players, match results and totals (read-only: they are the record), and keys."""

from django.contrib import admin
from django.http import HttpRequest
from rest_framework_api_key.admin import APIKeyModelAdmin

from .models import GameServer, MatchResult, Player, PlayerTotal


@admin.register(Player)
class PlayerAdmin(admin.ModelAdmin):
    list_display = ("player_id", "display_name", "created_at")
    search_fields = ("player_id", "display_name")
    readonly_fields = ("created_at", "updated_at")


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(MatchResult)
class MatchResultAdmin(ReadOnlyAdmin):
    list_display = ("match_id", "player", "season", "points", "ended_at", "received_at")
    list_filter = ("season__board", "season")
    search_fields = ("match_id", "player__player_id")
    list_select_related = ("season", "season__board")
    show_full_result_count = False


@admin.register(PlayerTotal)
class PlayerTotalAdmin(ReadOnlyAdmin):
    list_display = ("player", "season", "points", "reached_at", "version", "mirrored_version")
    list_filter = ("season__board", "season")
    search_fields = ("player__player_id",)
    list_select_related = ("season", "season__board")
    show_full_result_count = False


@admin.register(GameServer)
class GameServerAdmin(APIKeyModelAdmin):
    pass
