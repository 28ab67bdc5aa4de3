"""What an operator does to a season of N players (admin pages, reconciliation, close, exports),
timed in bench.run's environment; it closes the season (bench/README.md, "Operator paths")."""

from __future__ import annotations

import dataclasses
import functools
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core import Program, json_write, options_parse, say, table
from .environment import HISTORY_MAX_PLAYERS, OPTIONS, BenchEnvironment, bench_setup

# Each page is asked this many times: the first shows a cold cache, the best the steady cost.
PAGE_TRIES = 3
SOME_PLAYER = "p12345"


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started, value = time.perf_counter(), action()
    return round(time.perf_counter() - started, 3), value


def _pages(client: Any, pages: dict[str, str]) -> dict[str, Any]:
    """Each admin page's first and best time, and its status (200 expected)."""
    figures = {}
    for name, url in pages.items():
        tries = [_timed(lambda url=url: client.get(url)) for _ in range(PAGE_TRIES)]
        times, status = [seconds for seconds, _ in tries], tries[-1][1].status_code
        figures[name] = {"url": url, "status": status, "first_s": times[0], "best_s": min(times)}
        say(f"{name}: {status}, first {times[0]} s, best {min(times)} s", "operations")
    return figures


def _export(name: str, folder: str, export: Callable[[Path], int]) -> dict[str, Any]:
    path = Path(folder) / name
    seconds, rows = _timed(lambda: export(path))
    say(f"export {name}: {seconds} s, {rows:,} rows", "operations")
    size = path.stat().st_size
    path.unlink()  # at 100 million players the CSV alone is about 7.5 GB of disk
    return {"seconds": seconds, "rows": rows, "bytes": size}


def names_filed(season: Any, page: int) -> int:
    """File the names of the players the next reconciliation run walks, untimed; how many. In
    service the profile directory holds every player's name (filed as it changes), so the
    walk's check of names files none; a loaded season's directory is empty, and its first walk
    would file every name it passes (a cost of the first walk after the directory is lost)."""
    from leaderboards import profiles, reconciliation

    players = reconciliation.walk_page_players(season, page)
    step = 1000
    return sum(
        profiles.profiles_repair(players[start : start + step])
        for start in range(0, len(players), step)
    )


def run(env: BenchEnvironment, players: int, reuse: bool) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from config.building_blocks.minute_counts import process_counts
    from leaderboards import closing, exports, reconciliation
    from leaderboards.models import ArchivedStanding
    from matches.models import PlayerTotal
    from seasons.models import RewardTier, Season

    from .load import bench_reset, season_load, season_prepare, season_rebuild, season_reused

    results: dict[str, Any] = {"players": players}
    season = season_reused(env, players=players, segments=False) if reuse else None
    if season is None:
        bench_reset(env)
        season = season_prepare(now=timezone.now())
        history = players <= HISTORY_MAX_PLAYERS
        results["load"] = season_load(
            env=env, season=season, players=players, seed=1, history=history
        )
    else:
        results["load"] = {"reused": True}
    # A reused season's keys were emptied: the board is rebuilt as after a load.
    results["rebuild"] = season_rebuild(season=season, players=players)
    # Rewards make the close write SeasonReward rows as a real season's would: the top 100 by
    # rank and the top 1% by percentage.
    board = season.board
    gold, silver = {"reward_code": "gold"}, {"reward_code": "silver"}
    RewardTier.objects.get_or_create(board=board, rank_from=1, rank_to=100, defaults=gold)
    RewardTier.objects.get_or_create(board=board, top_percent=1, defaults=silver)
    admin, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    # The admin pages below go through Django's test client, in this process: no web process.
    process_counts().keep_local()
    client = Client()
    client.force_login(admin)
    results_url, totals_url, players_url = (
        reverse(f"admin:matches_{model}_changelist")
        for model in ("matchresult", "playertotal", "player")
    )
    board_page = reverse("admin:seasons_board_change", args=[board.pk])
    say("admin pages of the open season", "operations")
    results["admin_open_season"] = _pages(client, {
        "results changelist": results_url,
        "results of the season": f"{results_url}?season__id__exact={season.pk}",
        "totals changelist": totals_url,
        "totals: search an exact player id": f"{totals_url}?q={SOME_PLAYER}",
        "players changelist": players_url,
        "players: search an exact player id": f"{players_url}?q={SOME_PLAYER}",
        "seasons changelist": reverse("admin:seasons_season_changelist"),
        "the board's page (its seasons inline)": board_page,
        "the season's page": reverse("admin:seasons_season_change", args=[season.pk]),
    })  # fmt: skip

    size = PlayerTotal.objects.filter(season=season).count()
    # A run walks a page that grows with the season, so a full walk is size / page runs, one a
    # minute (leaderboards/schedules.py): the run's seconds over 60 are the walk's share.
    page = reconciliation.walk_page(size)
    filed = names_filed(season, page)
    say(f"one reconciliation run ({filed:,} names of its page filed first)", "operations")
    seconds, tally = _timed(lambda: reconciliation.season_reconcile(season=season))
    results["reconciliation"] = {"seconds": seconds, **dataclasses.asdict(tally)}
    results["reconciliation"]["names_filed_first"] = filed
    results["reconciliation"] |= {"walk_page": page, "runs_for_a_full_walk": -(-size // page),
                                  "share_of_each_minute": round(seconds / 60, 3)}  # fmt: skip
    say(f"reconciliation: {seconds} s ({tally})", "operations")

    say("closing the season", "operations")
    seconds, closed = _timed(lambda: closing.season_close(season=season, force=True))
    archived = ArchivedStanding.objects.filter(season=closed).count()
    results["close"] = {"seconds": seconds, "state": closed.state, "archived": archived}
    say(f"close: {seconds} s, {archived:,} standings archived", "operations")

    archive = reverse("admin:leaderboards_archivedstanding_changelist")
    results["admin_closed_season"] = _pages(client, {
        "archive changelist": archive,
        "archive of the season": f"{archive}?season__id__exact={closed.pk}",
        "archive: search an exact player id": f"{archive}?q={SOME_PLAYER}",
        "rewards changelist": reverse("admin:leaderboards_seasonreward_changelist"),
    })  # fmt: skip

    closed = Season.objects.select_related("board").get(pk=closed.pk)

    def csv(path: Path) -> int:
        with path.open("w", newline="") as out:
            return int(exports.standings_export_csv(season=closed, out=out))

    with tempfile.TemporaryDirectory() as folder:
        results["export_csv"] = _export("standings.csv", folder, csv)
        parquet = functools.partial(exports.standings_export_parquet, season=closed)
        results["export_parquet"] = _export(
            "standings.parquet", folder, lambda p: parquet(out=str(p))
        )
    return results


def report(results: dict[str, Any]) -> str:
    pages, rows = {**results["admin_open_season"], **results["admin_closed_season"]}, []
    for name, page in pages.items():
        took = f"{page['best_s']} s (first {page['first_s']} s)"
        rows.append((f"admin: {name}", took, f"HTTP {page['status']}"))
    rec, close = results["reconciliation"], results["close"]
    walk = (f"a full walk takes {rec['runs_for_a_full_walk']} runs of {rec['walk_page']:,} "
            f"players, one a minute: {rec['share_of_each_minute']:.0%} of each")  # fmt: skip
    note = f"{rec['checked']:,} checked, {rec['drift']} drift; {walk}"
    rows.append(("one reconciliation run", f"{rec['seconds']} s", note))
    note = f"{close['archived']:,} standings archived"
    rows.append(("close (snapshot, archive, rewards)", f"{close['seconds']} s", note))
    for kind in ("csv", "parquet"):
        export = results[f"export_{kind}"]
        note = f"{export['rows']:,} rows, {export['bytes'] / 2**20:,.0f} MiB"
        rows.append((f"export, {kind}", f"{export['seconds']} s", note))
    title = f"# Operator paths: {results['players']:,} players"
    return "\n".join([title, "", *table("Path | Time | Note", "lrl", rows)]) + "\n"


def _redis_cleanup(env: BenchEnvironment) -> None:
    """The run's keys go (the closed season's sets, its profile directory, the cache): a
    reused season is rebuilt anyway, and keys left behind slow every later SCAN of the Redis."""
    from leaderboards import store

    from .load import redis_cleanup

    store.delete_prefixed_keys()
    redis_cleanup(env)


def main(argv: list[str] | None = None) -> int:
    options = options_parse("bench.operations", __doc__, OPTIONS, argv)
    with Program("operations") as program:
        env = bench_setup(options)
        try:
            results = run(env, options.players, options.reuse_season)
        finally:
            _redis_cleanup(env)
    if program.code:
        return program.code
    folder = options.results_dir
    json_write(results, folder / f"operations-{options.players}.json")
    (folder / "operations-latest.md").write_text(report(results))
    say(f"wrote {folder / 'operations-latest.md'}", "operations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
