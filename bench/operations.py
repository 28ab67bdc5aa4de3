"""Operator paths at benchmark size: `python -m bench.operations --players N [--reuse-season]`.

What an operator does to a season of N players, timed on the bench's own PostgreSQL cluster and
Redis keys (the same environment as `bench.run`): the admin's changelists and pages, an exact
player search, one reconciliation run, closing the season (snapshot, archive, rewards), the
archive's changelist and the exports (CSV and Parquet). The season is closed at the end, so a
later `bench.run --reuse-season` loads a new one.

Results go to bench/results/operations-<N>.json and operations-latest.md (--results-dir).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core import json_write, options_parse, program, say
from .environment import OPTIONS, BenchEnvironment, bench_setup

# Each page is asked this many times: the first shows a cold cache, the best the steady cost.
PAGE_TRIES = 3


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return round(time.perf_counter() - started, 3), value


def _say(message: str) -> None:
    say(message, "operations")


def _pages(client: Any, pages: dict[str, str]) -> dict[str, Any]:
    """Each admin page's first and best time, and its status (200 expected)."""
    figures = {}
    for name, url in pages.items():
        times, status = [], None
        for _ in range(PAGE_TRIES):
            seconds, response = _timed(lambda url=url: client.get(url))
            times.append(seconds)
            status = response.status_code
        figures[name] = {"url": url, "status": status, "first_s": times[0], "best_s": min(times)}
        _say(f"{name}: {status}, first {times[0]} s, best {min(times)} s")
    return figures


def run(env: BenchEnvironment, players: int, reuse: bool) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from leaderboards import closing, exports, reconciliation
    from leaderboards.models import ArchivedStanding
    from matches.models import PlayerTotal
    from seasons.models import RewardTier, Season

    from .load import bench_reset, season_load, season_prepare, season_rebuild, season_reused

    results: dict[str, Any] = {"players": players}
    season = season_reused(env, players=players) if reuse else None
    if season is None:
        bench_reset(env)
        from django.utils import timezone

        season = season_prepare(now=timezone.now())
        results["load"] = season_load(env=env, season=season, players=players, seed=1)
        results["rebuild"] = season_rebuild(season=season, players=players)
    else:
        results["load"] = {"reused": True}
        # season_reused emptied the season's keys: the board is rebuilt as after a load.
        results["rebuild"] = season_rebuild(season=season, players=players)
    # Rewards make the close write SeasonReward rows as a real season's would: the top 100 by
    # rank and the top 1% by percentage.
    RewardTier.objects.get_or_create(
        board=season.board, rank_from=1, rank_to=100, defaults={"reward_code": "gold"}
    )
    RewardTier.objects.get_or_create(
        board=season.board, top_percent=1, defaults={"reward_code": "silver"}
    )
    admin, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(admin)
    some_player = "p12345"
    open_pages = {
        "results changelist": reverse("admin:matches_matchresult_changelist"),
        "results of the season": reverse("admin:matches_matchresult_changelist")
        + f"?season__id__exact={season.pk}",
        "totals changelist": reverse("admin:matches_playertotal_changelist"),
        "totals: search an exact player id": reverse("admin:matches_playertotal_changelist")
        + f"?q={some_player}",
        "players changelist": reverse("admin:matches_player_changelist"),
        "players: search an exact player id": reverse("admin:matches_player_changelist")
        + f"?q={some_player}",
        "seasons changelist": reverse("admin:seasons_season_changelist"),
        "the board's page (its seasons inline)": reverse(
            "admin:seasons_board_change", args=[season.board_id]
        ),
        "the season's page": reverse("admin:seasons_season_change", args=[season.pk]),
    }
    _say("admin pages of the open season")
    results["admin_open_season"] = _pages(client, open_pages)

    _say("one reconciliation run")
    seconds, tally = _timed(lambda: reconciliation.season_reconcile(season=season))
    results["reconciliation"] = {"seconds": seconds, **dataclasses.asdict(tally)}
    size = PlayerTotal.objects.filter(season=season).count()
    results["reconciliation"]["walk_page"] = reconciliation.WALK_PAGE
    results["reconciliation"]["runs_for_a_full_walk"] = -(-size // reconciliation.WALK_PAGE)
    _say(f"reconciliation: {seconds} s ({tally})")

    _say("closing the season")
    seconds, closed = _timed(lambda: closing.season_close(season=season, force=True))
    results["close"] = {
        "seconds": seconds,
        "state": closed.state,
        "archived": ArchivedStanding.objects.filter(season=closed).count(),
    }
    _say(f"close: {seconds} s, {results['close']['archived']:,} standings archived")

    archive = reverse("admin:leaderboards_archivedstanding_changelist")
    closed_pages = {
        "archive changelist": archive,
        "archive of the season": archive + f"?season__id__exact={closed.pk}",
        "archive: search an exact player id": archive + f"?q={some_player}",
        "rewards changelist": reverse("admin:leaderboards_seasonreward_changelist"),
    }
    results["admin_closed_season"] = _pages(client, closed_pages)

    closed = Season.objects.select_related("board").get(pk=closed.pk)
    with tempfile.TemporaryDirectory() as folder:
        csv_path = Path(folder) / "standings.csv"
        with csv_path.open("w", newline="") as out:
            seconds, rows = _timed(lambda: exports.standings_export_csv(season=closed, out=out))
        results["export_csv"] = {"seconds": seconds, "rows": rows, "bytes": csv_path.stat().st_size}
        _say(f"export CSV: {seconds} s, {rows:,} rows")
        parquet_path = Path(folder) / "standings.parquet"
        seconds, rows = _timed(
            lambda: exports.standings_export_parquet(season=closed, out=str(parquet_path))
        )
        results["export_parquet"] = {
            "seconds": seconds,
            "rows": rows,
            "bytes": parquet_path.stat().st_size,
        }
        _say(f"export Parquet: {seconds} s, {rows:,} rows")
    return results


def report(results: dict[str, Any]) -> str:
    lines = [
        f"# Operator paths: {results['players']:,} players",
        "",
        "| Path | Time | Note |",
        "|---|---:|---|",
    ]
    for section in ("admin_open_season", "admin_closed_season"):
        for name, page in results.get(section, {}).items():
            lines.append(
                f"| admin: {name} | {page['best_s']} s (first {page['first_s']} s) | "
                f"HTTP {page['status']} |"
            )
    rec = results.get("reconciliation", {})
    lines.append(
        f"| one reconciliation run | {rec.get('seconds')} s | {rec.get('checked', 0):,} checked, "
        f"{rec.get('drift')} drift; a full walk "
        f"takes {rec.get('runs_for_a_full_walk')} runs of {rec.get('walk_page'):,} players |"
    )
    close = results.get("close", {})
    lines.append(
        f"| close (snapshot, archive, rewards) | {close.get('seconds')} s | "
        f"{close.get('archived', 0):,} standings archived |"
    )
    for name in ("export_csv", "export_parquet"):
        export = results.get(name, {})
        lines.append(
            f"| export, {name.split('_')[1]} | {export.get('seconds')} s | "
            f"{export.get('rows', 0):,} rows, {export.get('bytes', 0) / 2**20:,.0f} MiB |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    options = options_parse("bench.operations", __doc__, OPTIONS, argv)
    found: dict[str, Any] = {}

    def body() -> None:
        env = bench_setup(options)
        found["results"] = run(env, options.players, options.reuse_season)

    if code := program("operations", body):
        return code
    folder = options.results_dir
    json_write(found["results"], folder / f"operations-{options.players}.json")
    (folder / "operations-latest.md").write_text(report(found["results"]))
    _say(f"wrote {folder / 'operations-latest.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
