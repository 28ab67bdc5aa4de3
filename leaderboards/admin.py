"""Admin view of the mirror's health: every reconciliation run and what it repaired."""

from django.contrib import admin

from config.admin import ReadOnlyAdmin

from .models import ReconciliationRun


@admin.register(ReconciliationRun)
class ReconciliationRunAdmin(ReadOnlyAdmin):
    list_display = ("started_at", "season", "kind", "checked", "drift", "fixed")
    list_filter = ("kind", "season__board")
    list_select_related = ("season", "season__board")
    search_fields = ()
