"""What PostgreSQL did for a phase, from its own statistics (bench/README.md, "What a run does",
11): the difference of snapshots, the harness's own queries left out (`harness_connection`)."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import psycopg

from scripts.processes import proc_stat

from .core import Figures
from .environment import BenchEnvironment

TOP_STATEMENTS = 5
QUERY_CHARS = 160
_THIS_DATABASE = "(SELECT oid FROM pg_database WHERE datname = current_database())"
_COUNTER_NAMES = """blks_hit blks_read xact_commit xact_rollback tup_inserted tup_updated
tup_deleted temp_bytes blk_read_time blk_write_time"""
_DATABASE_COUNTERS = _COUNTER_NAMES.split()
# The figures that are a counter's difference over the phase: figure, counter.
_DIFFERENCES = {
    "wal_records": "wal_records", "wal_full_page_images": "wal_fpi", "blocks_read": "blks_read",
    "blocks_hit": "blks_hit", "commits": "xact_commit", "rollbacks": "xact_rollback",
    "rows_inserted": "tup_inserted", "rows_updated": "tup_updated", "rows_deleted": "tup_deleted",
    "temp_bytes": "temp_bytes", "checkpoints": "checkpoints",
}  # fmt: skip
Statements = dict[tuple[int, int, bool], tuple[int, float]]  # (user, query, top) -> calls, ms


def harness_connection(env: BenchEnvironment) -> psycopg.Connection[Any]:
    """A connection for the harness's own queries, which pg_stat_statements leaves out (only a
    superuser may; otherwise the harness's few queries are counted with the rest)."""
    conn = env.connect()
    with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
        conn.execute("SET pg_stat_statements.track = 'none'")
    return conn


def postmaster_pid(env: BenchEnvironment) -> int | None:
    """The bench database's postmaster when it runs on this machine (a backend's parent), so
    the CPU of this server's processes, and of no other, counts as PostgreSQL's."""
    with env.connect() as conn:
        backend = proc_stat(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
    parent = proc_stat(backend.ppid) if backend is not None else None
    return backend.ppid if parent is not None and parent.name == "postgres" else None


def results_by_second(cur: Any, where: str, params: dict[str, Any]) -> list[tuple[int, int, int]]:
    """The results `where` picks by the second they were received in, counted from
    `params["origin"]` (time.time()): (second, received before `params["end"]`, at or after)."""
    cur.execute(
        "SELECT floor(extract(epoch FROM received_at)::float8 - %(origin)s::float8)::int,"
        " count(*) FILTER (WHERE received_at < to_timestamp(%(end)s)),"
        " count(*) FILTER (WHERE received_at >= to_timestamp(%(end)s))"
        f" FROM matches_matchresult WHERE {where} GROUP BY 1 ORDER BY 1",
        params,
    )
    return [tuple(row) for row in cur.fetchall()]


def pg_snapshot(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    """The counters a phase's figures are the difference of: the database's, the WAL's, the
    checkpoints, each table's autovacuums and autoanalyzes, each statement's calls and time."""
    database = f"SELECT {', '.join(_DATABASE_COUNTERS)} FROM pg_stat_database"
    row = conn.execute(f"{database} WHERE datname = current_database()").fetchone()
    snapshot: dict[str, Any] = dict(zip(_DATABASE_COUNTERS, map(float, row), strict=True))
    wal = "SELECT pg_current_wal_lsn()::text, wal_records, wal_fpi FROM pg_stat_wal"
    snapshot["wal_lsn"], snapshot["wal_records"], snapshot["wal_fpi"] = conn.execute(wal).fetchone()
    checkpoints = (
        "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
        if conn.info.server_version >= 170000
        else "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
    )
    snapshot["checkpoints"] = conn.execute(checkpoints).fetchone()[0]
    maintenance = "SELECT relname, autovacuum_count, autoanalyze_count FROM pg_stat_user_tables"
    snapshot["maintenance"] = {t: (int(v), int(a)) for t, v, a in conn.execute(maintenance)}
    try:
        rows = conn.execute(
            "SELECT userid, queryid, toplevel, calls, total_exec_time"
            f" FROM pg_stat_statements(false) WHERE dbid = {_THIS_DATABASE}"
        ).fetchall()
        snapshot["statements"] = {(r[0], r[1], r[2]): (int(r[3]), float(r[4])) for r in rows}
        evicted = conn.execute("SELECT dealloc FROM pg_stat_statements_info").fetchone()[0]
    except (psycopg.errors.UndefinedFunction, psycopg.errors.ObjectNotInPrerequisiteState):
        snapshot["statements"], evicted = None, 0  # no extension, or a server that lacks it
    snapshot["evicted"] = int(evicted)
    return snapshot


def _per(value: float, results: int, digits: int = 3) -> float | None:
    return round(value / results, digits) if results else None


def _top_statements(conn: psycopg.Connection[Any], before: Statements, after: Statements,
                    results: int) -> list[Figures]:  # fmt: skip
    changed = []
    for key, (calls, total_ms) in after.items():
        calls_before, total_before = before.get(key, (0, 0.0))
        if calls > calls_before:
            changed.append((total_ms - total_before, calls - calls_before, key))
    top = sorted(changed, reverse=True)[:TOP_STATEMENTS]
    texts = {
        (r[0], r[1], r[2]): r[3]
        for r in conn.execute(
            "SELECT userid, queryid, toplevel, query FROM pg_stat_statements(true) "
            f"WHERE queryid = ANY(%s) AND dbid = {_THIS_DATABASE}",
            [[key[1] for _, _, key in top]],
        ).fetchall()
    }
    statements = []
    for total_ms, calls, key in top:
        text = re.sub(r"\s+", " ", texts.get(key, "?")).strip()
        query = text if len(text) <= QUERY_CHARS else text[: QUERY_CHARS - 1] + "…"
        statements.append({
            "query": query, "calls": calls, "calls_per_result": _per(calls, results, 4),
            "mean_ms": round(total_ms / calls, 3), "total_ms": round(total_ms, 1),
        })  # fmt: skip
    return statements


def pg_delta(conn: psycopg.Connection[Any], before: Figures, *, results: int) -> Figures:
    """What PostgreSQL did since `before`, and per accepted result where that means something."""
    after = pg_snapshot(conn)
    lsn_diff = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)"
    wal_bytes = conn.execute(lsn_diff, [before["wal_lsn"]]).fetchone()[0]
    grew = {name: after[counter] - before[counter] for name, counter in _DIFFERENCES.items()}
    figures: dict[str, Any] = {"results": results, "wal_bytes": int(wal_bytes)}
    figures["wal_bytes_per_result"] = _per(float(wal_bytes), results, 1)
    figures |= {name: int(value) for name, value in grew.items()}
    blocks = grew["blocks_hit"] + grew["blocks_read"]
    figures["buffer_hit_ratio"] = round(grew["blocks_hit"] / blocks, 5) if blocks else None
    figures["block_read_ms"] = round(after["blk_read_time"] - before["blk_read_time"], 1)
    figures["block_write_ms"] = round(after["blk_write_time"] - before["blk_write_time"], 1)
    figures["commits_per_result"] = _per(grew["commits"], results, 4)
    # Autovacuum and autoanalyze runs per table meanwhile: a run over a large table takes CPU and
    # I/O from the write path for seconds, which shows as a bump in freshness.
    autovacuum = figures["autovacuum"] = {}
    for table, (vacuums, analyzes) in after["maintenance"].items():
        was = before["maintenance"].get(table, (0, 0))
        if (vacuums, analyzes) != was:
            autovacuum[table] = {"autovacuums": vacuums - was[0], "autoanalyzes": analyzes - was[1]}
    figures["statements"] = None
    if before["statements"] is not None and after["statements"] is not None:
        calls = sum(
            max(0, calls - before["statements"].get(key, (0, 0.0))[0])
            for key, (calls, _) in after["statements"].items()
        )
        top = _top_statements(conn, before["statements"], after["statements"], results)
        figures.update(
            statements=calls, statements_per_result=_per(calls, results, 4),
            # Entries evicted meanwhile (pg_stat_statements.max) make the counts low.
            statements_evicted=after["evicted"] - before["evicted"], top_statements=top,
        )  # fmt: skip
    return figures
