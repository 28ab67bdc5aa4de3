"""A run's results: ratios and targets derived from the figures, then the JSON, the Markdown
summary, the charts, and (for real runs into bench/results) the summary in bench/README.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .charts import charts_write
from .environment import BenchEnvironment
from .options import RESULTS, ROOT, Options

TARGET_PLAYERS = 10_000_000
README = ROOT / "bench" / "README.md"
README_START = "<!-- latest-summary:start -->"
README_END = "<!-- latest-summary:end -->"
# Cores used by processes outside the benchmark above which a run is flagged as noisy.
NOISY_CORES = 0.25
CPU_PARTS = ("web", "worker", "redis", "postgres", "wrk", "harness", "other", "machine_busy")


def config_facts(options: Options, env: BenchEnvironment) -> dict[str, Any]:
    return {
        "players": options.players,
        "tiny": options.tiny,
        "read_seconds": options.read_seconds,
        "warmup_seconds": options.warmup_seconds,
        "ingest_seconds": options.ingest_seconds,
        "connections": options.connections,
        "threads": options.threads,
        "ingest_connections": options.ingest_connections,
        "web_workers": options.web_workers,
        "worker_concurrency": options.worker_concurrency,
        "probe_rate_per_s": options.probe_rate,
        "probe_players": options.probe_players,
        "database": env.database,
        "key_prefix": env.key_prefix,
        "cache_prefix": env.cache_prefix,
        "broker_url": env.broker_url,
        "seed": options.seed,
    }


def _get(data: dict[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _target(
    name: str,
    value: float | None,
    goal: float,
    *,
    higher_is_better: bool,
    unit: str,
    failed: float = 0.0,
) -> dict[str, Any]:
    """The verdict on one target; `failed` is the share of the phase's requests that failed,
    which makes a throughput figure suspect (fast errors count as requests)."""
    target: dict[str, Any] = {
        "name": name,
        "value": None if value is None else round(value, 3),
        "goal": goal,
        "unit": unit,
        "higher_is_better": higher_is_better,
    }
    if value is None:
        return {**target, "status": "NO DATA", "margin_pct": None, "verdict": "no data"}
    if higher_is_better:
        passed = value >= goal
        margin = (value / goal - 1) * 100
        verdict = (
            f"{margin:+.0f}% over the target"
            if passed
            else f"short by {-margin:.0f}% (needs {goal / value:.2f}x)"
            if value > 0
            else "zero"
        )
    else:
        passed = value <= goal
        margin = (1 - value / goal) * 100
        verdict = (
            f"{margin:.0f}% under the limit"
            if passed
            else f"over by {-margin:.0f}% ({value / goal:.2f}x the limit)"
        )
    if failed > 0.001:
        verdict += f"; {failed:.1%} of the requests failed"
    return {
        **target,
        "status": "PASS" if passed else "MISS",
        "margin_pct": round(margin, 1),
        "verdict": verdict,
    }


def _failed_share(figures: dict[str, Any] | None) -> float:
    if not figures or not figures.get("requests"):
        return 0.0
    return sum((figures.get("errors") or {}).values()) / figures["requests"]


def derive(results: dict[str, Any]) -> None:
    """Add every ratio and the verdict on each target of the issue to the results."""
    for endpoints in (results.get("http") or {}).values():
        ceiling = _get(endpoints, "ping", "requests_per_s")
        for figures in endpoints.values():
            if ceiling:
                figures["ratio_to_ceiling"] = round(figures["requests_per_s"] / ceiling, 3)
    rank = results.get("rank") or {}
    redis_p50 = _get(rank, "zrevrank", "p50_ms")
    pg_p50 = _get(rank, "postgres_count", "p50_ms")
    if redis_p50 and pg_p50:
        rank["zrevrank_vs_postgres"] = {
            "p50": round(pg_p50 / redis_p50, 1),
            "p99": round(
                _get(rank, "postgres_count", "p99_ms") / _get(rank, "zrevrank", "p99_ms"), 1
            ),
            "mean": round(
                _get(rank, "postgres_count", "mean_ms") / _get(rank, "zrevrank", "mean_ms"), 1
            ),
        }
    others = [cpu.get("other", 0.0) for _, cpu in _cpu_rows(results)]
    if others:
        results["noise"] = {
            "other_cores_mean": round(sum(others) / len(others), 3),
            "other_cores_max": round(max(others), 3),
        }
    ratio = _get(results, "http", "cached", "rank", "ratio_to_ceiling")
    rank_failed = _failed_share(_get(results, "http", "cached", "rank"))
    batch_failed = _failed_share(_get(results, "ingest", "batch", "requests"))
    results["targets"] = [
        _target(
            "Rank via API: throughput vs the ping ceiling",
            None if ratio is None else ratio * 100,
            70,
            higher_is_better=True,
            unit="%",
            failed=rank_failed,
        ),
        _target(
            "Rank via API: p99 latency",
            _get(results, "http", "cached", "rank", "p99_ms"),
            20,
            higher_is_better=False,
            unit="ms",
            failed=rank_failed,
        ),
        _target(
            "Raw ZREVRANK vs PostgreSQL count (p50)",
            _get(rank, "zrevrank_vs_postgres", "p50"),
            1000,
            higher_is_better=True,
            unit="x",
        ),
        _target(
            "Ingest through batches of 100",
            _get(results, "ingest", "batch", "accepted_results_per_s"),
            6000,
            higher_is_better=True,
            unit="results/s",
            failed=batch_failed,
        ),
        _target(
            "Freshness p99 under batch ingest",
            _get(results, "ingest", "batch", "freshness", "freshness", "p99_ms"),
            1000,
            higher_is_better=False,
            unit="ms",
        ),
        _target(
            "Redis memory per player",
            _get(results, "memory", "bytes_per_player"),
            100,
            higher_is_better=False,
            unit="bytes",
        ),
        _target(
            "Rebuild from PostgreSQL",
            _get(results, "rebuild", "players_per_s"),
            200_000,
            higher_is_better=True,
            unit="players/s",
        ),
    ]


def report_write(results: dict[str, Any], options: Options) -> list[Path]:
    derive(results)
    out = options.results_dir
    out.mkdir(parents=True, exist_ok=True)
    written = []
    charts: list[Path] = []
    if options.charts:
        try:
            charts = charts_write(results, out)
        except Exception as exc:  # noqa: BLE001 - charts never cost a run its figures
            results.setdefault("errors", []).append({"phase": "charts", "error": repr(exc)})
    results["charts"] = [path.name for path in charts]
    text = json.dumps(results, indent=2, default=str)
    stamped = out / f"{results['run']}-{results['players']}.json"
    for path in (stamped, out / "latest.json"):
        path.write_text(text + "\n")
        written.append(path)
    summary = out / "latest.md"
    summary.write_text(markdown(results, images=""))
    written += [summary, *charts]
    if out.resolve() == RESULTS.resolve() and not options.tiny and README.exists():
        readme_update(markdown(results, images="results/", heading_level=3))
        written.append(README)
    return written


def readme_update(summary: str) -> None:
    text = README.read_text()
    pattern = re.compile(re.escape(README_START) + ".*?" + re.escape(README_END), re.S)
    block = f"{README_START}\n{summary}\n{README_END}"
    if pattern.search(text):
        README.write_text(pattern.sub(lambda _: block, text))


# --- Markdown --------------------------------------------------------------------------------


def _n(value: Any, digits: int = 0) -> str:
    if value is None:
        return "–"
    if isinstance(value, int | float):
        return f"{value:,.{digits}f}"
    return str(value)


def _ms(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value < 1 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _value(target: dict[str, Any]) -> str:
    if target["value"] is None:
        return "–"
    digits = 0 if target["unit"] in ("results/s", "players/s", "x", "%") else 1
    return f"{_n(target['value'], digits)} {target['unit']}"


def _machine_line(results: dict[str, Any]) -> str:
    m = results.get("machine") or {}
    packages = m.get("packages") or {}
    git = m.get("git") or {}
    commit = (git.get("commit") or "unknown")[:10] + (
        " (uncommitted changes)" if git.get("dirty") else ""
    )
    return (
        f"{m.get('cores')} cores ({m.get('cpu_model')}), {m.get('memory_gib')} GiB, {m.get('os')}; "
        f"Python {m.get('python')}, Django {packages.get('Django')}, "
        f"Redis {_get(m, 'redis', 'version')}, "
        f"PostgreSQL {_get(m, 'postgresql', 'server_version')}, "
        f"{m.get('wrk', '').split(' [')[0]}; a one-row PostgreSQL commit takes "
        f"{_get(m, 'postgresql', 'one_row_commit_ms', 'p50')} ms (p50); commit {commit}; "
        f"load average at start {', '.join(str(v) for v in m.get('load_average_at_start', []))}"
    )


def markdown(results: dict[str, Any], *, images: str, heading_level: int = 1) -> str:
    h = "#" * heading_level
    c = results.get("config") or {}
    lines = [
        f"{h} Benchmark: {results['players']:,} players "
        f"({results.get('mode')} run {results['run']})",
        "",
        f"Machine: {_machine_line(results)}.",
        "",
        f"Load: wrk {c.get('threads')} threads x {c.get('connections')} connections on reads "
        f"({_n(c.get('read_seconds'), 0)} s each after {_n(c.get('warmup_seconds'), 0)} s of "
        f"warm-up), {c.get('ingest_connections')} connections on writes "
        f"({_n(c.get('ingest_seconds'), 0)} s per mode); uvicorn {c.get('web_workers')} workers, "
        f"Celery concurrency {c.get('worker_concurrency')}; every process on this one machine. "
        f"Whole run: {_n(results.get('seconds'), 0)} s.",
        "",
    ]
    if results["players"] < TARGET_PLAYERS:
        lines += [
            f"> The targets are set at {TARGET_PLAYERS:,} players; at {results['players']:,} "
            "the verdicts below are indicative only.",
            "",
        ]
    noise = results.get("noise") or {}
    if noise.get("other_cores_mean", 0) > NOISY_CORES:
        lines += [
            f"> **Noisy machine**: processes outside the benchmark used "
            f"{noise['other_cores_mean']:.2f} cores on average during the measured phases (up to "
            f"{noise['other_cores_max']:.2f}); the figures are lower than this machine can do. "
            "See the CPU table.",
            "",
        ]
    if results.get("interrupted"):
        lines += ["> **Interrupted**: figures are partial.", ""]
    lines += _targets_section(results, h)
    lines += _rank_section(results, h)
    lines += _http_section(results, h)
    lines += _ingest_section(results, h)
    lines += _memory_rebuild_section(results, h)
    lines += _cpu_section(results, h)
    lines += _profile_section(results, h)
    if results.get("charts"):
        lines += [f"{h}# Charts", ""]
        lines += [f"![{name}]({images}{name})" for name in results["charts"]]
        lines.append("")
    if results.get("errors"):
        lines += [f"{h}# Errors", ""]
        lines += [f"- {e['phase']}: {e['error']}" for e in results["errors"]]
        lines.append("")
    return "\n".join(lines)


def _targets_section(results: dict[str, Any], h: str) -> list[str]:
    lines = [f"{h}# Targets", "", "| Target | Measured | Goal | Result |", "|---|---:|---:|---|"]
    for t in results.get("targets", []):
        goal = f"{'>=' if t['higher_is_better'] else '<='} {_n(t['goal'])} {t['unit']}"
        lines.append(f"| {t['name']} | {_value(t)} | {goal} | **{t['status']}**, {t['verdict']} |")
    return [*lines, "", *_misses_section(results)]


# Where to look when a target is missed: the phase's CPU figures and its profile.
_TARGET_PHASES = {
    "Rank via API: throughput vs the ping ceiling": (("http", "cached", "rank"), "rank"),
    "Rank via API: p99 latency": (("http", "cached", "rank"), "rank"),
    "Ingest through batches of 100": (("ingest", "batch"), "ingest_batch"),
    "Freshness p99 under batch ingest": (("ingest", "batch"), "ingest_batch"),
}
_TARGET_NOTES = {
    "Raw ZREVRANK vs PostgreSQL count (p50)": (
        "the count reads about N/2 index entries per query while ZREVRANK is O(log N), so the "
        "ratio grows with N; judge it at 10 million players"
    ),
    "Redis memory per player": (
        "a sorted set costs a dict entry, a skiplist node and the member string per player; "
        "the figure depends on the ids' length and on the dict's fill (it doubles in steps)"
    ),
}


def _misses_section(results: dict[str, Any]) -> list[str]:
    lines = []
    for target in results.get("targets", []):
        if target["status"] != "MISS":
            continue
        notes = []
        path, profile = _TARGET_PHASES.get(target["name"], (None, None))
        cpu = (_get(results, *path) or {}).get("cpu_cores") if path else None
        if cpu:
            parts = ", ".join(
                f"{name.replace('machine_busy', 'busy')} {cpu.get(name, 0):.2f}"
                for name in CPU_PARTS
                if cpu.get(name, 0) >= 0.05
            )
            notes.append(f"CPU in cores during the phase: {parts}")
        for part, summary in ((results.get("profiles") or {}).get(profile) or {}).items():
            if isinstance(summary, dict) and summary.get("samples"):
                top = ", ".join(
                    f"`{name}` {pct}%" for name, pct in summary["app_functions_inclusive_pct"][:3]
                )
                notes.append(f"{part} profile: {top}")
        if target["name"] in _TARGET_NOTES:
            notes.append(_TARGET_NOTES[target["name"]])
        if notes:
            lines.append(f"- {target['name']}: " + "; ".join(notes) + ".")
    return [*lines, ""] if lines else []


def _rank_section(results: dict[str, Any], h: str) -> list[str]:
    rank = results.get("rank") or {}
    api = _get(results, "http", "cached", "rank") or {}
    z = rank.get("zrevrank") or {}
    lua = rank.get("gateway_read_rank") or {}
    pg = rank.get("postgres_count") or {}
    ratio = rank.get("zrevrank_vs_postgres") or {}
    c = results.get("config") or {}
    lines = [
        f"{h}# What's my rank?",
        "",
        "| Path | Throughput | p50 ms | p99 ms | Note |",
        "|---|---:|---:|---:|---|",
        f"| API `GET /api/v1/leaderboard/players/{{id}}` (wrk, {c.get('connections')} connections)"
        f" | {_n(api.get('requests_per_s'))} req/s | {_ms(api.get('p50_ms'))} | "
        f"{_ms(api.get('p99_ms'))} | {_n((api.get('ratio_to_ceiling') or 0) * 100)}% of the ping "
        "ceiling |",
        f"| Gateway Lua `store.read_rank` (redis-py, one client) | – | {_ms(lua.get('p50_ms'))} | "
        f"{_ms(lua.get('p99_ms'))} | ZREVRANK + ZCARD + ZSCORE + ZCOUNT in one script |",
        f"| Raw `ZREVRANK` (redis-py, one client) | {_n(z.get('ops_per_s_one_client'))} ops/s | "
        f"{_ms(z.get('p50_ms'))} | {_ms(z.get('p99_ms'))} | {_n(z.get('samples'))} samples |",
        f"| PostgreSQL `count(*) + 1 ... points > x` | – | {_ms(pg.get('p50_ms'))} | "
        f"{_ms(pg.get('p99_ms'))} | {_n(pg.get('samples'))} samples; plan: {pg.get('plan', '–')} |",
        "",
        f"Raw ZREVRANK is **{_n(ratio.get('p50'))}x** faster than the PostgreSQL count at p50 "
        f"({_n(ratio.get('p99'))}x at p99, {_n(ratio.get('mean'))}x on the mean). Both are one "
        "client's round trips on loopback; the index is a B-tree on (season_id, points), built "
        f"in {_n(pg.get('index_build_seconds'), 1)} s and vacuumed so the count is index-only.",
        "",
    ]
    return lines


def _http_section(results: dict[str, Any], h: str) -> list[str]:
    lines = [
        f"{h}# Read endpoints against the framework ceiling",
        "",
        'The ceiling is `GET /api/v1/ping`, a DRF view that returns `{"ok": true}`, served by '
        "the same server the same way. A server with `LEADERBOARD_TOP_CACHE_SECONDS=1` and one "
        "with `0` were started in turn; each endpoint's ratio is to that server's own ping.",
        "",
        "| Endpoint | Top cache | req/s | % of ceiling | p50 ms | p99 ms | max ms | errors "
        "| PG sessions opened | PG connections after |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for server, endpoints in (results.get("http") or {}).items():
        for name, f in endpoints.items():
            errors = sum((f.get("errors") or {}).values())
            lines.append(
                f"| {name} | {'1 s' if server == 'cached' else 'off'} | "
                f"{_n(f.get('requests_per_s'))} | {_n((f.get('ratio_to_ceiling') or 0) * 100)}% | "
                f"{_ms(f.get('p50_ms'))} | {_ms(f.get('p99_ms'))} | {_ms(f.get('max_ms'))} | "
                f"{errors} | {_n(f.get('database_sessions_opened'))} | "
                f"{f.get('database_connections_after', '–')} |"
            )
    return [*lines, ""]


def _ingest_section(results: dict[str, Any], h: str) -> list[str]:
    lines = [
        f"{h}# Ingest: HTTP, PostgreSQL commit, Celery mirror",
        "",
        "| Mode | Accepted results/s | Requests/s | POST p50 ms | POST p99 ms | Freshness p50 ms "
        "| p99 ms | max ms | Probes (lost) | Backlog at stop | Drained in | Redis = PostgreSQL "
        "| PG sessions opened |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for mode, f in (results.get("ingest") or {}).items():
        fresh = _get(f, "freshness", "freshness") or {}
        backlog = _get(f, "mirror", "backlog_when_load_stopped") or {}
        consistency = f.get("consistency_after_drain") or {}
        lines.append(
            f"| {mode} ({f.get('batch_size')} a request) | "
            f"**{_n(f.get('accepted_results_per_s'))}** | "
            f"{_n(_get(f, 'requests', 'requests_per_s'))} | {_ms(_get(f, 'requests', 'p50_ms'))} | "
            f"{_ms(_get(f, 'requests', 'p99_ms'))} | {_ms(fresh.get('p50_ms'))} | "
            f"{_ms(fresh.get('p99_ms'))} | {_ms(fresh.get('max_ms'))} | "
            f"{_n(fresh.get('samples'))} ({_get(f, 'freshness', 'lost')}) | "
            f"{_n(backlog.get('unmirrored_totals'))} totals, {_n(backlog.get('queued_tasks'))} "
            f"tasks | {_drained(f.get('mirror') or {})} | "
            f"{consistency.get('checked', 0) - consistency.get('mismatched', 0)}"
            f"/{consistency.get('checked', 0)} | {_n(f.get('database_sessions_opened'))} |"
        )
    lines += [
        "",
        "Accepted results are counted in PostgreSQL (rows received in the window), freshness by "
        "a probe that posts single results for players wrk never writes and polls ZMSCORE every "
        "5 ms after each 201 until the new total shows.",
        "",
    ]
    return lines


def _drained(mirror: dict[str, Any]) -> str:
    if mirror.get("drained"):
        return f"{mirror.get('drain_seconds')} s"
    left = mirror.get("backlog_left") or {}
    return (
        f"no: {_n(left.get('unmirrored_totals'))} totals still unmirrored after "
        f"{mirror.get('drain_seconds')} s (failed mirror tasks; the sweep is not run here)"
    )


def _memory_rebuild_section(results: dict[str, Any], h: str) -> list[str]:
    m = results.get("memory") or {}
    r = results.get("rebuild") or {}
    load = results.get("load") or {}
    return [
        f"{h}# Memory, rebuild, load",
        "",
        f"- Memory: `{m.get('key')}` holds {_n(m.get('zcard'))} players ({m.get('encoding')}); "
        f"MEMORY USAGE (every element) {_n(m.get('memory_usage_bytes'))} bytes = "
        f"**{_n(m.get('bytes_per_player'), 1)} bytes a player**; 100 million players would take "
        f"{_n(m.get('projected_gib'), 1)} GiB. Members are ids like `{m.get('member_example')}`; "
        "longer ids cost more.",
        f"- Rebuild (`leaderboards.services.season_rebuild_standings`): {_n(r.get('players'))} "
        f"players in {r.get('seconds')} s = **{_n(r.get('players_per_s'))} players/s**.",
        f"- Load: COPY of {_n(load.get('players'))} players, results and totals in "
        f"{load.get('copy_seconds')} s ({_n(load.get('rows_per_s'))} rows/s); "
        f"{load.get('seconds_with_vacuum_analyze')} s with VACUUM ANALYZE; totals equal the sum "
        f"of results: {load.get('totals_equal_results')}. {load.get('score_distribution', '')}.",
        "",
    ]


def _cpu_rows(results: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
    rows = []
    for server, endpoints in (results.get("http") or {}).items():
        for name, f in endpoints.items():
            if f.get("cpu_cores"):
                cache = "top cache 1 s" if server == "cached" else "top cache off"
                rows.append((f"{name} ({cache})", f["cpu_cores"]))
    for mode, f in (results.get("ingest") or {}).items():
        if f.get("cpu_cores"):
            rows.append((f"ingest {mode}", f["cpu_cores"]))
    return rows


def _cpu_section(results: dict[str, Any], h: str) -> list[str]:
    rows = _cpu_rows(results)
    if not rows:
        return []
    cores = _get(results, "machine", "cores")
    lines = [
        f"{h}# Where the time goes",
        "",
        f"CPU during each measured phase, in cores (this machine has {cores}); `other` is "
        "everything else on the machine, `busy` the machine as a whole.",
        "",
        "| Phase | " + " | ".join(p.replace("machine_busy", "busy") for p in CPU_PARTS) + " |",
        "|---|" + "---:|" * len(CPU_PARTS),
    ]
    for name, cpu in rows:
        lines.append(f"| {name} | " + " | ".join(f"{cpu.get(p, 0):.2f}" for p in CPU_PARTS) + " |")
    return [*lines, ""]


def _profile_section(results: dict[str, Any], h: str) -> list[str]:
    profiles = results.get("profiles") or {}
    if not profiles:
        return []
    lines = [
        f"{h}# Profiles (py-spy, sampled while wrk repeated the phase)",
        "",
    ]
    for label, parts in profiles.items():
        if isinstance(parts, str):
            lines += [f"- {label}: {parts}", ""]
            continue
        if "error" in parts:
            lines += [f"- {label}: {parts['error']}", ""]
            continue
        for part, p in parts.items():
            if not p.get("samples"):
                continue
            packages = ", ".join(f"{name} {pct}%" for name, pct in p["self_by_package_pct"][:8])
            app = ", ".join(
                f"`{name}` {pct}%" for name, pct in p["app_functions_inclusive_pct"][:6]
            )
            hot = ", ".join(f"`{name}` {pct}%" for name, pct in p["self_top_frames_pct"][:5])
            lines += [
                f"- **{label}, {part}** ({_n(p['samples'])} samples). Self time by package: "
                f"{packages}. Project functions (inclusive): {app}. Hottest frames: {hot}.",
            ]
        lines.append("")
    return lines
