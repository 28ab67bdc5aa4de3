"""A run's results: ratios and targets derived from the figures, then the JSON, the Markdown
summary, the charts, and (for real runs into bench/results) the summary in bench/README.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .charts import charts_write
from .environment import PUBLIC_RATE_NEVER_REACHED, BenchEnvironment
from .ingest import EDGE_SECONDS, SUSTAINED_FRESHNESS_P99_MS, SUSTAINED_SHARE
from .options import RESULTS, ROOT, Options

TARGET_PLAYERS = 10_000_000
README = ROOT / "bench" / "README.md"
README_START = "<!-- latest-summary:start -->"
README_END = "<!-- latest-summary:end -->"
# Cores used by processes outside the benchmark above which a run is flagged as noisy.
NOISY_CORES = 0.25
CPU_PARTS = ("web", "worker", "redis", "postgres", "wrk", "harness", "other", "machine_busy")
# The open-loop targets: a search that reaches this rate, single results this fresh, and a last
# stretch of the main phase no worse than this many times its first, or this many ms more, which
# ever is larger: a backlog that grows shows as seconds by the end of a minute, while a p99 of tens
# of milliseconds moves by tens between stretches (one coalescing window is 50 ms).
SEARCH_GOAL = 8000
SINGLE_FRESHNESS_P99_MS = 250
GROWTH_LIMIT = 1.5
GROWTH_SLACK_MS = 100
# Where a miss of an open-loop target at the main rate is explained: its CPU and the profile of
# batch ingest.
MAIN_PHASE = (("open_loop", "batch"), "ingest_batch")
# Below this share of the offered rate answered, an open-loop latency figure is flagged: the
# schedule was not kept, so some of the load was never measured.
OPEN_READ_ANSWERED_SHARE = 0.99
# The PostgreSQL settings the summary quotes (all of them are in the JSON).
QUOTED_SETTINGS = (
    "shared_buffers",
    "effective_cache_size",
    "max_wal_size",
    "checkpoint_timeout",
    "wal_compression",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "autovacuum_vacuum_scale_factor",
)


def config_facts(options: Options, env: BenchEnvironment) -> dict[str, Any]:
    return {
        "players": options.players,
        "tiny": options.tiny,
        "read_seconds": options.read_seconds,
        "warmup_seconds": options.warmup_seconds,
        "openread_seconds": options.openread_seconds,
        "openread_connections": options.openread_connections,
        "stacks_seconds": options.stacks_seconds,
        "ingest_seconds": options.ingest_seconds,
        "connections": options.connections,
        "threads": options.threads,
        "ingest_connections": options.ingest_connections,
        "web_workers": options.web_workers,
        "worker_concurrency": options.worker_concurrency,
        "probe_rate_per_s": options.probe_rate,
        "probe_players": options.probe_players,
        "open_rate": options.open_rate,
        "open_seconds": options.open_seconds,
        "search_seconds": options.search_seconds,
        "search_steps": options.search_steps or None,
        "single_rate": options.single_rate,
        "senders": options.senders,
        "drain_seconds": options.drain_seconds,
        "database": env.database,
        "database_server": "the bench's own cluster" if env.cluster else "--database-url",
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
    digits: int | None = None,
    phase: tuple[tuple[str, ...], str] | None = None,
) -> dict[str, Any]:
    """The verdict on one target; `failed` is the share of the phase's requests that failed,
    which makes a throughput figure suspect (fast errors count as requests); `digits` is how
    the summary prints the value and the goal; `phase` where a miss is explained (the path of
    its figures, the label of its profile)."""
    target: dict[str, Any] = {
        "name": name,
        "value": None if value is None else round(value, 3),
        "goal": goal,
        "unit": unit,
        "higher_is_better": higher_is_better,
        "digits": digits,
        "phase": phase,
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
    bare = _get(results, "http", "reference", "bare_asgi", "requests_per_s")
    for server, endpoints in (results.get("http") or {}).items():
        ceiling = _get(endpoints, "ping", "requests_per_s")
        for figures in endpoints.values():
            if ceiling:
                figures["ratio_to_ceiling"] = round(figures["requests_per_s"] / ceiling, 3)
            if bare and server != "reference":
                figures["ratio_to_bare_asgi"] = round(figures["requests_per_s"] / bare, 3)
    stacks = _get(results, "stacks", "rows") or []
    stack_bare = next(
        (
            r["requests_per_s"]
            for r in stacks
            if r["stack"] == "bare_asgi_uvicorn" and "requests_per_s" in r
        ),
        None,
    )
    for row in stacks:
        if stack_bare and "requests_per_s" in row:
            row["ratio_to_bare_asgi"] = round(row["requests_per_s"] / stack_bare, 3)
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
    batch_failed = _failed_share(_get(results, "ingest", "batch", "requests"))
    results["targets"] = [
        *_read_targets(results),
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
        *_open_loop_targets(results),
    ]


def _read_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Throughput as a share of the ping ceiling or of the bare ASGI app (both in the same run),
    and rank's latency at 70% of its own maximum rate, offered open loop."""
    cached = _get(results, "http", "cached") or {}
    targets = []
    for name, endpoint, ratio, goal in (
        ("Rank: throughput vs the bare ASGI app", "rank", "ratio_to_bare_asgi", 15),
        ("Rank: throughput vs the ping ceiling", "rank", "ratio_to_ceiling", 85),
        (
            "Top 100 (top cache 1 s): throughput vs the ping ceiling",
            "top100",
            "ratio_to_ceiling",
            80,
        ),
        ("Around-me (n=5): throughput vs the ping ceiling", "around", "ratio_to_ceiling", 60),
    ):
        value = _get(cached, endpoint, ratio)
        targets.append(
            _target(
                name,
                None if value is None else value * 100,
                goal,
                higher_is_better=True,
                unit="%",
                failed=_failed_share(cached.get(endpoint)),
                phase=(("http", "cached", endpoint), "rank" if endpoint == "rank" else ""),
            )
        )
    at_70 = _get(cached, "rank", "open_loop", "70") or {}
    failed = (
        (at_70.get("non_2xx", 0) + at_70.get("errors", 0)) / at_70["requests"]
        if at_70.get("requests")
        else 0.0
    )
    for label, key, limit in (("p99", "p99_ms", 20), ("p99.9", "p999_ms", 50)):
        target = _target(
            f"Rank at 70% of its maximum rate (open loop): {label}",
            at_70.get(key),
            limit,
            higher_is_better=False,
            unit="ms",
            failed=failed,
            phase=(("http", "cached", "rank", "open_loop", "70"), "rank"),
        )
        answered = at_70.get("achieved_share")
        if answered is not None and answered < OPEN_READ_ANSWERED_SHARE:
            target["verdict"] += f"; only {answered:.1%} of the offered rate was answered"
        targets.append(target)
    return targets


def _open_loop_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    rate = _n(_get(results, "config", "open_rate"))
    main = _get(results, "open_loop", "batch") or {}
    share = main.get("accepted_share")
    first = _get(main, "freshness_first", "p99_ms")
    last = _get(main, "freshness_last", "p99_ms")
    edge = _n(main.get("edge_seconds", EDGE_SECONDS))
    growth = _target(
        f"No growth at {rate}/s: last-{edge}-s freshness p99 (<= {GROWTH_LIMIT:g}x the "
        f"first {edge} s or {GROWTH_SLACK_MS} ms more, under 1 s)",
        last,
        min(max(GROWTH_LIMIT * first, first + GROWTH_SLACK_MS), SUSTAINED_FRESHNESS_P99_MS)
        if first
        else SUSTAINED_FRESHNESS_P99_MS,
        higher_is_better=False,
        unit="ms",
        phase=MAIN_PHASE,
    )
    if main and last is None:
        growth.update(
            status="MISS",
            verdict="no probe posted then became visible (its POST failed or it was lost)",
        )
    return [
        _target(
            f"{rate}/s offered in batches of 100: share accepted",
            None if share is None else share * 100,
            SUSTAINED_SHARE * 100,
            higher_is_better=True,
            unit="%",
            digits=2,
            phase=MAIN_PHASE,
        ),
        _target(
            f"Freshness p99 at {rate}/s (whole window)",
            _get(main, "freshness_window", "p99_ms"),
            SUSTAINED_FRESHNESS_P99_MS,
            higher_is_better=False,
            unit="ms",
            phase=MAIN_PHASE,
        ),
        growth,
        _target(
            "Highest rate with freshness p99 < 1 s (batches of 100)",
            _get(results, "open_loop", "search", "highest_sustained_rate"),
            SEARCH_GOAL,
            higher_is_better=True,
            unit="results/s",
            phase=MAIN_PHASE,
        ),
        _target(
            f"Single results at {_n(_get(results, 'config', 'single_rate'))}/s: freshness p99",
            _get(results, "open_loop", "single", "freshness_window", "p99_ms"),
            SINGLE_FRESHNESS_P99_MS,
            higher_is_better=False,
            unit="ms",
            phase=(("open_loop", "single"), "ingest_single"),
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


def _digits(target: dict[str, Any]) -> int:
    if target.get("digits") is not None:
        return int(target["digits"])
    return 0 if target["unit"] in ("results/s", "players/s", "x", "%") else 1


def _value(target: dict[str, Any]) -> str:
    if target["value"] is None:
        return "–"
    return f"{_n(target['value'], _digits(target))} {target['unit']}"


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
        f"load average at start {', '.join(str(v) for v in m.get('load_average_at_start', []))}; "
        f"a fixed Python loop takes {m.get('python_probe_ms', '–')} ms at the start and "
        f"{m.get('python_probe_ms_at_end', '–')} ms at the end (a slower machine shows there); "
        f"CPU stolen by the hypervisor during the run: {m.get('steal_share', '–')}"
    )


def _postgres_line(results: dict[str, Any]) -> str:
    pg = _get(results, "machine", "postgresql") or {}
    settings = pg.get("settings") or {}
    quoted = ", ".join(f"{name} {settings[name]}" for name in QUOTED_SETTINGS if name in settings)
    return f"{pg.get('cluster', '–')}; {quoted}"


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
        f"Open loop: {_n(c.get('open_rate'))} results/s in batches of 100 and "
        f"{_n(c.get('single_rate'))} single results/s, {_n(c.get('open_seconds'))} s each, "
        f"from {c.get('senders')} senders; the rate search {_n(c.get('search_seconds'))} s a "
        f"rate. Whole run: {_n(results.get('seconds'), 0)} s.",
        "",
        f"PostgreSQL: {_postgres_line(results)}.",
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
    lines += _open_read_section(results, h)
    lines += _stacks_section(results, h)
    lines += _ingest_section(results, h)
    lines += _open_loop_section(results, h)
    lines += _search_section(results, h)
    lines += _postgres_section(results, h)
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
        sign = ">=" if t["higher_is_better"] else "<="
        goal = f"{sign} {_n(t['goal'], t['digits'] or 0)} {t['unit']}"
        lines.append(f"| {t['name']} | {_value(t)} | {goal} | **{t['status']}**, {t['verdict']} |")
    return [*lines, "", *_misses_section(results)]


# Where to look when a target is missed: the phase's CPU figures and its profile.
_TARGET_PHASES = {
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
        path, profile = _TARGET_PHASES.get(target["name"]) or target.get("phase") or (None, None)
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
        f"{_ms(api.get('p99_ms'))} | {_pct(api.get('ratio_to_ceiling'))} of the ping ceiling, "
        f"{_pct(api.get('ratio_to_bare_asgi'))} of the bare ASGI app |",
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


SERVER_LABELS = {"reference": "bare ASGI app", "cached": "1 s", "uncached": "off"}


def _pct(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio * 100:,.0f}%"


def _http_section(results: dict[str, Any], h: str) -> list[str]:
    bare = _get(results, "http", "reference", "bare_asgi") or {}
    c = results.get("config") or {}
    lines = [
        f"{h}# Read endpoints against the framework ceiling and the machine's reference",
        "",
        'The ceiling is `GET /api/v1/ping`, a DRF view that returns `{"ok": true}`, served by '
        "the same server the same way. A server with `LEADERBOARD_TOP_CACHE_SECONDS=1` and one "
        "with `0` were started in turn; each endpoint's ratio is to that server's own ping. The "
        "machine's reference is a bare ASGI app (`bench/apps/bare.py`, a 70-byte JSON answer to "
        f"any GET, no framework) under uvicorn with the same {c.get('web_workers')} workers and "
        f"flags, measured the same way in the same run: **{_n(bare.get('requests_per_s'))} "
        f"req/s** (p50 {_ms(bare.get('p50_ms'))} ms, p99 {_ms(bare.get('p99_ms'))} ms). The "
        f"public rate limit is on (`THROTTLE_PUBLIC_RATE={PUBLIC_RATE_NEVER_REACHED}`): every "
        "read pays for it, none is refused, and a 429 would count as an error.",
        "",
        "| Endpoint | Top cache | req/s | % of ping | % of bare ASGI | p50 ms | p99 ms | max ms "
        "| errors | PG sessions opened | PG connections after |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for server, endpoints in (results.get("http") or {}).items():
        for name, f in endpoints.items():
            errors = sum((f.get("errors") or {}).values())
            reference = server == "reference"
            lines.append(
                f"| {'bare ASGI app (reference)' if reference else name} | "
                f"{'–' if reference else SERVER_LABELS.get(server, server)} | "
                f"{_n(f.get('requests_per_s'))} | {_pct(f.get('ratio_to_ceiling'))} | "
                f"{'100%' if reference else _pct(f.get('ratio_to_bare_asgi'))} | "
                f"{_ms(f.get('p50_ms'))} | {_ms(f.get('p99_ms'))} | {_ms(f.get('max_ms'))} | "
                f"{errors} | {_n(f.get('database_sessions_opened'))} | "
                f"{f.get('database_connections_after', '–')} |"
            )
    return [*lines, ""]


def _open_read_section(results: dict[str, Any], h: str) -> list[str]:
    cached = _get(results, "http", "cached") or {}
    runs = [
        (name, share, run)
        for name, f in cached.items()
        for share, run in (f.get("open_loop") or {}).items()
    ]
    if not runs:
        return []
    first = runs[0][2]
    lines = [
        f"{h}# Read endpoints at a fixed offered rate (open loop, top cache 1 s)",
        "",
        "Right after its saturation run above, each endpoint is offered 50% and then 70% of the "
        f"rate wrk just measured, for {_n(first.get('seconds'))} s each, by h2load (`--rps`) "
        f"over {_n(first.get('connections'))} connections ({_n(first.get('loaders'))} processes, "
        "each with its own list of random players), each connection on its own schedule. "
        "Latencies are every answer of the window, from h2load's per-request log: a request due "
        "while its connection still waits is sent when the answer comes and timed from that "
        "send, so a connection's wait beyond its interval (the connections' count over the "
        "rate) is not counted; the answered rate shows whether the schedule was kept. "
        "Unanswered: sent but not answered when the window closed.",
        "",
        "| Endpoint | Share of max | Offered/s | Answered/s | p50 ms | p90 ms | p99 ms | p99.9 ms "
        "| max ms | non-2xx (429) | errors | unanswered | saturation p99 ms | CPU (cores) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, share, run in runs:
        lines.append(
            f"| {name} | {share}% | {_n(run.get('offered_per_s'))} | "
            f"{_n(run.get('achieved_per_s'))} | {_ms(run.get('p50_ms'))} | "
            f"{_ms(run.get('p90_ms'))} | **{_ms(run.get('p99_ms'))}** | "
            f"**{_ms(run.get('p999_ms'))}** | {_ms(run.get('max_ms'))} | "
            f"{_n(run.get('non_2xx'))} ({_n(run.get('throttled_429'))}) | "
            f"{_n(run.get('errors'))} | {_n(run.get('unanswered_at_end'))} | "
            f"{_ms(cached[name].get('p99_ms'))} | {_cpu_brief(run.get('cpu_cores'))} |"
        )
    return [*lines, ""]


def _stacks_section(results: dict[str, Any], h: str) -> list[str]:
    stacks = results.get("stacks") or {}
    if not stacks.get("rows"):
        return []
    lines = [
        f"{h}# Serving stacks side by side",
        "",
        f"The same trivial answer from each stack, {stacks.get('workers')} worker processes, wrk "
        f"{stacks.get('threads')} threads x {stacks.get('connections')} connections, "
        f"{_n(stacks.get('seconds'))} s each after 1 s of warm-up; the share is of the bare ASGI "
        "app under uvicorn in this table.",
        "",
        "| App | Server | Interface | Path | req/s | % of bare ASGI | p50 ms | p99 ms | errors "
        "| web CPU (cores) |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in stacks["rows"]:
        head = f"| {row['app']} | {row['server']} | {row['interface']} | `{row['path']}` |"
        if "skipped" in row:
            lines.append(f"{head} – | – | – | – | – | skipped: {row['skipped']} |")
            continue
        lines.append(
            f"{head} {_n(row.get('requests_per_s'))} | {_pct(row.get('ratio_to_bare_asgi'))} | "
            f"{_ms(row.get('p50_ms'))} | {_ms(row.get('p99_ms'))} | "
            f"{sum((row.get('errors') or {}).values())} | "
            f"{_n(_get(row, 'cpu_cores', 'web'), 2)} |"
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
        "a probe that posts single results for players wrk never writes and polls the public "
        "rank endpoint after each 201 until the new total shows (as in the open-loop phases "
        "below).",
        "",
    ]
    return lines


def _cpu_brief(cpu: dict[str, float] | None) -> str:
    if not cpu:
        return "–"
    return ", ".join(
        f"{name.replace('machine_busy', 'busy')} {cpu[name]:.2f}"
        for name in CPU_PARTS
        if cpu.get(name, 0) >= 0.01
    )


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.2%}"


def _backlog(f: dict[str, Any]) -> str:
    backlog = _get(f, "mirror", "backlog_when_load_stopped") or {}
    return f"{_n(backlog.get('unmirrored_totals'))} totals, {_n(backlog.get('queued_tasks'))} tasks"


def _probes(f: dict[str, Any]) -> str:
    """Probe results seen in the window, then those never seen and those refused (all phases)."""
    probe = f.get("freshness") or {}
    return (
        f"{_n(_get(f, 'freshness_window', 'samples'))} "
        f"({_n(probe.get('lost'))}, {_n(probe.get('failed_posts'))})"
    )


def _open_loop_section(results: dict[str, Any], h: str) -> list[str]:
    opened = results.get("open_loop") or {}
    rows = [(name, f) for name, f in _open_loop_rows(results) if not name.startswith("search")]
    if not rows:
        return []
    edge = _n(rows[0][1].get("edge_seconds"))
    lines = [
        f"{h}# Ingest at a fixed rate (open loop)",
        "",
        "| Phase | Offered results/s | Accepted results/s | Accepted | Not sent on time | "
        f"Errors | POST p50 ms | POST p99 ms | Freshness p50 ms | p99 ms | max ms | First {edge} "
        f"s p99 | Last {edge} s p99 | Probes (lost, failed) | Backlog at stop | Drained in | "
        "PG statements/result | WAL bytes/result | PG hit ratio | CPU (cores) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        "---:|---:|---|",
    ]
    for name, f in rows:
        fresh = f.get("freshness_window") or {}
        post = _get(f, "sender", "post_latency") or {}
        answers = _get(f, "sender", "answers") or {}
        errors = sum(n for status, n in answers.items() if status not in ("200", "201"))
        pg = f.get("postgres") or {}
        lines.append(
            f"| {name} | {_n(f.get('offered_results_per_s'))} | "
            f"**{_n(f.get('accepted_results_per_s'))}** | {_share(f.get('accepted_share'))} | "
            f"{_n(_get(f, 'sender', 'not_sent_on_time'))} | {_n(errors)} | "
            f"{_ms(post.get('p50_ms'))} | {_ms(post.get('p99_ms'))} | "
            f"{_ms(fresh.get('p50_ms'))} | {_ms(fresh.get('p99_ms'))} | "
            f"{_ms(fresh.get('max_ms'))} | {_ms(_get(f, 'freshness_first', 'p99_ms'))} | "
            f"{_ms(_get(f, 'freshness_last', 'p99_ms'))} | "
            f"{_probes(f)} | {_backlog(f)} | "
            f"{_drained(f.get('mirror') or {})} | {_n(pg.get('statements_per_result'), 3)} | "
            f"{_n(pg.get('wal_bytes_per_result'))} | {_share(pg.get('buffer_hit_ratio'))} | "
            f"{_cpu_brief(f.get('cpu_cores'))} |"
        )
    main = opened.get("batch") or {}
    sender = main.get("sender") or {}
    lag = sender.get("send_lag") or {}
    lines += [
        "",
        f"{_n(sender.get('senders'))} senders each POST on a schedule of "
        "their own whether or not earlier answers came back (no coordinated omission); a sender "
        f"with {sender.get('max_in_flight_per_sender', '–')} requests unanswered does not send "
        "the next one but counts it as not sent on time. Accepted results are the offered ones "
        "PostgreSQL received in the window (and committed, then or in the drain after). "
        "Freshness: a probe posts "
        f"{_n(_get(results, 'config', 'probe_rate_per_s'))} single results a second for players "
        "the load never writes and, after each 201, polls `GET /api/v1/leaderboard/players/{id}` "
        "every 10 ms (a tenth of the result's age once it is older than 100 ms) until the points "
        "reach the 201's total; p50/p99/max are over the whole window, then over its first and "
        f"last {_n(main.get('edge_seconds'))} s, where a growing backlog shows. The harness sent "
        f"{_n(sender.get('sent_late'))} of the main phase's requests more than "
        f"{_n(sender.get('late_after_ms'))} ms after their slot (send lag p99 "
        f"{_ms(lag.get('p99_ms'))} ms). PostgreSQL's figures cover the load and the mirror's "
        "drain after it.",
        "",
    ]
    return lines


def _search_section(results: dict[str, Any], h: str) -> list[str]:
    search = _get(results, "open_loop", "search")
    if not search:
        return []
    main = _get(results, "open_loop", "batch") or {}
    edge = _n(main.get("edge_seconds"))
    lines = [
        f"{h}# Highest rate kept up with (batches of 100)",
        "",
        f"A rate is kept up with when at least {SUSTAINED_SHARE:.1%} of the offered results are "
        f"accepted, the freshness p99 over the window is under "
        f"{_n(SUSTAINED_FRESHNESS_P99_MS)} ms and no probe is lost or refused. The main phase "
        f"({_n(main.get('rate_results_per_s'))}/s) "
        f"{'was' if search.get('direction') == 'up' else 'was not'}, so the search went "
        f"{search.get('direction')}wards, {_n(search.get('seconds'))} s a rate, the mirror "
        "drained between rates.",
        "",
        f"| Rate | Accepted results/s | Accepted | Freshness p99 ms | First {edge} s p99 | Last "
        f"{edge} s p99 | Probes (lost, failed) | Backlog at stop | CPU (cores) | Kept up |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for step in search.get("steps", []):
        lines.append(
            f"| {_n(step.get('rate_results_per_s'))} | {_n(step.get('accepted_results_per_s'))} | "
            f"{_share(step.get('accepted_share'))} | "
            f"{_ms(_get(step, 'freshness_window', 'p99_ms'))} | "
            f"{_ms(_get(step, 'freshness_first', 'p99_ms'))} | "
            f"{_ms(_get(step, 'freshness_last', 'p99_ms'))} | "
            f"{_probes(step)} | {_backlog(step)} | "
            f"{_cpu_brief(step.get('cpu_cores'))} | {'yes' if step.get('sustained') else 'no'} |"
        )
    highest = search.get("highest_sustained_rate")
    lines += [
        "",
        f"Highest rate kept up with: **{_n(highest)} results/s**."
        if highest
        else "Highest rate kept up with: **none of the rates tried**.",
        "",
    ]
    return lines


def _autovacuum(ran: dict[str, dict[str, int]] | None) -> str:
    if not ran:
        return "–" if ran is None else "none"
    return ", ".join(
        f"{table} ({counts['autovacuums']} vacuum, {counts['autoanalyzes']} analyze)"
        for table, counts in sorted(ran.items())
    )


def _postgres_section(results: dict[str, Any], h: str) -> list[str]:
    phases = [(f"ingest {mode} (wrk)", f) for mode, f in (results.get("ingest") or {}).items()]
    phases += _open_loop_rows(results)
    phases = [(name, f["postgres"]) for name, f in phases if f.get("postgres")]
    if not phases:
        return []
    lines = [
        f"{h}# PostgreSQL's side of ingest",
        "",
        "From PostgreSQL's statistics over each phase's load and the mirror's drain after it, "
        "per result accepted meanwhile: statements from pg_stat_statements (the servers' only: "
        "the harness's own are not counted), WAL from the cluster's WAL position, the hit ratio "
        "of the bench database's buffer cache, checkpoints and autovacuum runs (per table) that "
        "fell in the phase.",
        "",
        "| Phase | Results | Statements/result | Commits/result | WAL bytes/result | "
        "Full-page images | Hit ratio | Blocks read | Checkpoints | Autovacuum |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, pg in phases:
        lines.append(
            f"| {name} | {_n(pg.get('results'))} | {_n(pg.get('statements_per_result'), 3)} | "
            f"{_n(pg.get('commits_per_result'), 3)} | {_n(pg.get('wal_bytes_per_result'))} | "
            f"{_n(pg.get('wal_full_page_images'))} | {_share(pg.get('buffer_hit_ratio'))} | "
            f"{_n(pg.get('blocks_read'))} | {_n(pg.get('checkpoints'))} | "
            f"{_autovacuum(pg.get('autovacuum'))} |"
        )
    quoted = {name for name, _ in _open_loop_rows(results) if not name.startswith("search")}
    for name, pg in phases:
        if name in quoted and pg.get("top_statements"):
            lines += ["", f"Costliest statements, {name}:", ""]
            lines += [
                f"- {_n(t['calls'])} calls ({_n(t['calls_per_result'], 3)} a result), mean "
                f"{_ms(t['mean_ms'])} ms, {_n(t['total_ms'] / 1000, 1)} s in all: `{t['query']}`"
                for t in pg["top_statements"]
            ]
    return [*lines, ""]


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
            where = {"cached": "top cache 1 s", "uncached": "top cache off"}.get(server, server)
            if f.get("cpu_cores"):
                rows.append((f"{name} ({where})", f["cpu_cores"]))
            for share, run in (f.get("open_loop") or {}).items():
                if run.get("cpu_cores"):
                    rows.append((f"{name} at {share}%, open loop ({where})", run["cpu_cores"]))
    for mode, f in (results.get("ingest") or {}).items():
        if f.get("cpu_cores"):
            rows.append((f"ingest {mode}", f["cpu_cores"]))
    for name, f in _open_loop_rows(results):
        if f.get("cpu_cores"):
            rows.append((name, f["cpu_cores"]))
    return rows


def _open_loop_rows(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every open-loop phase, named by its rate, in the order it ran."""
    opened = results.get("open_loop") or {}
    rows = []
    if opened.get("batch"):
        rows.append((_open_loop_name(opened["batch"]), opened["batch"]))
    for step in (opened.get("search") or {}).get("steps", []):
        rows.append((f"search: {_open_loop_name(step)}", step))
    if opened.get("single"):
        rows.append((_open_loop_name(opened["single"]), opened["single"]))
    return rows


def _open_loop_name(f: dict[str, Any]) -> str:
    batch = f.get("batch_size")
    unit = "single results" if batch == 1 else f"results in batches of {batch}"
    return f"open loop {_n(f.get('rate_results_per_s'))}/s, {unit}"


def _cpu_section(results: dict[str, Any], h: str) -> list[str]:
    rows = _cpu_rows(results)
    if not rows:
        return []
    cores = _get(results, "machine", "cores")
    lines = [
        f"{h}# Where the time goes",
        "",
        f"CPU during each measured phase, in cores (this machine has {cores}); `wrk` is the load "
        "generator (wrk, or h2load at a fixed rate), `other` is "
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
