"""A run's results: ratios and verdicts derived from the figures, then the JSON, the Markdown
summary, the charts and (a real run into bench/results) bench/README.md's summary."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from .charts import charts_write
from .core import RESULTS, get, json_write, ms, n, pct, share, table
from .environment import PUBLIC_RATE_NEVER_REACHED
from .ingest import EDGE_SECONDS, SUSTAINED_FRESHNESS_P99_MS, SUSTAINED_SHARE
from .peak import peak_section, peak_targets

TARGET_PLAYERS = 10_000_000
README = RESULTS.parent / "README.md"
README_BLOCK = re.compile("(?s)(<!-- latest-summary:start -->\n).*?(\n<!-- latest-summary:end -->)")
# Cores used by processes outside the benchmark above which a run is flagged as noisy.
NOISY_CORES = 0.25
CPU_PARTS = ("web", "worker", "redis", "postgres", "wrk", "harness", "other", "machine_busy")
# The open-loop targets: a search that reaches this rate, single results this fresh, and a last
# stretch of the main phase no worse than this many times its first, or this many ms more,
# whichever is larger (a growing backlog shows as seconds by the end of a minute, while a p99 of
# tens of ms moves by tens between stretches: one coalescing window is 50 ms).
SEARCH_GOAL = 8000
SINGLE_FRESHNESS_P99_MS = 250
GROWTH_LIMIT = 1.5
GROWTH_SLACK_MS = 100
# Where a miss is explained: the path of the phase's figures (its CPU), and its profile's label.
Phase = tuple[tuple[str, ...], str]
MAIN_PHASE: Phase = (("open_loop", "batch"), "ingest_batch")
BATCH_PHASE: Phase = (("ingest", "batch"), "ingest_batch")
# Below this share of the offered rate answered, an open-loop latency figure is flagged.
OPEN_READ_ANSWERED_SHARE = 0.99
WHOLE_UNITS = ("results/s", "reads/s", "players/s", "x", "%")  # printed without decimals
QUOTED_SETTINGS = """shared_buffers effective_cache_size max_wal_size checkpoint_timeout
wal_compression synchronous_commit fsync full_page_writes autovacuum_vacuum_scale_factor"""
TARGET_NOTES = {
    "Raw ZREVRANK vs PostgreSQL count (p50)": "the count reads about N/2 index entries per query "
    "while ZREVRANK is O(log N), so the ratio grows with N; judge it at 10 million players",
    "Redis memory per player": "a sorted set costs a dict entry, a skiplist node and the member "
    "string per player; the figure depends on the ids' length and on the dict's fill (it doubles "
    "in steps)",
}


def _target(name: str, value: float | None, goal: float, unit: str, **how: Any) -> dict[str, Any]:
    """The verdict on a target; `how`: `higher` (better), optionally `failed`, `digits`, `phase`."""
    higher, failed = how["higher"], how.get("failed", 0.0)
    target: dict[str, Any] = {"name": name, "value": None if value is None else round(value, 3)}
    target.update(goal=goal, unit=unit, higher_is_better=higher, digits=how.get("digits"))
    target["phase"] = how.get("phase")
    if value is None:
        return {**target, "status": "NO DATA", "margin_pct": None, "verdict": "no data"}
    passed = value >= goal if higher else value <= goal
    margin = (value / goal - 1) * 100 if higher else (1 - value / goal) * 100
    if passed:
        verdict = f"{margin:+.0f}% over the target" if higher else f"{margin:.0f}% under the limit"
    elif higher:
        verdict = f"short by {-margin:.0f}% (needs {goal / value:.2f}x)" if value > 0 else "zero"
    else:
        verdict = f"over by {-margin:.0f}% ({value / goal:.2f}x the limit)"
    if failed > 0.001:
        verdict += f"; {failed:.1%} of the requests failed"
    status = "PASS" if passed else "MISS"
    return {**target, "status": status, "margin_pct": round(margin, 1), "verdict": verdict}


def _failed_share(figures: dict[str, Any] | None) -> float:
    requests = (figures or {}).get("requests")
    return sum((figures.get("errors") or {}).values()) / requests if figures and requests else 0.0


def derive(results: dict[str, Any]) -> None:
    """Add every ratio and the verdict on each target to the results."""
    bare = get(results, "http", "reference", "bare_asgi", "requests_per_s")
    for server, endpoints in (results.get("http") or {}).items():
        ceiling = get(endpoints, "ping", "requests_per_s")
        for figures in endpoints.values():
            if ceiling:
                figures["ratio_to_ceiling"] = round(figures["requests_per_s"] / ceiling, 3)
            if bare and server != "reference":
                figures["ratio_to_bare_asgi"] = round(figures["requests_per_s"] / bare, 3)
    rank = results.get("rank") or {}
    if get(rank, "zrevrank", "p50_ms") and get(rank, "postgres_count", "p50_ms"):
        rank["zrevrank_vs_postgres"] = {
            stat: round(rank["postgres_count"][f"{stat}_ms"] / rank["zrevrank"][f"{stat}_ms"], 1)
            for stat in ("p50", "p99", "mean")
        }
    if others := [cpu.get("other", 0.0) for _, cpu in _cpu_rows(results)]:
        mean, most = round(sum(others) / len(others), 3), round(max(others), 3)
        results["noise"] = {"other_cores_mean": mean, "other_cores_max": most}
    batch = get(results, "ingest", "batch") or {}
    results["targets"] = [
        *_read_targets(results),
        _target("Raw ZREVRANK vs PostgreSQL count (p50)", get(rank, "zrevrank_vs_postgres", "p50"),
                1000, "x", higher=True),
        _target("Ingest through batches of 100", batch.get("accepted_results_per_s"), 6000,
                "results/s", higher=True, failed=_failed_share(batch.get("requests")),
                phase=BATCH_PHASE),
        _target("Freshness p99 under batch ingest", get(batch, "freshness", "freshness", "p99_ms"),
                1000, "ms", higher=False, phase=BATCH_PHASE),
        _target("Redis memory per player", get(results, "memory", "bytes_per_player"), 100,
                "bytes", higher=False),
        _target("Rebuild from PostgreSQL", get(results, "rebuild", "players_per_s"), 200_000,
                "players/s", higher=True),
        *_open_loop_targets(results),
        *peak_targets(results, _target),
    ]  # fmt: skip


def _read_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    cached, targets = get(results, "http", "cached") or {}, []
    for name, endpoint, ratio, goal in (
        ("Rank: throughput vs the bare ASGI app", "rank", "bare_asgi", 15),
        ("Rank: throughput vs the ping ceiling", "rank", "ceiling", 85),
        ("Top 100 (top cache 1 s): throughput vs the ping ceiling", "top100", "ceiling", 80),
        ("Around-me (n=5): throughput vs the ping ceiling", "around", "ceiling", 60),
    ):
        value = get(cached, endpoint, f"ratio_to_{ratio}")
        phase = (("http", "cached", endpoint), "rank" if endpoint == "rank" else "")
        failed = _failed_share(cached.get(endpoint))
        value = None if value is None else value * 100
        targets.append(_target(name, value, goal, "%", higher=True, failed=failed, phase=phase))
    at_70 = get(cached, "rank", "open_loop", "70") or {}
    requests, answered = at_70.get("requests"), at_70.get("achieved_share")
    failed = (at_70.get("non_2xx", 0) + at_70.get("errors", 0)) / requests if requests else 0.0
    phase = (("http", "cached", "rank", "open_loop", "70"), "rank")
    for label, key, limit in (("p99", "p99_ms", 20), ("p99.9", "p999_ms", 50)):
        name = f"Rank at 70% of its maximum rate (open loop): {label}"
        value = at_70.get(key)
        target = _target(name, value, limit, "ms", higher=False, failed=failed, phase=phase)
        if answered is not None and answered < OPEN_READ_ANSWERED_SHARE:
            target["verdict"] += f"; only {answered:.1%} of the offered rate was answered"
        targets.append(target)
    return targets


def _open_loop_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    rate, single_rate = (n(get(results, "config", key)) for key in ("open_rate", "single_rate"))
    main = get(results, "open_loop", "batch") or {}
    accepted = main.get("accepted_share")
    first, last = (get(main, key, "p99_ms") for key in ("freshness_first", "freshness_last"))
    edge, limit = n(main.get("edge_seconds", EDGE_SECONDS)), SUSTAINED_FRESHNESS_P99_MS
    if first:
        limit = min(max(GROWTH_LIMIT * first, first + GROWTH_SLACK_MS), limit)
    name = (f"No growth at {rate}/s: last-{edge}-s freshness p99 (<= {GROWTH_LIMIT:g}x the first "
            f"{edge} s or {GROWTH_SLACK_MS} ms more, under 1 s)")  # fmt: skip
    growth = _target(name, last, limit, "ms", higher=False, phase=MAIN_PHASE)
    if main and last is None:
        verdict = "no probe posted then became visible (its POST failed or it was lost)"
        growth.update(status="MISS", verdict=verdict)
    single = (("open_loop", "single"), "ingest_single")
    return [
        _target(f"{rate}/s offered in batches of 100: share accepted",
                None if accepted is None else accepted * 100, SUSTAINED_SHARE * 100, "%",
                higher=True, digits=2, phase=MAIN_PHASE),
        _target(f"Freshness p99 at {rate}/s (whole window)",
                get(main, "freshness_window", "p99_ms"), SUSTAINED_FRESHNESS_P99_MS, "ms",
                higher=False, phase=MAIN_PHASE),
        growth,
        _target("Highest rate with freshness p99 < 1 s (batches of 100)",
                get(results, "open_loop", "search", "highest_sustained_rate"), SEARCH_GOAL,
                "results/s", higher=True, phase=MAIN_PHASE),
        _target(f"Single results at {single_rate}/s: freshness p99",
                get(results, "open_loop", "single", "freshness_window", "p99_ms"),
                SINGLE_FRESHNESS_P99_MS, "ms", higher=False, phase=single),
    ]  # fmt: skip


def report_write(results: dict[str, Any], options: argparse.Namespace) -> list[Path]:
    """latest.json and latest.md, a named copy with --baseline NAME, bench/README.md's summary."""
    derive(results)
    out: Path = options.results_dir
    out.mkdir(parents=True, exist_ok=True)
    charts: list[Path] = []
    if not options.no_charts:
        try:
            charts = charts_write(results, out)
        except Exception as exc:  # noqa: BLE001 - charts never cost a run its figures
            results.setdefault("errors", []).append({"phase": "charts", "error": repr(exc)})
    results["charts"] = [path.name for path in charts]
    names = ["latest"]
    if options.baseline:
        names.append(f"baseline-{options.baseline}-{results['players']}")
    written = []
    for name in names:
        json_write(results, out / f"{name}.json")
        (out / f"{name}.md").write_text(markdown(results, images=""))
        written += [out / f"{name}.json", out / f"{name}.md"]
    if out.resolve() == RESULTS.resolve() and not options.tiny and README.exists():
        summary = markdown(results, images="results/", heading_level=3)
        README.write_text(README_BLOCK.sub(lambda m: m[1] + summary + m[2], README.read_text()))
        written.append(README)
    return written + charts


def _section(h: str, title: str, *blocks: str | list[str]) -> list[str]:
    """A heading, then each block (a paragraph, or a table's lines) and a blank line after it."""
    lines = [f"{h}# {title}", ""]
    for block in blocks:
        lines += [block, ""] if isinstance(block, str) else [*block, ""]
    return lines


def _cpu(cpu: dict[str, float] | None, floor: float = 0.01) -> str:
    if not cpu:
        return "–"
    parts = [name for name in CPU_PARTS if cpu.get(name, 0) >= floor]
    return ", ".join(f"{p.replace('machine_busy', 'busy')} {cpu[p]:.2f}" for p in parts)


def _backlog(f: dict[str, Any]) -> str:
    backlog = get(f, "mirror", "backlog_when_load_stopped") or {}
    return f"{n(backlog.get('unmirrored_totals'))} totals, {n(backlog.get('queued_tasks'))} tasks"


def _drained(mirror: dict[str, Any]) -> str:
    seconds, left = mirror.get("drain_seconds"), get(mirror, "backlog_left", "unmirrored_totals")
    if mirror.get("drained"):
        return f"{seconds} s"
    failed = "(failed mirror tasks; the sweep is not run here)"
    return f"no: {n(left)} totals still unmirrored after {seconds} s {failed}"


def _probes(f: dict[str, Any]) -> str:
    """Probe results seen in the window, then those never seen and those refused (all phases)."""
    probe, seen = f.get("freshness") or {}, n(get(f, "freshness_window", "samples"))
    return f"{seen} ({n(probe.get('lost'))}, {n(probe.get('failed_posts'))})"


def _open_loop_rows(results: dict[str, Any], *, search: bool = True) -> list[tuple[str, Any]]:
    """Every open-loop phase as it ran (the search's steps unless `search` is off), by its rate."""
    opened = results.get("open_loop") or {}
    steps, named = (get(opened, "search", "steps") or []) if search else [], []
    for f in filter(None, [opened.get("batch"), *steps, opened.get("single")]):
        batch = f.get("batch_size")
        unit = "single results" if batch == 1 else f"results in batches of {batch}"
        step = "search: " if "sustained" in f else ""
        named.append((f"{step}open loop {n(f.get('rate_results_per_s'))}/s, {unit}", f))
    return named


def _cpu_rows(results: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
    rows = []
    for server, endpoints in (results.get("http") or {}).items():
        where = {"cached": "top cache 1 s", "uncached": "top cache off"}.get(server, server)
        for name, f in endpoints.items():
            rows.append((f"{name} ({where})", f.get("cpu_cores")))
            for at, run in (f.get("open_loop") or {}).items():
                rows.append((f"{name} at {at}%, open loop ({where})", run.get("cpu_cores")))
    ingest = [(f"ingest {mode}", f) for mode, f in (results.get("ingest") or {}).items()]
    rows += [(name, f.get("cpu_cores")) for name, f in ingest + _open_loop_rows(results)]
    return [(name, cpu) for name, cpu in rows if cpu]


def markdown(results: dict[str, Any], *, images: str, heading_level: int = 1) -> str:
    h, players = "#" * heading_level, results["players"]
    c, m = results.get("config") or {}, results.get("machine") or {}
    git, pg = m.get("git") or {}, m.get("postgresql") or {}
    commit = (git.get("commit") or "unknown")[:10]
    commit += " (uncommitted changes)" if git.get("dirty") else ""
    settings = pg.get("settings") or {}
    quoted = ", ".join(f"{k} {settings[k]}" for k in QUOTED_SETTINGS.split() if k in settings)
    lines = _section(
        h[1:], f"Benchmark: {players:,} players ({results.get('mode')} run {results['run']})",
        f"Machine: {m.get('cores')} cores ({m.get('cpu_model')}), {m.get('memory_gib')} GiB, "
        f"{m.get('os')}; Python {m.get('python')}, Django {get(m, 'packages', 'Django')}, "
        f"{_redis_engine(m.get('redis') or {})}, PostgreSQL {pg.get('server_version')}, "
        f"{m.get('wrk', '').split(' [')[0]}; a one-row PostgreSQL commit takes "
        f"{get(pg, 'one_row_commit_ms', 'p50')} ms (p50); commit {commit}; load "
        f"average at start {', '.join(str(v) for v in m.get('load_average_at_start', []))}; a "
        f"fixed Python loop takes {m.get('python_probe_ms', '–')} ms at the start and "
        f"{m.get('python_probe_ms_at_end', '–')} ms at the end (a slower machine shows there); "
        f"CPU stolen by the hypervisor during the run: {m.get('steal_share', '–')}.",
        f"Load: wrk {c.get('threads')} threads x {c.get('connections')} connections on reads "
        f"({n(c.get('read_seconds'))} s each after {n(c.get('warmup_seconds'))} s of warm-up), "
        f"{c.get('ingest_connections')} connections on writes ({n(c.get('ingest_seconds'))} s "
        f"per mode); uvicorn {c.get('web_workers')} workers, Celery concurrency "
        f"{c.get('worker_concurrency')}; every process on this one machine. Open loop: "
        f"{n(c.get('open_rate'))} results/s in batches of 100 and {n(c.get('single_rate'))} single "
        f"results/s, {n(c.get('open_seconds'))} s each, from {c.get('senders')} senders; the rate "
        f"search {n(c.get('search_seconds'))} s a rate. Whole run: {n(results.get('seconds'))} s.",
        f"PostgreSQL: {pg.get('cluster') or '–'}; {quoted}.",
    )  # fmt: skip
    noise = results.get("noise") or {}
    for shown, note in (
        (players < TARGET_PLAYERS, f"The targets are set at {TARGET_PLAYERS:,} players; at "
         f"{players:,} the verdicts below are indicative only."),
        (noise.get("other_cores_mean", 0) > NOISY_CORES, "**Noisy machine**: processes outside "
         f"the benchmark used {noise.get('other_cores_mean', 0):.2f} cores on average during the "
         f"measured phases (up to {noise.get('other_cores_max', 0):.2f}); the figures are lower "
         "than this machine can do. See the CPU table."),
        (results.get("interrupted"), "**Interrupted**: figures are partial."),
    ):  # fmt: skip
        lines += [f"> {note}", ""] if shown else []
    for section in SECTIONS:
        lines += section(results, h)
    if results.get("charts"):
        lines += _section(h, "Charts", [f"![{c}]({images}{c})" for c in results["charts"]])
    if results.get("errors"):
        lines += _section(h, "Errors", [f"- {e['phase']}: {e['error']}" for e in results["errors"]])
    return "\n".join(lines)


def _targets_section(results: dict[str, Any], h: str) -> list[str]:
    rows, misses = [], []
    for t in results.get("targets", []):
        digits = t["digits"] if t["digits"] is not None else 0 if t["unit"] in WHOLE_UNITS else 1
        value = "–" if t["value"] is None else f"{n(t['value'], digits)} {t['unit']}"
        goal = f"{'>=' if t['higher_is_better'] else '<='} {n(t['goal'], t['digits'] or 0)}"
        rows.append((t["name"], value, f"{goal} {t['unit']}", f"**{t['status']}**, {t['verdict']}"))
        if t["status"] != "MISS":
            continue
        # Where to look when a target is missed: the phase's CPU and its profile.
        path, profile = t.get("phase") or (None, None)
        notes = []
        if cpu := (get(results, *path) or {}).get("cpu_cores") if path else None:
            notes.append(f"CPU in cores during the phase: {_cpu(cpu, 0.05)}")
        for part, summary in (get(results, "profiles", profile) or {}).items():
            if isinstance(summary, dict) and summary.get("samples"):
                top = summary["app_functions_inclusive_pct"][:3]
                notes.append(f"{part} profile: " + ", ".join(f"`{f}` {p}%" for f, p in top))
        notes += [TARGET_NOTES[t["name"]]] if t["name"] in TARGET_NOTES else []
        misses += [f"- {t['name']}: " + "; ".join(notes) + "."] if notes else []
    rows_table = table("Target | Measured | Goal | Result", "lrrl", rows)
    return _section(h, "Targets", rows_table, *([misses] if misses else []))


def _rank_section(results: dict[str, Any], h: str) -> list[str]:
    rank = results.get("rank") or {}
    api = get(results, "http", "cached", "rank") or {}
    z, lua = rank.get("zrevrank") or {}, rank.get("gateway_read_rank") or {}
    pg, ratio = rank.get("postgres_count") or {}, rank.get("zrevrank_vs_postgres") or {}
    connections = get(results, "config", "connections")
    rows = [
        (f"API `GET /api/v1/leaderboard/players/{{id}}` (wrk, {connections} connections)",
         f"{n(api.get('requests_per_s'))} req/s", ms(api.get("p50_ms")), ms(api.get("p99_ms")),
         f"{pct(api.get('ratio_to_ceiling'))} of the ping ceiling, "
         f"{pct(api.get('ratio_to_bare_asgi'))} of the bare ASGI app"),
        ("Gateway Lua `store.read_rank` (redis-py, one client)", "–", ms(lua.get("p50_ms")),
         ms(lua.get("p99_ms")), "ZREVRANK + ZCARD + ZSCORE + ZCOUNT in one script"),
        ("Raw `ZREVRANK` (redis-py, one client)", f"{n(z.get('ops_per_s_one_client'))} ops/s",
         ms(z.get("p50_ms")), ms(z.get("p99_ms")), f"{n(z.get('samples'))} samples"),
        ("PostgreSQL `count(*) + 1 ... points > x`", "–", ms(pg.get("p50_ms")),
         ms(pg.get("p99_ms")), f"{n(pg.get('samples'))} samples; plan: {pg.get('plan', '–')}"),
    ]  # fmt: skip
    return _section(
        h, "What's my rank?",
        table("Path | Throughput | p50 ms | p99 ms | Note", "lrrrl", rows),
        f"Raw ZREVRANK is **{n(ratio.get('p50'))}x** faster than the PostgreSQL count at p50 "
        f"({n(ratio.get('p99'))}x at p99, {n(ratio.get('mean'))}x on the mean). Both are one "
        "client's round trips on loopback; the index is a B-tree on (season_id, points), built "
        f"in {n(pg.get('index_build_seconds'), 1)} s and vacuumed so the count is index-only.",
    )  # fmt: skip


def _http_section(results: dict[str, Any], h: str) -> list[str]:
    bare, rows = get(results, "http", "reference", "bare_asgi") or {}, []
    for server, endpoints in (results.get("http") or {}).items():
        reference = server == "reference"
        for name, f in endpoints.items():
            rows.append((
                "bare ASGI app (reference)" if reference else name,
                {"reference": "–", "cached": "1 s", "uncached": "off"}.get(server, server),
                n(f.get("requests_per_s")), pct(f.get("ratio_to_ceiling")),
                "100%" if reference else pct(f.get("ratio_to_bare_asgi")), ms(f.get("p50_ms")),
                ms(f.get("p99_ms")), ms(f.get("max_ms")), sum((f.get("errors") or {}).values()),
                n(f.get("database_sessions_opened")), f.get("database_connections_after", "–"),
            ))  # fmt: skip
    header = "Endpoint | Top cache | req/s | % of ping | % of bare ASGI | p50 ms | p99 ms | "
    header += "max ms | errors | PG sessions opened | PG connections after"
    return _section(
        h, "Read endpoints against the framework ceiling and the machine's reference",
        "The ceiling is `GET /api/v1/ping` on the same server; the servers ran with "
        "`LEADERBOARD_TOP_CACHE_SECONDS=1` and then `0`. The machine's reference is a bare ASGI "
        "app (`bench/apps/bare.py`) under uvicorn with the same "
        f"{get(results, 'config', 'web_workers')} workers: **{n(bare.get('requests_per_s'))} "
        f"req/s** (p50 {ms(bare.get('p50_ms'))} ms, p99 {ms(bare.get('p99_ms'))} ms). The public "
        f"rate limit is on (`THROTTLE_PUBLIC_RATE={PUBLIC_RATE_NEVER_REACHED}`): a 429 would "
        "count as an error.",
        table(header, "llrrrrrrrrr", rows),
    )  # fmt: skip


def _open_read_section(results: dict[str, Any], h: str) -> list[str]:
    cached = get(results, "http", "cached") or {}
    runs = [(e, at, r) for e, f in cached.items() for at, r in (f.get("open_loop") or {}).items()]
    if not runs:
        return []
    rows = [
        (name, f"{at}%", n(r.get("offered_per_s")), n(r.get("achieved_per_s")), ms(r.get("p50_ms")),
         ms(r.get("p90_ms")), f"**{ms(r.get('p99_ms'))}**", f"**{ms(r.get('p999_ms'))}**",
         ms(r.get("max_ms")), f"{n(r.get('non_2xx'))} ({n(r.get('throttled_429'))})",
         n(r.get("errors")), n(r.get("unanswered_at_end")), ms(cached[name].get("p99_ms")),
         _cpu(r.get("cpu_cores")))
        for name, at, r in runs
    ]  # fmt: skip
    first = runs[0][2]
    header = "Endpoint | Share of max | Offered/s | Answered/s | p50 ms | p90 ms | p99 ms | p99.9 "
    header += "ms | max ms | non-2xx (429) | errors | unanswered | saturation p99 ms | CPU (cores)"
    return _section(
        h, "Read endpoints at a fixed offered rate (open loop, top cache 1 s)",
        "Each endpoint right after its saturation run, offered 50% and then 70% of the rate wrk "
        f"measured, for {n(first.get('seconds'))} s each, by h2load (`--rps`) over "
        f"{n(first.get('connections'))} connections ({n(first.get('loaders'))} processes, each "
        "with its own random players); latencies of every answer of the window, timed from the "
        'send (bench/README.md, "h2load"); unanswered: sent, no answer when the window closed.',
        table(header, "lrrrrrrrrrrrrl", rows),
    )  # fmt: skip


def _ingest_section(results: dict[str, Any], h: str) -> list[str]:
    rows = []
    for mode, f in (results.get("ingest") or {}).items():
        fresh, requests = get(f, "freshness", "freshness") or {}, f.get("requests") or {}
        consistency = f.get("consistency_after_drain") or {}
        checked = consistency.get("checked", 0)
        rows.append((
            f"{mode} ({f.get('batch_size')} a request)",
            f"**{n(f.get('accepted_results_per_s'))}**",
            n(requests.get("requests_per_s")), ms(requests.get("p50_ms")),
            ms(requests.get("p99_ms")), ms(fresh.get("p50_ms")), ms(fresh.get("p99_ms")),
            ms(fresh.get("max_ms")), f"{n(fresh.get('samples'))} ({get(f, 'freshness', 'lost')})",
            _backlog(f), _drained(f.get("mirror") or {}),
            f"{checked - consistency.get('mismatched', 0)}/{checked}",
            n(f.get("database_sessions_opened")),
        ))  # fmt: skip
    header = "Mode | Accepted results/s | Requests/s | POST p50 ms | POST p99 ms | Freshness p50 "
    header += "ms | p99 ms | max ms | Probes (lost) | Backlog at stop | Drained in | Redis = "
    header += "PostgreSQL | PG sessions opened"
    return _section(
        h, "Ingest: HTTP, PostgreSQL commit, Celery mirror",
        table(header, "lrrrrrrrrrrlr", rows),
        "Accepted results are counted in PostgreSQL (rows received in the window); freshness by "
        "the probe, as in the open-loop phases below.",
    )  # fmt: skip


def _open_loop_section(results: dict[str, Any], h: str) -> list[str]:
    if not (named := _open_loop_rows(results, search=False)):
        return []
    rows = []
    for name, f in named:
        fresh, pg = f.get("freshness_window") or {}, f.get("postgres") or {}
        post, answers = get(f, "sender", "post_latency") or {}, get(f, "sender", "answers") or {}
        errors = sum(count for status, count in answers.items() if status not in ("200", "201"))
        rows.append((
            name, n(f.get("offered_results_per_s")), f"**{n(f.get('accepted_results_per_s'))}**",
            share(f.get("accepted_share")), n(get(f, "sender", "not_sent_on_time")), n(errors),
            ms(post.get("p50_ms")), ms(post.get("p99_ms")), ms(fresh.get("p50_ms")),
            ms(fresh.get("p99_ms")), ms(fresh.get("max_ms")),
            ms(get(f, "freshness_first", "p99_ms")), ms(get(f, "freshness_last", "p99_ms")),
            _probes(f), _backlog(f), _drained(f.get("mirror") or {}),
            n(pg.get("statements_per_result"), 3), n(pg.get("wal_bytes_per_result")),
            share(pg.get("buffer_hit_ratio")), _cpu(f.get("cpu_cores")),
        ))  # fmt: skip
    main = get(results, "open_loop", "batch") or {}
    sender, edge = main.get("sender") or {}, n(named[0][1].get("edge_seconds"))
    header = "Phase | Offered results/s | Accepted results/s | Accepted | Not sent on time | "
    header += "Errors | POST p50 ms | POST p99 ms | Freshness p50 ms | p99 ms | max ms | First "
    header += f"{edge} s p99 | Last {edge} s p99 | Probes (lost, failed) | Backlog at stop | "
    header += "Drained in | PG statements/result | WAL bytes/result | PG hit ratio | CPU (cores)"
    return _section(
        h, "Ingest at a fixed rate (open loop)",
        table(header, "l" + "r" * 18 + "l", rows),
        f"{n(sender.get('senders'))} senders, each on its own schedule; a sender with "
        f"{sender.get('max_in_flight_per_sender', '–')} requests unanswered counts the next one as "
        "not sent on time. Accepted: offered results PostgreSQL received in the window. Freshness: "
        f"{n(get(results, 'config', 'probe_rate'))} probe results a second for players the load "
        "never writes, each polled on `GET /api/v1/leaderboard/players/{id}` until it shows; "
        "p50/p99/max over the window, then p99 over its first and last "
        f"{n(main.get('edge_seconds'))} s. The harness sent {n(sender.get('sent_late'))} of the "
        f"main phase's requests more than {n(sender.get('late_after_ms'))} ms after their slot "
        f"(send lag p99 {ms(get(sender, 'send_lag', 'p99_ms'))} ms). PostgreSQL's figures "
        "include the drain.",
    )  # fmt: skip


def _search_section(results: dict[str, Any], h: str) -> list[str]:
    if not (search := get(results, "open_loop", "search")):
        return []
    main = get(results, "open_loop", "batch") or {}
    edge = n(main.get("edge_seconds"))
    rows = [
        (n(s.get("rate_results_per_s")), n(s.get("accepted_results_per_s")),
         share(s.get("accepted_share")), ms(get(s, "freshness_window", "p99_ms")),
         ms(get(s, "freshness_first", "p99_ms")), ms(get(s, "freshness_last", "p99_ms")),
         _probes(s), _backlog(s), _cpu(s.get("cpu_cores")), "yes" if s.get("sustained") else "no")
        for s in search.get("steps", [])
    ]  # fmt: skip
    header = f"Rate | Accepted results/s | Accepted | Freshness p99 ms | First {edge} s p99 | "
    header += f"Last {edge} s p99 | Probes (lost, failed) | Backlog at stop | CPU (cores) | Kept up"
    highest, upwards = search.get("highest_sustained_rate"), search.get("direction") == "up"
    return _section(
        h, "Highest rate kept up with (batches of 100)",
        f"Kept up with: at least {SUSTAINED_SHARE:.1%} of the offered results accepted, freshness "
        f"p99 under {n(SUSTAINED_FRESHNESS_P99_MS)} ms, no probe lost or refused. The main phase "
        f"({n(main.get('rate_results_per_s'))}/s) was{'' if upwards else ' not'}, so the "
        f"search went {search.get('direction')}wards, {n(search.get('seconds'))} s a rate.",
        table(header, "rrrrrrrrll", rows),
        f"Highest rate kept up with: **{n(highest) if highest else 'none of the rates tried'}"
        f"{' results/s' if highest else ''}**.",
    )  # fmt: skip


def _postgres_section(results: dict[str, Any], h: str) -> list[str]:
    phases = [(f"ingest {mode} (wrk)", f) for mode, f in (results.get("ingest") or {}).items()]
    phases = [(name, f["postgres"]) for name, f in phases + _open_loop_rows(results)]
    if not (phases := [(name, pg) for name, pg in phases if pg]):
        return []
    rows = []
    for name, pg in phases:
        ran = pg.get("autovacuum")
        vacuums = ", ".join(
            f"{table} ({counts['autovacuums']} vacuum, {counts['autoanalyzes']} analyze)"
            for table, counts in sorted((ran or {}).items())
        ) or ("–" if ran is None else "none")
        rows.append((
            name, n(pg.get("results")), n(pg.get("statements_per_result"), 3),
            n(pg.get("commits_per_result"), 3), n(pg.get("wal_bytes_per_result")),
            n(pg.get("wal_full_page_images")), share(pg.get("buffer_hit_ratio")),
            n(pg.get("blocks_read")), n(pg.get("checkpoints")), vacuums,
        ))  # fmt: skip
    header = "Phase | Results | Statements/result | Commits/result | WAL bytes/result | "
    header += "Full-page images | Hit ratio | Blocks read | Checkpoints | Autovacuum"
    blocks: list[str | list[str]] = [
        "Per result accepted over each phase's load and drain: statements (pg_stat_statements, "
        "the servers' only), WAL (the WAL position), the hit ratio of the bench database's "
        "buffer cache, checkpoints and autovacuum runs that fell in the phase.",
        table(header, "lrrrrrrrrl", rows),
    ]
    quoted = {name for name, _ in _open_loop_rows(results, search=False)}
    for name, pg in phases:
        if name in quoted and pg.get("top_statements"):
            blocks += [f"Costliest statements, {name}:", [
                f"- {n(t['calls'])} calls ({n(t['calls_per_result'], 3)} a result), mean "
                f"{ms(t['mean_ms'])} ms, {n(t['total_ms'] / 1000, 1)} s in all: `{t['query']}`"
                for t in pg["top_statements"]
            ]]  # fmt: skip
    return _section(h, "PostgreSQL's side of ingest", *blocks)


def _memory_rebuild_section(results: dict[str, Any], h: str) -> list[str]:
    m, r, load = (results.get(key) or {} for key in ("memory", "rebuild", "load"))
    return _section(h, "Memory, rebuild, load", [
        f"- Memory: `{m.get('key')}` holds {n(m.get('zcard'))} players ({m.get('encoding')}); "
        f"MEMORY USAGE (every element) {n(m.get('memory_usage_bytes'))} bytes = "
        f"**{n(m.get('bytes_per_player'), 1)} bytes a player**; 100 million players would take "
        f"{n(m.get('projected_gib'), 1)} GiB. Members are ids like `{m.get('member_example')}`; "
        "longer ids cost more.",
        _profile_directory_line(m.get("profile_directory") or {}),
        f"- Rebuild (`leaderboards.services.season_rebuild_standings`): {n(r.get('players'))} "
        f"players in {r.get('seconds')} s = **{n(r.get('players_per_s'))} players/s**.",
        f"- Load ({load.get('method', 'COPY from Python')}): {n(load.get('players'))} players, "
        + ("results and totals" if load.get("match_history", True) else "totals (no match results)")
        + f" in {load.get('copy_seconds')} s ({n(load.get('rows_per_s'))} rows/s); "
        f"{load.get('seconds_with_vacuum_analyze')} s with VACUUM ANALYZE; totals equal the sum "
        f"of results: {load.get('totals_equal_results')}. {load.get('score_distribution', '')}.",
    ])  # fmt: skip


def _redis_engine(facts: dict[str, Any]) -> str:
    if facts.get("server_name") == "valkey":
        return f"Valkey {facts.get('valkey_version')}"
    return f"Redis {facts.get('version')}"


def _profile_directory_line(d: dict[str, Any]) -> str:
    return (
        f"- Profile directory (`manage.py profiles_backfill`): {n(d.get('players'))} players' "
        f"names filed in {d.get('seconds')} s ({n(d.get('players_per_s'))} players/s); Redis grew "
        f"**{n(d.get('bytes_per_player'), 1)} bytes a player** (used_memory), "
        f"{n(d.get('projected_gib'), 1)} GiB at 100 million. Names are like `Player 1234567`."
    )


def _cpu_section(results: dict[str, Any], h: str) -> list[str]:
    rows = [
        (name, *(f"{cpu.get(p, 0):.2f}" for p in CPU_PARTS)) for name, cpu in _cpu_rows(results)
    ]
    if not rows:
        return []
    header = "Phase | " + " | ".join(CPU_PARTS).replace("machine_busy", "busy")
    return _section(
        h, "Where the time goes",
        "CPU during each measured phase, in cores (this machine has "
        f"{get(results, 'machine', 'cores')}); `wrk` is the load generator (wrk, or h2load at "
        "a fixed rate), `other` is everything else on the machine, `busy` the machine as a whole.",
        table(header, "l" + "r" * len(CPU_PARTS), rows),
    )  # fmt: skip


def _profile_section(results: dict[str, Any], h: str) -> list[str]:
    profiles, blocks = results.get("profiles") or {}, []
    for label, parts in profiles.items():
        if isinstance(parts, str) or "error" in parts:
            blocks.append(f"- {label}: {parts if isinstance(parts, str) else parts['error']}")
            continue
        lines: list[str] = []
        blocks.append(lines)
        for part, p in parts.items():
            if p.get("samples"):
                packages = ", ".join(f"{f} {s}%" for f, s in p["self_by_package_pct"][:8])
                app = ", ".join(f"`{f}` {s}%" for f, s in p["app_functions_inclusive_pct"][:6])
                hot = ", ".join(f"`{f}` {s}%" for f, s in p["self_top_frames_pct"][:5])
                lines.append(f"- **{label}, {part}** ({n(p['samples'])} samples). Self time by "
                             f"package: {packages}. Project functions (inclusive): {app}. Hottest "
                             f"frames: {hot}.")  # fmt: skip
    title = "Profiles (py-spy, sampled while wrk repeated the phase)"
    return _section(h, title, *blocks) if profiles else []


SECTIONS = (
    _targets_section, _rank_section, _http_section, _open_read_section, _ingest_section,
    _open_loop_section, _search_section, peak_section, _postgres_section, _memory_rebuild_section,
    _cpu_section, _profile_section,
)  # fmt: skip
