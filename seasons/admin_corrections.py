"""The seasons admin's correction of a closed season's archive: a page that previews what would
change (for whoever may view seasons) with a button that corrects it (the correct_archive
permission alone), and the action that opens it. The correction itself is the leaderboards
app's, reached through seasons/archive_corrections.py."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from config.building_blocks.admin import counted
from config.building_blocks.errors import Conflict

from .archive_corrections import season_archive_correct, season_archive_correction_preview
from .models import Season, SeasonState

# Moves per page of the preview.
CORRECTION_PAGE = 100


class ArchiveCorrectionAdmin:
    """Mixed into the seasons' ModelAdmin."""

    def archive_correction_urls(self) -> list[URLPattern]:
        return [
            path(
                "<path:object_id>/archive-correction/",
                self.admin_site.admin_view(self.archive_correction_view),
                name="seasons_season_archive_correction",
            )
        ]

    def archive_correction_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """What correcting a closed season's archive would change (GET, for whoever may view
        seasons) and, posted from its button, the correction (the correct_archive permission)."""
        season = get_object_or_404(Season.objects.select_related("board"), pk=object_id)
        if not self.has_view_permission(request, season):
            return HttpResponse(status=403)
        may_correct = self.has_correct_archive_permission(request)
        if request.method == "POST":
            if not may_correct:
                return HttpResponse(status=403)
            try:
                done = season_archive_correct(
                    season=season, actor=request.user, reason=request.POST.get("reason", "")
                )
            except Conflict as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(
                    request,
                    "The archive was correct already: nothing changed."
                    if done.changes_nothing
                    else f"Corrected the archive of {season}: {counted(done.moved, 'standing')} "
                    "changed; audited and told to the webhooks.",
                    messages.SUCCESS,
                )
            return HttpResponseRedirect(request.path)
        raw = request.GET.get("offset", "0")
        offset = int(raw) if raw.isascii() and raw.isdigit() and int(raw) < 2**31 else 0
        preview = None
        if season.state == SeasonState.CLOSED:
            preview = season_archive_correction_preview(
                season=season, offset=offset, limit=CORRECTION_PAGE
            )
        return TemplateResponse(
            request,
            "admin/seasons/season/archive_correction.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.model._meta,
                "original": season,
                "title": f"Correct the archive of {season}",
                "season": season,
                "preview": preview,
                "may_correct": may_correct,
            },
        )

    def has_correct_archive_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("seasons.correct_archive")

    @admin.action(
        description="Correct the archive after bans or voids (a preview first)",
        permissions=["correct_archive"],
    )
    def correct_archive(self, request: HttpRequest, queryset: QuerySet[Season]) -> HttpResponse:
        if queryset.count() != 1 or queryset.get().state != SeasonState.CLOSED:
            self.message_user(
                request, "Select exactly one closed season to correct.", messages.ERROR
            )
            return None
        url = reverse("admin:seasons_season_archive_correction", args=[queryset.get().pk])
        return HttpResponseRedirect(url)
