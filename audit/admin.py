"""The audit log in the admin: read-only, newest first, filtered by action or by player."""

from django.contrib import admin

from config.building_blocks.admin import ReadOnlyAdmin

from .models import OperatorAction


@admin.register(OperatorAction)
class OperatorActionAdmin(ReadOnlyAdmin):
    list_display = ("at", "actor_name", "action", "board", "season", "player_id", "reason")
    list_filter = ("action", "board")
    date_hierarchy = "at"
    fields = (
        "at",
        "actor_name",
        "action",
        "board",
        "season",
        "player_id",
        "reason",
        "details",
    )
    search_help_text = "An exact player id."
