"""Admin for players (ban and unban, with a reason, from the list or the player's own page),
match results and totals (read-only: they are the record), and game-server keys."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from config.building_blocks.admin import LargeTableAdmin, ReadOnlyAdmin, counted
from config.building_blocks.errors import Conflict

from .corrections import result_void
from .game_servers import game_server_delete, game_server_saved
from .models import Clan, FriendList, GameServer, MatchResult, Player, PlayerTotal
from .services import player_ban, player_memberships, player_unban, player_upsert

# The library's own key model is not used (game servers have theirs, GameServer, below): its
# empty "API keys" section beside "Game-server keys" only confused operators.
admin.site.unregister(APIKey)

BAN_WHAT_HAPPENS = (
    "They leave every live board at once, their new results stop counting, and archives made "
    "while the ban lasts leave them out. Their results are kept: when the ban ends (at the time "
    "given, or when lifted) their standings return from PostgreSQL; results posted during the "
    "ban never count."
)
UNBAN_WHAT_HAPPENS = (
    "Their standings return to every live board exactly as PostgreSQL has them; results they "
    "posted while banned stay uncounted."
)


class BanForm(forms.Form):
    reason = forms.CharField(
        max_length=200, help_text="Shown in the player list and kept in the audit log."
    )
    until = forms.DateTimeField(
        required=False,
        label="Banned until",
        help_text="Empty: until lifted by hand. Otherwise the ban ends by itself then "
        "(YYYY-MM-DD HH:MM, UTC).",
    )

    def clean_until(self):
        until = self.cleaned_data["until"]
        if until is not None and until <= timezone.now():
            raise forms.ValidationError("The end of a temporary ban must be in the future.")
        return until


VOID_WHAT_HAPPENS = (
    "Each result is kept but voided: it no longer counts, the player's total in its season is "
    "computed again from the results that still count (the board's sum or best rule) and their "
    "live rank follows at once, up or down. In a closed season the archived rank, points and "
    "reward stay as they were and the archived row gets a note. The same result posted again "
    "stays voided. Results already voided are left as they are."
)


class VoidForm(forms.Form):
    reason = forms.CharField(
        max_length=200, help_text="Kept on the result and in the audit log (required)."
    )


class UnbanForm(forms.Form):
    reason = forms.CharField(max_length=200, required=False, help_text="Kept in the audit log.")


def _confirm(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    *,
    title: str,
    what_happens: str,
    confirm_label: str,
    players: list[Player],
    form: forms.Form,
    action: str = "",
) -> TemplateResponse:
    return TemplateResponse(
        request,
        "admin/matches/player/ban.html",
        {
            **model_admin.admin_site.each_context(request),
            "opts": model_admin.model._meta,
            "title": title,
            "what_happens": what_happens,
            "confirm_label": confirm_label,
            "players": players,
            "form": form,
            "action": action,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        },
    )


def _changelist_of(model: type, player_id: str) -> str:
    meta = model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    return f"{url}?{urlencode({'q': player_id})}"


class BanFilter(admin.SimpleListFilter):
    """ "Banned" or "Not banned", in the operator's words (not "banned at: empty")."""

    title = "ban"
    parameter_name = "banned"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("yes", "Banned"), ("no", "Not banned")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Player]) -> QuerySet[Player]:
        if self.value() == "yes":
            return queryset.filter(banned_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(banned_at__isnull=True)
        return queryset


@admin.register(Player)
class PlayerAdmin(LargeTableAdmin):
    list_display = (
        "player_id",
        "display_name",
        "ban_status",
        "ban_reason",
        "banned_until",
        "created_at",
    )
    list_filter = (BanFilter,)
    readonly_fields = (
        "ban_status",
        "banned_at",
        "banned_until",
        "ban_reason",
        "records",
        "clan",
        "segment_values",
        "friends",
        "created_at",
        "updated_at",
        # The write path's counters of segment and profile changes, not the operator's to set.
        "segments_changes",
        "profile_changes",
    )
    actions = ["ban", "unban"]
    change_form_template = "admin/matches/player/change_form.html"

    def get_readonly_fields(
        self, request: HttpRequest, obj: Player | None = None
    ) -> tuple[str, ...]:
        # A player's id is the key of their results and totals: changing it on the form would
        # save another player beside them, so an existing player's id is shown, not edited.
        fields = tuple(super().get_readonly_fields(request, obj))
        return ("player_id", *fields) if obj is not None else fields

    def save_model(self, request: HttpRequest, obj: Player, form: Any, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        # Through the service, so the boards' profile directory files the new names once it
        # commits.
        player_upsert(
            player_id=obj.player_id, display_name=obj.display_name, avatar_url=obj.avatar_url
        )

    def has_delete_permission(self, request: HttpRequest, obj: Player | None = None) -> bool:
        # A player is the record of their results (PROTECT): ban them instead.
        return False

    @admin.display(description="Ban")
    def ban_status(self, player: Player) -> str:
        if player.banned_at is None:
            return "–"
        if not player.banned_at_time(timezone.now()):
            return "ended (lifted within a minute)"
        return "banned" if player.banned_until is None else "banned (temporary)"

    @admin.display(description="Records")
    def records(self, player: Player) -> str:
        return format_html(
            '<a href="{}">Season totals</a> · <a href="{}">Match results</a>',
            _changelist_of(PlayerTotal, player.player_id),
            _changelist_of(MatchResult, player.player_id),
        )

    @admin.display(description="Segments")
    def segment_values(self, player: Player) -> str:
        """Set by game servers with the profile write; read-only here."""
        values = player_memberships(player)["segments"]
        return ", ".join(f"{d}: {v}" for d, v in values.items()) or "–"

    @admin.display(description="Friends")
    def friends(self, player: Player) -> str:
        """The list game servers stored (PUT /api/v1/players/{id}/friends); read-only here."""
        friend_ids = FriendList.objects.filter(player=player).values_list("friend_ids", flat=True)
        stored = next(iter(friend_ids), None)
        if not stored:
            return "–"
        return f"{len(stored):,}: " + ", ".join(stored[:50]) + (" …" if len(stored) > 50 else "")

    def get_urls(self):
        return [
            path(
                "<path:object_id>/ban/",
                self.admin_site.admin_view(self.ban_view),
                name="matches_player_ban",
            ),
            path(
                "<path:object_id>/unban/",
                self.admin_site.admin_view(self.unban_view),
                name="matches_player_unban",
            ),
            *super().get_urls(),
        ]

    def _back_to(self, player: Player) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:matches_player_change", args=[player.player_id]))

    def ban_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        player = get_object_or_404(Player, player_id=object_id)
        if not self.has_change_permission(request, player):
            return HttpResponse(status=403)
        form = BanForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            player_ban(
                player_id=player.player_id,
                reason=form.cleaned_data["reason"],
                until=form.cleaned_data["until"],
                actor=request.user,
            )
            self.message_user(request, f"Banned {player.player_id}.", messages.SUCCESS)
            return self._back_to(player)
        return _confirm(
            self,
            request,
            title=f"Ban {player.player_id}?",
            what_happens=BAN_WHAT_HAPPENS,
            confirm_label="Yes, ban",
            players=[player],
            form=form,
        )

    def unban_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        player = get_object_or_404(Player, player_id=object_id)
        if not self.has_change_permission(request, player):
            return HttpResponse(status=403)
        form = UnbanForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            player_unban(
                player_id=player.player_id, reason=form.cleaned_data["reason"], actor=request.user
            )
            self.message_user(request, f"Unbanned {player.player_id}.", messages.SUCCESS)
            return self._back_to(player)
        return _confirm(
            self,
            request,
            title=f"Unban {player.player_id}?",
            what_happens=UNBAN_WHAT_HAPPENS,
            confirm_label="Yes, unban",
            players=[player],
            form=form,
        )

    @admin.action(
        description="Ban… (asks for the reason; off live boards now)", permissions=["change"]
    )
    def ban(self, request: HttpRequest, queryset: QuerySet[Player]) -> HttpResponse | None:
        form = BanForm(request.POST if request.POST.get("post") == "yes" else None)
        if form.is_bound and form.is_valid():
            players = list(queryset.values_list("player_id", flat=True))
            for player_id in players:
                player_ban(
                    player_id=player_id,
                    reason=form.cleaned_data["reason"],
                    until=form.cleaned_data["until"],
                    actor=request.user,
                )
            self.message_user(
                request, f"Banned {counted(len(players), 'player')}.", messages.SUCCESS
            )
            return None
        return _confirm(
            self,
            request,
            title="Ban these players?",
            what_happens=BAN_WHAT_HAPPENS,
            confirm_label="Yes, ban them",
            players=list(queryset),
            form=form,
            action="ban",
        )

    @admin.action(
        description="Unban… (restore their standing from PostgreSQL)", permissions=["change"]
    )
    def unban(self, request: HttpRequest, queryset: QuerySet[Player]) -> HttpResponse | None:
        form = UnbanForm(request.POST if request.POST.get("post") == "yes" else None)
        if form.is_bound and form.is_valid():
            players = list(queryset.values_list("player_id", flat=True))
            for player_id in players:
                player_unban(
                    player_id=player_id, reason=form.cleaned_data["reason"], actor=request.user
                )
            self.message_user(
                request, f"Unbanned {counted(len(players), 'player')}.", messages.SUCCESS
            )
            return None
        return _confirm(
            self,
            request,
            title="Unban these players?",
            what_happens=UNBAN_WHAT_HAPPENS,
            confirm_label="Yes, unban them",
            players=list(queryset),
            form=form,
            action="unban",
        )


@admin.register(MatchResult)
class MatchResultAdmin(ReadOnlyAdmin):
    list_display = (
        "match_id",
        "player",
        "season",
        "points",
        "counted",
        "voided",
        "ended_at",
        "received_at",
    )
    list_filter = ("season__board", "season")
    list_select_related = ("season", "season__board")
    actions = ["void"]

    @admin.display(description="Voided")
    def voided(self, result: MatchResult) -> str:
        return f"voided: {result.void_reason}" if result.voided_at else "–"

    def has_void_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("matches.change_matchresult")

    @admin.action(
        description="Void… (asks for the reason; the total is recomputed)",
        permissions=["void"],
    )
    def void(self, request: HttpRequest, queryset: QuerySet[MatchResult]) -> HttpResponse | None:
        form = VoidForm(request.POST if request.POST.get("post") == "yes" else None)
        results = list(queryset.select_related("season", "season__board").order_by("pk")[:100])
        if form.is_bound and form.is_valid():
            voided = 0
            refused = []
            for result in results:
                try:
                    voided += result_void(
                        result_id=result.pk, reason=form.cleaned_data["reason"], actor=request.user
                    )
                except Conflict as exc:
                    refused.append(exc.message)
            self.message_user(request, f"Voided {counted(voided, 'result')}.", messages.SUCCESS)
            for message in refused:
                self.message_user(request, message, messages.ERROR)
            return None
        return TemplateResponse(
            request,
            "admin/matches/matchresult/void.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.model._meta,
                "title": "Void these results?",
                "what_happens": VOID_WHAT_HAPPENS,
                "confirm_label": "Yes, void them",
                "results": results,
                "form": form,
                "action": "void",
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            },
        )


@admin.register(PlayerTotal)
class PlayerTotalAdmin(ReadOnlyAdmin):
    list_display = ("player", "season", "points", "reached_at", "updated_at")
    list_filter = ("season__board", "season")
    list_select_related = ("season", "season__board")


@admin.register(GameServer)
class GameServerAdmin(APIKeyModelAdmin):
    """Keys are created, scoped, revoked and deleted here (the library's admin: the new key is
    shown once), each change audited inside the admin's transaction."""

    filter_horizontal = ("boards",)

    def save_related(
        self, request: HttpRequest, form: forms.ModelForm, formsets: list, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        # The form's initial data is the key as it was; its boards are saved by now.
        game_server_saved(
            server=form.instance, before=form.initial if change else None, actor=request.user
        )

    def delete_model(self, request: HttpRequest, obj: GameServer) -> None:
        game_server_delete(server=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[GameServer]) -> None:
        for server in queryset:
            game_server_delete(server=server, actor=request.user)


@admin.register(Clan)
class ClanAdmin(admin.ModelAdmin):
    """Clans as game servers made them; who is in one is each player's profile (read-only here:
    a member joins or leaves with the profile write)."""

    list_display = ("clan_id", "name", "member_count", "created_at")
    search_fields = ("clan_id", "name")
    readonly_fields: tuple[str, ...] = ("created_at", "member_list")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Clan]:
        return super().get_queryset(request).annotate(member_total=Count("members"))

    @admin.display(description="Members", ordering="member_total")
    def member_count(self, clan: Clan) -> int:
        return clan.member_total  # type: ignore[attr-defined]

    @admin.display(description="Members")
    def member_list(self, clan: Clan) -> str:
        members = list(clan.members.values_list("player_id", flat=True)[:101])
        shown = ", ".join(members[:100]) or "–"
        return f"{shown}, …" if len(members) > 100 else shown

    def get_readonly_fields(self, request: HttpRequest, obj: Clan | None = None) -> tuple[str, ...]:
        # The id is chosen once: players' profiles name their clan by it.
        return (*self.readonly_fields, "clan_id") if obj is not None else self.readonly_fields
