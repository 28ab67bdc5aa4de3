"""What PostgreSQL did for a phase, from its own statistics: statements per accepted result and
the costliest ones (pg_stat_statements), WAL bytes per result, the buffer cache hit ratio,
commits and checkpoints, each the difference of a snapshot before and one after.

The harness's own queries run on connections that pg_stat_statements does not count (see
`harness_connection`), so the statements are the servers' alone. WAL and checkpoints are the
whole cluster's: on the bench's own cluster only the bench writes.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

import psycopg

from .environment import BenchEnvironment
from .processes import proc_stat

TOP_STATEMENTS = 5
QUERY_CHARS = 160
# The settings a run records: what shapes the write path and what the bench's cluster tunes.
RECORDED_SETTINGS = (
    "server_version",
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "maintenance_work_mem",
    "wal_buffers",
    "wal_level",
    "wal_compression",
    "max_wal_size",
    "min_wal_size",
    "checkpoint_timeout",
    "checkpoint_completion_target",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "shared_preload_libraries",
    "track_io_timing",
    "autovacuum_naptime",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_analyze_scale_factor",
    "autovacuum_vacuum_cost_limit",
    "max_connections",
    "random_page_cost",
    "effective_io_concurrency",
)
_THIS_DATABASE = "(SELECT oid FROM pg_database WHERE datname = current_database())"
_DATABASE_COUNTERS = (
    "blks_hit",
    "blks_read",
    "xact_commit",
    "xact_rollback",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "temp_bytes",
    "blk_read_time",
    "blk_write_time",
)


def harness_connection(env: BenchEnvironment) -> psycopg.Connection[Any]:
    """A connection to the bench's database for the harness's own queries (counts, backlog,
    snapshots), which pg_stat_statements leaves out so its figures are the servers' alone."""
    conn = psycopg.connect(**env.conninfo(), autocommit=True)
    # Only a superuser may; otherwise the harness's few queries are counted with the rest.
    with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
        conn.execute("SET pg_stat_statements.track = 'none'")
    return conn


def postmaster_pid(env: BenchEnvironment) -> int | None:
    """The pid of the bench database's postmaster when it runs on this machine (the parent of
    a backend), so the CPU of this server's processes, and of no other, counts as PostgreSQL's."""
    with psycopg.connect(**env.conninfo(), autocommit=True) as conn:
        backend = proc_stat(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
    # A server on another machine: its backends are not in this /proc.
    parent = proc_stat(backend.ppid) if backend is not None else None
    return backend.ppid if parent is not None and parent.name == "postgres" else None


def server_settings(env: BenchEnvironment) -> dict[str, str]:
    """The recorded settings as the server reports them (with their units); one an older
    server does not know is left out."""
    with psycopg.connect(**env.conninfo(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT name, current_setting(name, true) FROM unnest(%s::text[]) AS name",
            [list(RECORDED_SETTINGS)],
        ).fetchall()
    return {name: value for name, value in rows if value is not None}


@dataclass(frozen=True)
class PgSnapshot:
    # (userid, queryid, toplevel) -> (calls, total execution ms); None without the extension.
    statements: dict[tuple[int, int, bool], tuple[int, float]] | None
    evicted: int
    wal_lsn: str
    wal: dict[str, int]
    database: dict[str, float]
    checkpoints: int
    # table -> (autovacuum runs, autoanalyze runs) so far.
    maintenance: dict[str, tuple[int, int]]


def _statements(
    conn: psycopg.Connection[Any],
) -> tuple[dict[tuple[int, int, bool], tuple[int, float]] | None, int]:
    try:
        rows = conn.execute(
            f"""
            SELECT userid, queryid, toplevel, calls, total_exec_time
            FROM pg_stat_statements(false)
            WHERE dbid = {_THIS_DATABASE}
            """
        ).fetchall()
        evicted = conn.execute("SELECT dealloc FROM pg_stat_statements_info").fetchone()[0]
    except (psycopg.errors.UndefinedFunction, psycopg.errors.ObjectNotInPrerequisiteState):
        # No extension, or a server that does not preload it (a --database-url server).
        return None, 0
    return {(r[0], r[1], r[2]): (int(r[3]), float(r[4])) for r in rows}, int(evicted)


def _checkpoints(conn: psycopg.Connection[Any]) -> int:
    if conn.info.server_version >= 170000:
        query = "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
    else:
        query = "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
    return int(conn.execute(query).fetchone()[0])


def _maintenance(conn: psycopg.Connection[Any]) -> dict[str, tuple[int, int]]:
    return {
        table: (int(vacuums), int(analyzes))
        for table, vacuums, analyzes in conn.execute(
            "SELECT relname, autovacuum_count, autoanalyze_count FROM pg_stat_user_tables"
        ).fetchall()
    }


def _maintenance_delta(
    before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]
) -> dict[str, dict[str, int]]:
    """Autovacuum and autoanalyze runs per table meanwhile: a run over a large table takes CPU
    and I/O from the write path for seconds, which shows as a bump in freshness."""
    ran = {}
    for table, (vacuums, analyzes) in after.items():
        vacuums_before, analyzes_before = before.get(table, (0, 0))
        if vacuums > vacuums_before or analyzes > analyzes_before:
            ran[table] = {
                "autovacuums": vacuums - vacuums_before,
                "autoanalyzes": analyzes - analyzes_before,
            }
    return ran


def pg_snapshot(conn: psycopg.Connection[Any]) -> PgSnapshot:
    statements, evicted = _statements(conn)
    lsn, records, fpi, wal_bytes = conn.execute(
        "SELECT pg_current_wal_lsn()::text, wal_records, wal_fpi, wal_bytes FROM pg_stat_wal"
    ).fetchone()
    counters = conn.execute(
        f"SELECT {', '.join(_DATABASE_COUNTERS)} FROM pg_stat_database "
        "WHERE datname = current_database()"
    ).fetchone()
    return PgSnapshot(
        statements=statements,
        evicted=evicted,
        wal_lsn=lsn,
        wal={"records": int(records), "full_page_images": int(fpi), "bytes": int(wal_bytes)},
        database={
            name: float(value) for name, value in zip(_DATABASE_COUNTERS, counters, strict=True)
        },
        checkpoints=_checkpoints(conn),
        maintenance=_maintenance(conn),
    )


def _per(value: float, results: int, digits: int = 3) -> float | None:
    return round(value / results, digits) if results else None


def _top_statements(
    conn: psycopg.Connection[Any],
    before: dict[tuple[int, int, bool], tuple[int, float]],
    after: dict[tuple[int, int, bool], tuple[int, float]],
    results: int,
) -> list[dict[str, Any]]:
    changed = []
    for key, (calls, total_ms) in after.items():
        calls_before, total_before = before.get(key, (0, 0.0))
        if calls > calls_before:
            changed.append((total_ms - total_before, calls - calls_before, key))
    changed.sort(reverse=True)
    top = changed[:TOP_STATEMENTS]
    texts = {
        (r[0], r[1], r[2]): r[3]
        for r in conn.execute(
            "SELECT userid, queryid, toplevel, query FROM pg_stat_statements(true) "
            f"WHERE queryid = ANY(%s) AND dbid = {_THIS_DATABASE}",
            [[key[1] for _, _, key in top]],
        ).fetchall()
    }
    return [
        {
            "query": _short(texts.get(key, "?")),
            "calls": calls,
            "calls_per_result": _per(calls, results, 4),
            "mean_ms": round(total_ms / calls, 3),
            "total_ms": round(total_ms, 1),
        }
        for total_ms, calls, key in top
    ]


def _short(query: str) -> str:
    text = re.sub(r"\s+", " ", query).strip()
    return text if len(text) <= QUERY_CHARS else text[: QUERY_CHARS - 1] + "…"


def pg_delta(conn: psycopg.Connection[Any], before: PgSnapshot, *, results: int) -> dict[str, Any]:
    """What PostgreSQL did since `before`, and per accepted result where that means something."""
    after = pg_snapshot(conn)
    wal_bytes = conn.execute(
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)", [before.wal_lsn]
    ).fetchone()[0]
    db = {name: after.database[name] - before.database[name] for name in _DATABASE_COUNTERS}
    blocks = db["blks_hit"] + db["blks_read"]
    figures: dict[str, Any] = {
        "results": results,
        "wal_bytes": int(wal_bytes),
        "wal_bytes_per_result": _per(float(wal_bytes), results, 1),
        "wal_records": after.wal["records"] - before.wal["records"],
        "wal_full_page_images": after.wal["full_page_images"] - before.wal["full_page_images"],
        "buffer_hit_ratio": round(db["blks_hit"] / blocks, 5) if blocks else None,
        "blocks_read": int(db["blks_read"]),
        "blocks_hit": int(db["blks_hit"]),
        "block_read_ms": round(db["blk_read_time"], 1),
        "block_write_ms": round(db["blk_write_time"], 1),
        "commits": int(db["xact_commit"]),
        "commits_per_result": _per(db["xact_commit"], results, 4),
        "rollbacks": int(db["xact_rollback"]),
        "rows_inserted": int(db["tup_inserted"]),
        "rows_updated": int(db["tup_updated"]),
        "rows_deleted": int(db["tup_deleted"]),
        "temp_bytes": int(db["temp_bytes"]),
        "checkpoints": after.checkpoints - before.checkpoints,
        "autovacuum": _maintenance_delta(before.maintenance, after.maintenance),
    }
    if before.statements is None or after.statements is None:
        figures["statements"] = None
        return figures
    calls = sum(
        max(0, calls - before.statements.get(key, (0, 0.0))[0])
        for key, (calls, _) in after.statements.items()
    )
    figures.update(
        statements=calls,
        statements_per_result=_per(calls, results, 4),
        # Entries evicted meanwhile (pg_stat_statements.max) make the counts low.
        statements_evicted=after.evicted - before.evicted,
        top_statements=_top_statements(conn, before.statements, after.statements, results),
    )
    return figures
