"""Admin views of what this app keeps: closed seasons' archived standings (of the board, of
each segment and of the clans) and rewards (read only), the mirror's health (every
reconciliation run and what it repaired), and the periodic tasks' admin with its actions behind
the change permission."""

from django.contrib import admin
from django.http import HttpRequest
from django_celery_beat.admin import PeriodicTaskAdmin
from django_celery_beat.models import PeriodicTask

from config.building_blocks.admin import ReadOnlyAdmin

from .models import (
    ArchivedClanStanding,
    ArchivedSegmentStanding,
    ArchivedStanding,
    ReconciliationRun,
    SeasonReward,
)

# django-celery-beat's changelist actions, which declare no permission: Django would offer them
# to any account that may view the tasks.
PERIODIC_TASK_ACTIONS = ("enable_tasks", "disable_tasks", "toggle_tasks", "run_tasks")


@admin.register(ReconciliationRun)
class ReconciliationRunAdmin(ReadOnlyAdmin):
    list_display = ("started_at", "season", "kind", "checked", "drift", "fixed")
    list_filter = ("kind", "season__board")
    list_select_related = ("season", "season__board")
    search_fields = ()


@admin.register(ArchivedStanding)
class ArchivedStandingAdmin(ReadOnlyAdmin):
    list_display = ("season", "rank", "player", "points", "reached_at", "note")
    list_filter = ("season__board", "season")
    list_select_related = ("season", "season__board")
    # The newest season first, each from its first rank (the archive's unique (season, rank)).
    ordering = ("-season_id", "rank")


@admin.register(ArchivedSegmentStanding)
class ArchivedSegmentStandingAdmin(ReadOnlyAdmin):
    list_display = ("season", "segment", "rank", "player")
    list_filter = ("season__board", "season")
    list_select_related = ("season", "season__board")
    ordering = ("-season_id", "segment", "rank")


@admin.register(ArchivedClanStanding)
class ArchivedClanStandingAdmin(ReadOnlyAdmin):
    list_display = ("season", "rank", "clan", "points", "members", "reward_code")
    list_filter = ("season__board", "season")
    list_select_related = ("season", "season__board", "clan")
    search_fields = ()
    ordering = ("-season_id", "rank")


@admin.register(SeasonReward)
class SeasonRewardAdmin(ReadOnlyAdmin):
    list_display = ("season", "segment", "rank", "player", "reward_code", "awarded_at")
    list_filter = ("season__board", "season", "reward_code", "segment")
    list_select_related = ("season", "season__board")


admin.site.unregister(PeriodicTask)


@admin.register(PeriodicTask)
class GuardedPeriodicTaskAdmin(PeriodicTaskAdmin):
    """The library's admin, whose actions stop or start the closes, the mirror's sweep and the
    reconciliation, or run any of them now: they need the change permission on periodic tasks."""

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        if not self.has_change_permission(request):
            for name in PERIODIC_TASK_ACTIONS:
                actions.pop(name, None)
        return actions
