"""Admin for boards (rules, schedule, reward tiers) and seasons (rebuild, close, export); each
action declares the permission its effect needs (docs/operations.md, "Who may do what")."""

import io
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from config.building_blocks.admin import confirm_first, counted, in_zones
from config.building_blocks.errors import Conflict

from .admin_corrections import ArchiveCorrectionAdmin
from .admin_previews import close_outcome, tiers_paying_no_one
from .archive_exports import standings_export_csv, standings_export_parquet
from .jobs import season_rebuild_queue
from .models import Board, RewardTier, ScheduleKind, Season, SeasonState
from .operator_actions import (
    board_publish,
    board_save,
    reward_tiers_change,
    season_close_now,
    season_save,
)
from .planning import board_seasons_plan
from .previews import season_rewards_preview

# Players per page of the rewards preview.
PREVIEW_PAGE = 100


class SeasonInlineFormSet(BaseInlineFormSet):
    """Seasons added together on a board's page may not overlap each other either (each is
    checked against the saved ones by Season.clean)."""

    def clean(self) -> None:
        super().clean()
        windows = sorted(
            (data["starts_at"], data["ends_at"], data.get("slug") or "")
            for data in (form.cleaned_data for form in self.forms if form.is_valid())
            if data and not data.get("DELETE") and data.get("starts_at") and data.get("ends_at")
        )
        for (_, first_end, first), (second_start, _, second) in zip(
            windows, windows[1:], strict=False
        ):
            if second_start < first_end:
                raise ValidationError(
                    f"Seasons '{first}' and '{second}' overlap; seasons of one board may not "
                    "overlap, so that every result has one season."
                )


class SeasonInline(admin.TabularInline):
    """The board's seasons that are not closed yet (the running, upcoming and closing ones): an
    hourly board has thousands of closed seasons a year, which the Seasons list pages through."""

    model = Season
    formset = SeasonInlineFormSet
    extra = 0
    fields = ("slug", "name", "starts_at", "ends_at", "grace_period", "state")
    readonly_fields = ("state",)
    show_change_link = True
    ordering = ("-starts_at",)
    verbose_name_plural = "seasons not closed yet (closed ones: the Seasons list)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Season]:
        return super().get_queryset(request).exclude(state=SeasonState.CLOSED)


class RewardTierInline(admin.TabularInline):
    model = RewardTier
    extra = 1
    fields = (
        "rank_from",
        "rank_to",
        "top_percent",
        "segment_dimension",
        "members_too",
        "reward_code",
    )


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = (
        "slug",
        "name",
        "visibility",
        "score_operator",
        "sort_order",
        "schedule",
        "schedule_timezone",
    )
    list_filter = ("hidden",)
    search_fields = ("slug", "name")
    actions = ["publish", "hide"]
    fieldsets = (
        (None, {"fields": ("slug", "name", "hidden")}),
        (
            "Rules",
            {
                "fields": ("score_operator", "sort_order", "max_points_per_result"),
                "description": "The rules apply to whole seasons: they cannot change while a "
                "season has scores.",
            },
        ),
        (
            "Scale",
            {
                "fields": ("shards",),
                "description": "One sorted set holds a season's standings, or N spread by player "
                "over a Redis Cluster's nodes for a board too large or too hot for one node "
                "(every read stays exact; a rank costs a count on every shard). A change applies "
                "from the next season: a season keeps the number it started with.",
            },
        ),
        (
            "Segments",
            {
                "fields": ("segment_dimensions",),
                "description": "Names of the slices players are also ranked within, such as "
                "country,platform (game servers set each player's values with the profile "
                "write).",
            },
        ),
        (
            "Rank events",
            {
                "fields": ("rank_thresholds",),
                "description": "A socket following a player tells them when they enter or "
                "leave the top N for each of these, and each reward tier's edge.",
            },
        ),
        (
            "Schedule",
            {
                "fields": (
                    "schedule",
                    "schedule_cron",
                    "schedule_timezone",
                    "season_grace_period",
                    "keep_closed_standings_days",
                )
            },
        ),
        (
            "Corrections",
            {
                "fields": ("correct_archive_on_ban",),
                "description": "A ban after a close leaves the closed seasons' archives as they "
                "are until an operator corrects them (Seasons: Correct the archive); with this, "
                "the ban corrects them itself.",
            },
        ),
    )
    inlines = [RewardTierInline, SeasonInline]

    def get_readonly_fields(
        self, request: HttpRequest, obj: Board | None = None
    ) -> tuple[str, ...]:
        # Chosen when the board is created; then only the audited Publish and Hide change it.
        return () if obj is None else ("hidden",)

    @admin.display(description="Visibility")
    def visibility(self, board: Board) -> str:
        return "hidden" if board.hidden else "public"

    def has_publish_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("seasons.publish_board")

    @admin.action(
        description="Publish: players see these boards (lists, pages, API)",
        permissions=["publish"],
    )
    @confirm_first(
        title="Publish these boards?",
        what_happens="Each board appears in the public board list, its pages and the API's "
        "reads at once, with the standings its game servers have posted so far. Boards already "
        "public are left as they are.",
        confirm_label="Yes, publish them",
    )
    def publish(self, request: HttpRequest, queryset: QuerySet[Board]) -> None:
        changed = sum(board_publish(board=b, hidden=False, actor=request.user) for b in queryset)
        self.message_user(request, f"Published {counted(changed, 'board')}.", messages.SUCCESS)

    @admin.action(
        description="Hide: take these boards off every public list, page and read",
        permissions=["publish"],
    )
    @confirm_first(
        title="Hide these boards?",
        what_happens="Each board leaves the public board list, its pages and the API's reads "
        "(they answer 404 board_not_found, as for an unknown board) within the season cache's "
        "few seconds; game servers can still post to it. Hidden boards are left as they are.",
        confirm_label="Yes, hide them",
    )
    def hide(self, request: HttpRequest, queryset: QuerySet[Board]) -> None:
        changed = sum(board_publish(board=b, hidden=True, actor=request.user) for b in queryset)
        self.message_user(request, f"Hid {counted(changed, 'board')}.", messages.SUCCESS)

    def save_model(self, request: HttpRequest, obj: Board, form: object, change: bool) -> None:
        board_save(board=obj, actor=request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Board | None = None) -> bool:
        # A board with seasons is protected by them: delete its unused seasons first, or hide it.
        if obj is not None and obj.seasons.exists():
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # per board, from its page (see above)
        return actions

    def save_formset(
        self, request: HttpRequest, form: object, formset: BaseInlineFormSet, change: bool
    ) -> None:
        if formset.model is RewardTier:
            with reward_tiers_change(board=formset.instance, actor=request.user):
                super().save_formset(request, form, formset, change)
        else:
            super().save_formset(request, form, formset, change)

    def save_related(
        self, request: HttpRequest, form: Any, formsets: list[BaseInlineFormSet], change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        # A scheduled board gets its running and next seasons now, not at the planner's next
        # tick; after the seasons typed in the form, which the plan fits around.
        if form.instance.schedule != ScheduleKind.NONE:
            board_seasons_plan(board=form.instance)
        for warning in tiers_paying_no_one(form.instance):
            self.message_user(request, warning, messages.WARNING)


@admin.register(Season)
class SeasonAdmin(ArchiveCorrectionAdmin, admin.ModelAdmin):
    list_display = (
        "slug",
        "board",
        "name",
        "starts",
        "ends",
        "grace_period",
        "status",
        "close_step",
        "archived_players",
    )
    list_filter = ("board", "state")
    list_select_related = ("board",)
    search_fields = ("slug", "name", "board__slug")
    # What the close job records: shown on a season's page, never on a form to fill in.
    progress_fields = (
        "state",
        "close_step",
        "close_started_at",
        "closed_at",
        "archived_players",
        "snapshot_attempts",
        "standings_removed_at",
        "created_at",
    )
    editable_fields = ("board", "slug", "name", "starts_at", "ends_at", "grace_period", "shards")

    def get_fields(self, request: HttpRequest, obj: Season | None = None) -> tuple[str, ...]:
        # The reconciliation's cursor is internal: on no form. A new season has no progress.
        return self.editable_fields if obj is None else self.editable_fields + self.progress_fields

    def get_readonly_fields(
        self, request: HttpRequest, obj: Season | None = None
    ) -> tuple[str, ...]:
        if obj is not None and obj.state == SeasonState.CLOSED:
            # A closed season is history: its archive, rewards and exports depend on it as is.
            return self.editable_fields + self.progress_fields
        if obj is None:
            return ()
        fixed: tuple[str, ...] = ()
        if obj.scored_since_start():
            # Its results, totals and addresses name it (Season.clean refuses a change too).
            fixed += ("board", "slug", "starts_at")
        if obj.starts_at <= timezone.now() or obj.standings_whole_since is not None:
            # Its keys in Redis are named by its shards (Season.clean refuses a change too).
            fixed += ("shards",)
        return (*fixed, *self.progress_fields)

    @admin.display(description="Starts (UTC, and in the board's zone)", ordering="starts_at")
    def starts(self, season: Season) -> str:
        return in_zones(season.starts_at, season.board.schedule_timezone)

    @admin.display(description="Ends (UTC, and in the board's zone)", ordering="ends_at")
    def ends(self, season: Season) -> str:
        return in_zones(season.ends_at, season.board.schedule_timezone)

    def save_model(self, request: HttpRequest, obj: Season, form: object, change: bool) -> None:
        season_save(season=obj, actor=request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Season | None = None) -> bool:
        # Only an unused future season can go: a started one, or one holding results, is the
        # record (PROTECT), so delete is not offered where it could only fail.
        if obj is not None and not obj.unused():
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # per season, from its page (see above)
        return actions

    actions = [
        "rebuild_standings",
        "close_now",
        "preview_rewards",
        "export_csv",
        "export_parquet",
        "correct_archive",
    ]
    change_form_template = "admin/seasons/season/change_form.html"

    @admin.display(description="Status")
    def status(self, season: Season) -> str:
        return season.status_at(timezone.now())

    def get_urls(self):
        return [
            *self.archive_correction_urls(),
            path(
                "<path:object_id>/rewards-preview/",
                self.admin_site.admin_view(self.rewards_preview_view),
                name="seasons_season_rewards_preview",
            ),
            *super().get_urls(),
        ]

    def rewards_preview_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        season = get_object_or_404(Season.objects.select_related("board"), pk=object_id)
        if not self.has_view_permission(request, season):
            return HttpResponse(status=403)
        raw = request.GET.get("offset", "0")
        offset = int(raw) if raw.isascii() and raw.isdigit() and int(raw) < 2**31 else 0
        preview = None
        if season.state != SeasonState.CLOSED:
            preview = season_rewards_preview(season=season, offset=offset, limit=PREVIEW_PAGE)
        return TemplateResponse(
            request,
            "admin/seasons/season/rewards_preview.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.model._meta,
                "original": season,
                "title": f"Rewards if {season} closed now",
                "season": season,
                "preview": preview,
            },
        )

    def has_close_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("seasons.close_season")

    def has_rebuild_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("seasons.rebuild_season")

    @admin.action(
        description="Preview rewards: who would get what if it closed now", permissions=["view"]
    )
    def preview_rewards(self, request: HttpRequest, queryset: QuerySet[Season]) -> HttpResponse:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one season to preview.", messages.ERROR)
            return None
        url = reverse("admin:seasons_season_rewards_preview", args=[queryset.get().pk])
        return HttpResponseRedirect(url)

    @admin.action(
        description="Rebuild the leaderboard (Redis) from PostgreSQL", permissions=["rebuild"]
    )
    @confirm_first(
        title="Rebuild the leaderboards from PostgreSQL?",
        what_happens="Each season's sorted set in Redis is built again from PostgreSQL's "
        "totals and swapped in atomically when done; a season being closed or rebuilt by "
        "another worker is skipped. Readers keep the old set until the swap.",
        confirm_label="Yes, rebuild them",
    )
    def rebuild_standings(self, request: HttpRequest, queryset: QuerySet[Season]) -> None:
        queued = sum(
            season_rebuild_queue(season.pk, actor_id=request.user.pk) for season in queryset
        )
        self.message_user(
            request,
            f"Queued a rebuild of {counted(queued, 'season')}; the swap is atomic.",
            messages.SUCCESS,
        )
        if queued < queryset.count():
            self.message_user(
                request,
                f"{counted(queryset.count() - queued, 'season')} already had a rebuild queued "
                "or running.",
                messages.WARNING,
            )

    @admin.action(
        description="Close now: the season ends now and the next one starts (archive, rewards)",
        permissions=["close"],
    )
    @confirm_first(
        title="Close these seasons now?",
        what_happens="Each season ends now, with no grace period: results that ended before "
        "now and arrive later are refused. Its final standings are archived and its rewards "
        "given, which cannot be undone, and its board's next season starts now. Closed "
        "seasons among those selected are left as they are.",
        confirm_label="Yes, close them now",
        describe=lambda season: close_outcome(season),
    )
    def close_now(self, request: HttpRequest, queryset: QuerySet[Season]) -> None:
        queued = refused = 0
        for season in queryset.select_related("board"):
            try:
                queued += season_close_now(season=season, actor=request.user)
            except Conflict as exc:
                refused += 1
                self.message_user(request, exc.message, messages.ERROR)
        if queued or not refused:
            self.message_user(
                request,
                f"Queued closing of {counted(queued, 'season')}: each ends at once (no grace "
                "period) and its board's next season starts; watch the close step column.",
                messages.SUCCESS,
            )

    def _export(self, request: HttpRequest, queryset: QuerySet[Season], kind: str) -> HttpResponse:
        if queryset.count() != 1 or queryset.get().state != SeasonState.CLOSED:
            self.message_user(
                request, "Select exactly one closed season to export.", messages.ERROR
            )
            return None
        season = queryset.select_related("board").get()
        name = f"{season.board.slug}-{season.slug}-standings.{kind}"
        if kind == "csv":
            text = io.StringIO()
            standings_export_csv(season=season, out=text)
            response = HttpResponse(text.getvalue(), content_type="text/csv")
        else:
            data = io.BytesIO()
            standings_export_parquet(season=season, out=data)
            response = HttpResponse(data.getvalue(), content_type="application/vnd.apache.parquet")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    @admin.action(description="Export final standings (CSV)", permissions=["view"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Season]) -> HttpResponse:
        return self._export(request, queryset, "csv")

    @admin.action(description="Export final standings (Parquet)", permissions=["view"])
    def export_parquet(self, request: HttpRequest, queryset: QuerySet[Season]) -> HttpResponse:
        return self._export(request, queryset, "parquet")
