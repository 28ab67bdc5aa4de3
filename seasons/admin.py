"""Admin for boards and seasons; a season's ZSET can be rebuilt from PostgreSQL here."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from leaderboards.tasks import rebuild_season

from .models import Board, Season


class SeasonInline(admin.TabularInline):
    model = Season
    extra = 0
    fields = ("slug", "name", "starts_at", "ends_at", "grace_period", "state")
    readonly_fields = ("state",)
    show_change_link = True


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "score_operator", "sort_order", "created_at")
    search_fields = ("slug", "name")
    inlines = [SeasonInline]


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin):
    list_display = ("slug", "board", "name", "starts_at", "ends_at", "grace_period", "status")
    list_filter = ("board", "state")
    search_fields = ("slug", "name", "board__slug")
    readonly_fields = ("state", "created_at")
    actions = ["rebuild_standings"]

    @admin.display(description="Status")
    def status(self, season: Season) -> str:
        return season.status_at(timezone.now())

    @admin.action(description="Rebuild the leaderboard (Redis) from PostgreSQL")
    def rebuild_standings(self, request: HttpRequest, queryset: QuerySet[Season]) -> None:
        for season in queryset:
            rebuild_season.delay(season.pk)
        self.message_user(
            request,
            f"Queued a rebuild of {queryset.count()} season(s); the swap is atomic.",
            messages.SUCCESS,
        )
