"""Admin for players, match results and totals (read-only: they are the record), and keys."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from config.admin import LargeTableAdmin, ReadOnlyAdmin, confirm_first

from .models import GameServer, MatchResult, Player, PlayerTotal
from .services import player_ban, player_unban

# The library's own key model is not used (game servers have theirs, GameServer, below): its
# empty "API keys" section beside "Game-server keys" only confused operators.
admin.site.unregister(APIKey)


@admin.register(Player)
class PlayerAdmin(LargeTableAdmin):
    list_display = ("player_id", "display_name", "banned_at", "ban_reason", "created_at")
    list_filter = (("banned_at", admin.EmptyFieldListFilter),)
    readonly_fields = ("banned_at", "ban_reason", "created_at", "updated_at")
    actions = ["ban", "unban"]

    @admin.action(description="Ban (off live boards now; new results stop counting)")
    @confirm_first(
        title="Ban these players?",
        what_happens="They leave every live board at once, their new results stop counting, "
        "and archives made from now on leave them out. Their results are kept: an unban "
        "restores their standings from PostgreSQL.",
        confirm_label="Yes, ban them",
    )
    def ban(self, request: HttpRequest, queryset: QuerySet[Player]) -> None:
        for player_id in queryset.values_list("player_id", flat=True):
            player_ban(player_id=player_id, reason=f"banned by {request.user}", actor=request.user)
        self.message_user(request, f"Banned {queryset.count()} player(s).", messages.SUCCESS)

    @admin.action(description="Unban (restore their standing from PostgreSQL)")
    def unban(self, request: HttpRequest, queryset: QuerySet[Player]) -> None:
        for player_id in queryset.values_list("player_id", flat=True):
            player_unban(player_id=player_id, actor=request.user)
        self.message_user(request, f"Unbanned {queryset.count()} player(s).", messages.SUCCESS)


@admin.register(MatchResult)
class MatchResultAdmin(ReadOnlyAdmin):
    list_display = ("match_id", "player", "season", "points", "ended_at", "received_at")
    list_filter = ("season__board", "season")
    list_select_related = ("season", "season__board")


@admin.register(PlayerTotal)
class PlayerTotalAdmin(ReadOnlyAdmin):
    list_display = ("player", "season", "points", "reached_at", "updated_at")
    list_filter = ("season__board", "season")
    list_select_related = ("season", "season__board")


@admin.register(GameServer)
class GameServerAdmin(APIKeyModelAdmin):
    filter_horizontal = ("boards",)
