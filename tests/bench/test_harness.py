"""The benchmark harness in its tiny mode: it runs end to end, on a PostgreSQL cluster of its
own and under its own Redis prefix, writes every section (the open-loop phases and PostgreSQL's
side included) with sane figures, and stops its cluster. Speed is never asserted here: it is
judged from a real run's output (bench/README.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bench.loaders import CONNECTIONS_PER_LOADER
from scripts.devservices import pg_bindir, pg_cluster_stop

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = 3000
RUN_TIMEOUT_SECONDS = 900
pytestmark = [
    pytest.mark.skipif(
        (shutil.which("wrk") is None or shutil.which("h2load") is None) and os.geteuid() != 0,
        reason="wrk or h2load is missing and only root can install them: "
        "sudo apt-get install wrk nghttp2-client",
    ),
    # The suite's own per-test limit (pyproject) is shorter than a tiny run may take on a slow
    # machine; the run's own timeout stops it first, with its output.
    pytest.mark.timeout(RUN_TIMEOUT_SECONDS + 120),
]


@pytest.fixture
def bench_postgres_dir() -> Iterator[Path]:
    """Where the harness keeps its own PostgreSQL cluster for this test, removed afterwards
    (under the project, not a temporary directory: the postgres user must reach it)."""
    home = ROOT / ".run" / f"bench-pg-ci{os.environ.get('TEST_DB_SUFFIX', '')}"
    yield home
    bindir = pg_bindir()
    # The run stops its cluster on the way out; one killed by the timeout could not.
    if bindir is not None and (home / "data" / "postmaster.pid").exists():
        pg_cluster_stop(home / "data", bindir=bindir)
    shutil.rmtree(home, ignore_errors=True)


def _run_tiny(
    *, results_dir: Path, postgres_dir: Path, prefix: str, module: str = "bench.run"
) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        module,
        "--players",
        str(PLAYERS),
        "--tiny",
        "--results-dir",
        str(results_dir),
        "--postgres-dir",
        str(postgres_dir),
        "--key-prefix",
        f"{prefix}lb:",
        "--broker-db",
        # Two checkouts' suites on one machine each name their own (TEST_BROKER_DB), or their
        # workers would take each other's mirror tasks.
        os.environ.get("TEST_BROKER_DB", "14"),
    ]
    # Its own session, so a run that overstays is stopped with everything it started (servers,
    # workers, load generators), not only the harness, whose children would outlive the test.
    with subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as harness:
        try:
            stdout, stderr = harness.communicate(timeout=RUN_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(harness.pid, signal.SIGKILL)
            stdout, stderr = harness.communicate()
            pytest.fail(
                f"the tiny run took over {RUN_TIMEOUT_SECONDS} s:\n{stdout[-4000:]}{stderr[-4000:]}"
            )
    return subprocess.CompletedProcess(command, harness.returncode, stdout, stderr)


def _sane_latency(figures: dict) -> None:
    assert figures["samples"] > 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"]


def _sane_http(figures: dict) -> None:
    assert figures["requests"] > 0
    assert figures["requests_per_s"] > 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    assert figures["ratio_to_ceiling"] > 0
    assert figures["cpu_cores"]["web"] > 0


def _check_sections(results: dict) -> None:
    assert results["players"] == PLAYERS
    assert results["machine"]["cores"] > 0
    assert results["machine"]["postgresql"]["server_version"]
    assert results["machine"]["redis"]["version"]

    load = results["load"]
    assert (load["players"], load["results"], load["totals"]) == (PLAYERS, PLAYERS, PLAYERS)
    assert load["totals_equal_results"] is True
    assert results["rebuild"]["players"] == results["rebuild"]["zcard"] == PLAYERS
    assert results["rebuild"]["players_per_s"] > 0
    assert results["memory"]["zcard"] == PLAYERS
    assert results["memory"]["bytes_per_player"] > 0
    assert results["memory"]["projected_gib"] > 0
    directory = results["memory"]["profile_directory"]
    assert directory["players"] == directory["filed"] == PLAYERS
    assert directory["bytes_per_player"] > 0

    rank = results["rank"]
    for path in ("zrevrank", "gateway_read_rank", "postgres_count"):
        _sane_latency(rank[path])
    assert rank["zrevrank"]["missing_of_first_100"] == 0
    assert rank["zrevrank_vs_postgres"]["p50"] > 0

    assert set(results["http"]["reference"]) == {"bare_asgi"}
    bare = results["http"]["reference"]["bare_asgi"]
    assert bare["requests"] > 0
    assert 0 < bare["p50_ms"] <= bare["p99_ms"]
    assert bare["cpu_cores"]["web"] > 0
    assert set(results["http"]["cached"]) == {"ping", "rank", "top100", "around", "friends"}
    assert set(results["http"]["uncached"]) == {"ping", "top100", "around"}
    for server in ("cached", "uncached"):
        for figures in results["http"][server].values():
            _sane_http(figures)
            assert figures["ratio_to_bare_asgi"] == pytest.approx(
                figures["requests_per_s"] / bare["requests_per_s"], abs=0.001
            )
            # The public rate limit is on but never reached: nothing is refused.
            assert figures["errors"]["status"] == 0
            assert ("open_loop" in figures) is (server == "cached")
    for figures in results["http"]["cached"].values():
        assert set(figures["open_loop"]) == {"50", "70"}
        for share, run in figures["open_loop"].items():
            _sane_open_read(run, offered=figures["requests_per_s"] * int(share) / 100)

    settings = results["machine"]["postgresql"]["settings"]
    assert "pg_stat_statements" in settings["shared_preload_libraries"]
    assert (settings["fsync"], settings["synchronous_commit"]) == ("on", "on")

    for mode in ("single", "batch"):
        ingest = results["ingest"][mode]
        assert ingest["accepted_results"] > 0
        assert ingest["accepted_results_per_s"] > 0
        assert ingest["per_second"]
        _sane_latency(ingest["freshness"]["freshness"])
        _sane_ingest(ingest)

    opened = results["open_loop"]
    for mode, batch in (("batch", 100), ("single", 1)):
        _sane_open_loop(opened[mode], batch)
    search = opened["search"]
    assert len(search["steps"]) == 1
    assert search["direction"] in ("up", "down")
    _sane_open_loop(search["steps"][0], 100)
    assert search["highest_sustained_rate"] >= 0

    peak = results["peak"]
    assert peak["sockets"] == 50
    assert peak["snapshots"] == 50
    assert peak["sockets_closed_by_server"] == 0
    assert len(peak["steps"]) in (1, 2)
    assert peak["steps"][0]["read_rate"] == 200
    for step in peak["steps"]:
        assert step["met"] is all(step["verdicts"].values())
        assert step["reads"]["requests"] > 0
        assert step["reads"]["throttled_429"] == 0
        pushes = step["pushes"]
        assert pushes["posted"] > 0
        assert 0 < pushes["pushed"] <= pushes["posted"]
        # A tiny run on a small box is overloaded at 6,000 results/s: pushes may come late.
        assert pushes["superseded"] + pushes["lost"] <= pushes["posted"]
        _sane_open_loop(step["writes"], 100)
    met = [step["read_rate"] for step in peak["steps"] if step["met"]]
    assert peak["highest_read_rate_met"] == max(met, default=0)
    # Before the search: the pushes alone, then beside the writes alone.
    idle, alone = peak["idle"], peak["writes_alone"]
    assert (idle["read_rate"], idle["write_rate"], idle["reads"]) == (0, 0, {})
    assert set(idle["verdicts"]) == {"push_p99", "nothing_lost"}
    assert idle["writes"]["cpu_cores"]["web"] > 0
    assert idle["pushes"]["pushed"] > 0 and idle["messages"]["by_type"]["player"] > 0
    assert (alone["read_rate"], alone["write_rate"], alone["reads"]) == (0, 6000, {})
    assert "read_p99" not in alone["verdicts"] and "freshness" in alone["verdicts"]
    _sane_open_loop(alone["writes"], 100)
    for step in (idle, alone):
        assert step["met"] is all(step["verdicts"].values())
        assert step["sockets_closed_by_server"] == 0
    assert peak["web_rss_with_sockets_mib"] > peak["web_rss_before_mib"] > 0
    assert peak["web_memory_per_socket_kib"] > 0
    # The probe's climbs to first place cross the thresholds: `threshold` on the climbers'
    # sockets, and `player.threshold` events owed to both endpoints, the dead one too.
    heard = Counter()
    for step in (idle, alone, *peak["steps"]):
        heard.update(step["messages"]["by_type"])
    assert heard["threshold"] > 0
    hooks = peak["webhooks"]
    assert hooks["events_by_type"].get("player.threshold", 0) > 0
    assert {fate.split()[0] for fate in hooks["deliveries"]} == {"up", "down"}

    assert len(results["targets"]) == 20
    names = {t["name"] for t in results["targets"]}
    assert {
        "Rank: throughput vs the bare ASGI app",
        "Rank: throughput vs the ping ceiling",
        "Rank at 70% of its maximum rate (open loop): p99",
        "Rank at 70% of its maximum rate (open loop): p99.9",
    } <= names
    assert {t["status"] for t in results["targets"]} <= {"PASS", "MISS"}


def _sane_open_read(run: dict, *, offered: float) -> None:
    """One fixed-rate read run: offered what was asked, answered, percentiles in order."""
    assert run["offered_per_s"] == pytest.approx(offered, abs=0.1)
    assert run["requests"] > 0
    assert run["achieved_per_s"] > 0
    assert 0 < run["p50_ms"] <= run["p90_ms"] <= run["p99_ms"] <= run["p999_ms"]
    assert run["p999_ms"] <= run["max_ms"]
    assert run["throttled_429"] == 0
    assert sum(run["statuses"].values()) >= run["requests"]
    assert run["connections"] == run["loaders"] * CONNECTIONS_PER_LOADER
    assert run["cpu_cores"]["web"] > 0


def _sane_ingest(ingest: dict) -> None:
    """What every ingest phase reports: consistency, PostgreSQL's side, CPU by part."""
    assert ingest["consistency_after_drain"]["checked"] > 0
    assert ingest["consistency_after_drain"]["mismatched"] == 0
    pg = ingest["postgres"]
    assert pg["results"] > 0
    assert pg["statements_per_result"] > 0
    assert pg["top_statements"]
    assert all(t["calls"] > 0 and t["mean_ms"] >= 0 for t in pg["top_statements"])
    assert pg["commits_per_result"] > 0
    assert pg["wal_bytes_per_result"] > 0
    assert 0 < pg["buffer_hit_ratio"] <= 1
    cpu = ingest["cpu_cores"]
    assert cpu["web"] > 0
    assert cpu["postgres"] > 0


def _sane_open_loop(figures: dict, batch: int) -> None:
    assert figures["batch_size"] == batch
    sender = figures["sender"]
    assert sender["offered_requests"] > 0
    assert sender["sent"] + sender["not_sent_on_time"] == sender["offered_requests"]
    assert figures["offered_results"] == sender["offered_requests"] * batch
    assert figures["accepted_results"] > 0
    assert 0 < figures["accepted_share"] <= 1
    _sane_latency(sender["post_latency"])
    for window in ("freshness_window", "freshness_first", "freshness_last"):
        _sane_latency(figures[window])
    _sane_ingest(figures)


# One run checked from every side: the tiny harness takes about a minute, so it runs once (and
# on one xdist worker only), not once per assertion.
def test_tiny_run_writes_every_section_and_cleans_up(tmp_path, bench_postgres_dir):
    prefix = f"benchtest:{uuid.uuid4().hex[:8]}:"

    run = _run_tiny(results_dir=tmp_path, postgres_dir=bench_postgres_dir, prefix=prefix)

    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    _check_sections(results)
    summary = (tmp_path / "latest.md").read_text()
    for heading in (
        "## Targets",
        "## What's my rank?",
        "## Read endpoints at a fixed offered rate (open loop, top cache 1 s)",
        "## Ingest at a fixed rate (open loop)",
        "## Highest rate kept up with (batches of 100)",
        "## PostgreSQL's side of ingest",
        "## The peak at once",
    ):
        assert heading in summary
    assert "| pushes alone |" in summary and "| writes, no reads |" in summary
    if importlib.util.find_spec("matplotlib") is not None:
        assert {"latency.png", "ingest.png", "throughput.png"} <= set(results["charts"])
        assert all((tmp_path / name).stat().st_size > 0 for name in results["charts"])
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    assert list(client.scan_iter(match=f"{prefix}*", count=1000)) == []
    assert not (bench_postgres_dir / "data" / "postmaster.pid").exists()


def test_operator_paths_are_timed_on_a_season_of_the_benchs_own(tmp_path, bench_postgres_dir):
    prefix = f"benchtest:{uuid.uuid4().hex[:8]}:"

    run = _run_tiny(
        results_dir=tmp_path,
        postgres_dir=bench_postgres_dir,
        prefix=prefix,
        module="bench.operations",
    )

    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    results = json.loads((tmp_path / f"operations-{PLAYERS}.json").read_text())
    pages = {**results["admin_open_season"], **results["admin_closed_season"]}
    assert len(pages) == 13
    assert {page["status"] for page in pages.values()} == {200}
    assert all(0 < page["best_s"] <= page["first_s"] for page in pages.values())
    assert results["reconciliation"]["runs_for_a_full_walk"] == 1
    assert results["reconciliation"]["checked"] == PLAYERS
    assert results["reconciliation"]["drift"] == 0
    # the walk's page was named in the directory first, as in service
    assert results["reconciliation"]["names_filed_first"] == PLAYERS
    assert results["close"]["state"] == "closed"
    assert results["close"]["archived"] == PLAYERS
    assert results["export_csv"]["rows"] == results["export_parquet"]["rows"] == PLAYERS
    assert (
        "| close (snapshot, archive, rewards) |" in (tmp_path / "operations-latest.md").read_text()
    )
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    assert list(client.scan_iter(match=f"{prefix}*", count=1000)) == []
    assert not (bench_postgres_dir / "data" / "postmaster.pid").exists()
