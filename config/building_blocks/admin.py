"""Admin building blocks the apps share: read-only admins for the record, and changelists that
stay fast on tables of a hundred million rows (no exact count of the table, searches that use
an index)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.functional import cached_property

Action = Callable[..., HttpResponse | None]

# Rows a changelist counts exactly; past that it shows an estimate.
EXACT_COUNT_LIMIT = 10_000


def in_zones(moment: datetime | None, zone: str) -> str:
    """A time as operators read it: "2026-06-08 00:00 UTC", then in the board's own zone when
    its schedule has one ("(02:00 Europe/Berlin)", with the date when it differs)."""
    if moment is None:
        return "–"
    utc = moment.astimezone(UTC)
    said = f"{utc:%Y-%m-%d %H:%M} UTC"
    if zone in ("", "UTC"):
        return said
    local = moment.astimezone(ZoneInfo(zone))
    shown = f"{local:%H:%M}" if local.date() == utc.date() else f"{local:%Y-%m-%d %H:%M}"
    return f"{said} ({shown} {zone})"


def counted(count: int, noun: str, plural: str = "") -> str:
    """ "1 result", "2 results": an admin message's count in words, never "result(s)"."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


class EstimatedCountPaginator(Paginator):
    """Counts at most EXACT_COUNT_LIMIT + 1 rows. Past that, an unfiltered list shows
    PostgreSQL's estimate of the table's size (pg_class.reltuples, kept by autovacuum) and a
    filtered one shows the limit, so no page ever counts a whole table."""

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        if not isinstance(queryset, QuerySet):
            return super().count
        counted = queryset.order_by().values("pk")[: EXACT_COUNT_LIMIT + 1].count()
        if counted <= EXACT_COUNT_LIMIT:
            return counted
        if queryset.query.where:
            return EXACT_COUNT_LIMIT
        # The table's estimate: a partitioned table's (the archive's, by season) is the sum of
        # its partitions', as only they are analyzed (-1: never analyzed yet).
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT sum(greatest(c.reltuples, 0))::bigint"
                " FROM pg_partition_tree(%s::regclass) t JOIN pg_class c ON c.oid = t.relid"
                " WHERE t.isleaf",
                [queryset.model._meta.db_table],
            )
            row = cursor.fetchone()
        return max(counted, int(row[0]) if row and row[0] is not None else counted)


class LargeTableAdmin(admin.ModelAdmin):
    """A changelist over a table that grows without bound."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    # Searching by exact player id goes through an index; `icontains` would read every row.
    search_fields = ("player_id",)
    search_help_text = "An exact player id."

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        return queryset.filter(player_id=term), False


class ReadOnlyAdmin(LargeTableAdmin):
    """The record: shown, never added, changed or deleted by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


def confirm_first(
    *,
    title: str,
    what_happens: str,
    confirm_label: str,
    describe: Callable[[Any], str] = str,
) -> Callable[[Action], Action]:
    """For admin actions that cannot be undone (close now, ban, rebuild), as Django asks before
    a delete: the action first answers a page that says what will happen to which rows (each
    row as `describe` tells it), with a button that posts it again, confirmed; only then does
    it run."""

    def decorate(action: Action) -> Action:
        @functools.wraps(action)
        def asked_first(
            model_admin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet
        ) -> HttpResponse | None:
            if request.POST.get("post") == "yes":
                return action(model_admin, request, queryset)
            return TemplateResponse(
                request,
                "admin/confirm_action.html",
                {
                    **model_admin.admin_site.each_context(request),
                    "opts": model_admin.model._meta,
                    "title": title,
                    "what_happens": what_happens,
                    "confirm_label": confirm_label,
                    "queryset": queryset,
                    "described": [describe(row) for row in queryset],
                    "action": action.__name__,
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                },
            )

        return asked_first

    return decorate
