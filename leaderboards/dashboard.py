"""The operator dashboard (an admin page): charts of the service over the last hour or day
(results, mirror lag, reconciliation drift, open sockets, 4xx and 5xx responses, from the
samples of leaderboards/operations.py, drawn as inline SVG on the server), then per board its
players, results of the last minute and hour, the mirror's lag and the last reconciliation's
drift, the running and next season with the time left, and the last close with how long it took.

Every number is cheap on a board of ten million players and a results table of billions: the
players are the sorted set's ZCARD; results are counted a whole minute at a time through the
results' BRIN index on received_at, and each minute's count is kept (in the cache) for the hour
it is shown, so a view counts at most the minutes that ended since the last one; the mirror's
outbox is small by design; the seasons and runs are read by their indexes. The charts read at
most a day of samples (1,440 rows) and of reconciliation runs, grouped by PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from config.building_blocks.admin import in_zones
from config.building_blocks.charts import TimeChart, time_chart
from config.building_blocks.errors import error_body
from matches.selectors import standings_waiting_by_season
from seasons.models import Board, Season, SeasonState
from seasons.selectors import season_current, season_next

from . import store
from .models import ReconciliationRun
from .operations import WINDOWS, Series, Window, operations_series, results_per_minute
from .services import mirror_lag_seconds

MINUTE = timedelta(minutes=1)
# A minute is counted once it ended this long ago: a result's received_at is its request's
# clock, and its transaction may commit a moment later.
SETTLED = timedelta(seconds=5)


@dataclass(frozen=True, slots=True)
class BoardHealth:
    board: Board
    players: int | None  # in the running season's board; None: no running season
    results_last_minute: int
    results_last_hour: int
    pending: int  # standings committed, not yet in Redis
    mirror_lag_seconds: float
    drift: int | None  # the latest reconciliation run's, of the running season
    running: Season | None
    running_left: timedelta | None
    upcoming: Season | None
    upcoming_in: timedelta | None
    last_close: Season | None
    last_close_took: timedelta | None

    @property
    def running_ends(self) -> str:
        return in_zones(self.running.ends_at if self.running else None, self._zone)

    @property
    def upcoming_starts(self) -> str:
        return in_zones(self.upcoming.starts_at if self.upcoming else None, self._zone)

    @property
    def last_closed(self) -> str:
        return in_zones(self.last_close.closed_at if self.last_close else None, self._zone)

    @property
    def _zone(self) -> str:
        return self.board.schedule_timezone

    @property
    def last_close_seconds(self) -> str:
        # A close that took no measurable time took 0.0 s: only a missing duration is blank.
        took = self.last_close_took
        return "" if took is None else f"{took.total_seconds():.1f}"


def _minute_counts(now: datetime) -> list[dict[int, int]]:
    """Results per board in each of the 60 whole minutes before `now` (settled), newest first."""
    last = (now - SETTLED).replace(second=0, microsecond=0) - MINUTE
    minutes = [last - i * MINUTE for i in range(60)]
    counted = results_per_minute(minutes)
    return [counted[minute] for minute in minutes]


def boards_health(*, now: datetime | None = None) -> list[BoardHealth]:
    now = now or timezone.now()
    minutes = _minute_counts(now)
    pending = standings_waiting_by_season()
    health = []
    for board in Board.objects.order_by("slug"):
        current = season_current(board=board, now=now)
        running = current if current is not None and current.holds(now) else None
        if running is not None and running.state == SeasonState.CLOSED:
            running = None
        upcoming = season_next(board=board, now=now)
        last_close = (
            Season.objects.filter(board=board, state=SeasonState.CLOSED)
            .order_by("-ends_at")
            .first()
        )
        waiting = pending.get(running.pk) if running is not None else None
        run = (
            ReconciliationRun.objects.filter(season=running).order_by("-finished_at").first()
            if running is not None
            else None
        )
        health.append(
            BoardHealth(
                board=board,
                players=store.board_size(running.pk, shards=running.shards)
                if running is not None
                else None,
                results_last_minute=minutes[0].get(board.pk, 0),
                results_last_hour=sum(minute.get(board.pk, 0) for minute in minutes),
                pending=waiting.count if waiting else 0,
                mirror_lag_seconds=(
                    max(0.0, (now - waiting.oldest).total_seconds()) if waiting else 0.0
                ),
                drift=run.drift if run is not None else None,
                running=running,
                running_left=running.ends_at - now if running is not None else None,
                upcoming=upcoming,
                upcoming_in=upcoming.starts_at - now if upcoming is not None else None,
                last_close=last_close,
                last_close_took=(
                    last_close.closed_at - last_close.close_started_at
                    if last_close is not None and last_close.close_started_at
                    else None
                ),
            )
        )
    return health


# The time axis's labels: every quarter hour on the hour's charts, every six hours on the day's.
_TICKS = {"hour": (timedelta(minutes=15), "%H:%M"), "day": (timedelta(hours=6), "%H:%M")}


@dataclass(frozen=True, slots=True)
class DashboardChart:
    series: Series
    chart: TimeChart
    window: Window

    @property
    def latest(self) -> str:
        point = self.chart.latest
        return "none yet" if point is None else self._shown(point.value)

    @property
    def summary(self) -> str:
        """The chart in words, for whoever cannot see it."""
        span = f"the last {self.window.name}"
        if self.chart.latest is None or self.chart.highest is None:
            return f"{self.series.title}: nothing sampled over {span} yet."
        return (
            f"{self.series.title} over {span}: {self.latest} at "
            f"{self.chart.latest.at:%H:%M} UTC, highest {self._shown(self.chart.highest)}; "
            f"{len(self.chart.points)} of {self.chart.samples} points sampled."
        )

    def _shown(self, value: float) -> str:
        shown = f"{value:,.0f}" if value == int(value) or value >= 100 else f"{value:,.1f}"
        return f"{shown}{self.series.unit}"


def dashboard_charts(*, window: Window, now: datetime) -> list[DashboardChart]:
    every, label = _TICKS[window.name]
    return [
        DashboardChart(
            series=series,
            chart=time_chart(samples=series.samples, tick_every=every, tick_format=label),
            window=window,
        )
        for series in operations_series(window=window, now=now)
    ]


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    # It shows every board's seasons, hidden boards' too: a staff account that may not see the
    # seasons in the admin may not see them here.
    if not request.user.has_perm("seasons.view_season"):
        raise PermissionDenied
    chosen = request.GET.get("range", "hour")
    window = WINDOWS.get(chosen)
    if window is None:
        return JsonResponse(
            error_body(
                "invalid_range",
                f"Unknown range '{chosen}': the charts cover 'hour' or 'day'.",
                {"range": sorted(WINDOWS)},
            ),
            status=400,
        )
    now = timezone.now()
    return TemplateResponse(
        request,
        "admin/dashboard.html",
        {
            **admin.site.each_context(request),
            "title": "Operator dashboard",
            "boards": boards_health(now=now),
            "mirror_lag_seconds": mirror_lag_seconds(now=now),
            "charts": dashboard_charts(window=window, now=now),
            "window": window,
            "windows": WINDOWS.values(),
            "now": now,
        },
    )


urlpatterns = [path("", dashboard, name="operator-dashboard")]
