"""The fault campaign: the real deployment (`make run`'s processes: two web servers, the mirror
worker, the jobs worker, the rebuilds worker, beat; with a replica of the leaderboard Redis and
a broker of its own, or the leaderboard data on a three-node Redis Cluster) under open-loop
load, while faults are injected at random and overlap, seasons close and an operator bans,
voids and rebuilds. Then, faults over and everything back, it checks from PostgreSQL and the
public API that nothing was lost or counted twice, and reports (JSON and markdown).
`make chaos`; docs/operations.md, "Fault campaign".

    python -m tests.fault.campaign --minutes 30 [--cluster] [--seed 7] [--report PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import django
import httpx

from tests.redis_cluster import LocalRedisCluster

from . import archives, checks, operations
from .deployment import BOARD, Deployment, template_create
from .faults import Injector, targets
from .load import Ledger, Results
from .procs import ROOT, PostgresCluster, Timeout, manage, wait_until
from .traffic import TOLERATED_CODES, OpenLoopResults, Readers, Stream, Subscribers

SHORT_BOARD = "short"
SHARDED_BOARD = "mega"
DEFAULT_REPORT = ROOT / "bench" / "results" / "chaos" / "latest.json"
# As tests/fault/test_cluster_node_lost.py: the nodes mark a silent one failed after 2 s and
# keep serving their own slots meanwhile.
CLUSTER_OPTIONS = [
    "--cluster-node-timeout",
    "2000",
    "--cluster-require-full-coverage",
    "no",
]
# The periodic tasks the campaign may run more often than the product's default (an operator
# can, in the admin): planning, closing and reconciling, so short seasons close in a short run.
JOB_TASKS = (
    "seasons.tasks.plan_seasons",
    "leaderboards.tasks.close_due_seasons",
    "leaderboards.tasks.reconcile",
)


@dataclass(frozen=True)
class Plan:
    minutes: float = 30.0
    seed: int = 1
    cluster: bool = False
    rate: float = 3000.0  # results a second, offered whatever the service answers
    batch: int = 100
    senders: int = 24
    read_rate: float = 100.0
    sockets: int = 20
    players: int = 20_000
    replicas: int = 1
    worker_concurrency: int = 4
    # Faults: one every `fault_gap` seconds on average, each target down for a random span.
    fault_gap: float = 20.0
    down: tuple[float, float] = (2.0, 10.0)
    # Kinds injected first, in order (a short run sees each); then all kinds at random.
    first_faults: tuple[str, ...] = ()
    operator_every: float = 20.0
    # The short board's seasons: a new one every `season_minutes`, taking late results for
    # `grace_seconds`, closed by beat.
    season_minutes: int = 3
    grace_seconds: int = 15
    # Run planning, closing and reconciliation every this many seconds (None: the product's).
    job_seconds: int | None = None
    warmup_seconds: float = 10.0
    ready_within: float = 60.0  # /readyz on every web server 200 this soon after the last fault
    settle_within: float = 240.0


@dataclass
class Report:
    plan: dict[str, Any]
    started_at: str
    seconds: dict[str, float] = field(default_factory=dict)
    faults: dict[str, dict[str, int]] = field(default_factory=dict)
    faults_injected: int = 0
    faults_survived: int = 0
    crashes: int = 0  # processes that exited with no fault aimed at them
    operator: dict[str, dict[str, int]] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    reads: dict[str, Any] = field(default_factory=dict)
    sockets: dict[str, Any] = field(default_factory=dict)
    seasons: dict[str, Any] = field(default_factory=dict)
    readiness_recovery_seconds: float | None = None
    mirror_lag_seconds: dict[str, float] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    # If it did not settle: the database sessions still busy (pid, state, wait, seconds, query)
    # and the tasks each worker holds unfinished.
    stuck: list[str] = field(default_factory=list)
    logs: str = ""


def _boards_setup(deployment: Deployment, plan: Plan) -> None:
    """The short board (cron seasons, a short grace, rank rewards), the sharded board on a
    cluster, their seasons planned; the periodic tasks' intervals if the plan says so."""
    minutes = plan.season_minutes
    cron = "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    manage(
        "shell",
        "-c",
        "from datetime import timedelta; "
        "from django_celery_beat.models import IntervalSchedule, PeriodicTask; "
        "from seasons.models import Board, RewardTier, ScheduleKind; "
        "from seasons.planning import board_seasons_plan, seasons_plan_all; "
        f"short = Board.objects.create(slug={SHORT_BOARD!r}, name='Short seasons', "
        f"schedule=ScheduleKind.CRON, schedule_cron={cron!r}, "
        f"season_grace_period=timedelta(seconds={plan.grace_seconds})); "
        "RewardTier.objects.create(board=short, reward_code='gold', rank_from=1, rank_to=3); "
        "RewardTier.objects.create(board=short, reward_code='silver', rank_from=4, rank_to=10); "
        + (
            f"Board.objects.create(slug={SHARDED_BOARD!r}, name='Sharded', "
            "schedule=ScheduleKind.MONTHLY, shards=3); "
            if plan.cluster
            else ""
        )
        + "seasons_plan_all(); "
        + (
            f"every, _ = IntervalSchedule.objects.get_or_create(every={plan.job_seconds}, "
            "period=IntervalSchedule.SECONDS); "
            f"[(setattr(t, 'interval', every), t.save()) for t in "
            f"PeriodicTask.objects.filter(task__in={list(JOB_TASKS)!r})]"
            if plan.job_seconds
            else ""
        ),
        env=deployment.env,
    )


def _boards(plan: Plan) -> list[str]:
    return [BOARD, SHORT_BOARD] + ([SHARDED_BOARD] if plan.cluster else [])


def _streams(plan: Plan) -> list[Stream]:
    """Most results on the long board, a fifth on the short one (its own players, so each short
    season has a few hundred), some on the sharded board of a cluster."""
    streams = [
        Stream(BOARD, Results(players=plan.players, seed=plan.seed, player_prefix="g"), 0.7),
        Stream(SHORT_BOARD, Results(players=500, seed=plan.seed + 1, player_prefix="s"), 0.2),
    ]
    if plan.cluster:
        streams.append(
            Stream(
                SHARDED_BOARD,
                Results(players=plan.players // 2, seed=plan.seed + 2, player_prefix="x"),
                0.1,
            )
        )
    return streams


def _all_ready(base_urls: list[str]) -> bool:
    for url in base_urls:
        try:
            if httpx.get(f"{url}/readyz", timeout=5).status_code != 200:
                return False
        except httpx.HTTPError:
            return False
    return True


def _settled(deployment: Deployment) -> bool:
    try:
        conn = deployment.db()
        return (
            checks.unmirrored(conn) == 0
            and not archives.due_unclosed(conn)
            and not deployment.standings_problems(live_only=True)
        )
    except Exception:  # a server still coming back: look again
        return False


def run(plan: Plan, *, postgres: PostgresCluster, template: str, key: str, logs: Path) -> Report:
    """One campaign on a deployment of its own (a database copied from `template`); always
    stops everything it started."""
    report = Report(plan=asdict(plan), started_at=datetime.now(UTC).isoformat(), logs=str(logs))
    violations = report.violations
    deployment = Deployment(cluster=postgres, template=template, key=key, logs=logs)
    leaderboard_cluster: LocalRedisCluster | None = None
    began = time.monotonic()
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(deployment.close)
        if plan.cluster:
            leaderboard_cluster = LocalRedisCluster(node_options=CLUSTER_OPTIONS)
            cleanup.callback(leaderboard_cluster.stop)
            leaderboard_cluster.start()
        deployment.start(
            separate_broker=True,
            persistent_broker=True,
            web_servers=2,
            rebuilds=True,
            leaderboard_cluster=leaderboard_cluster,
            replicas=0 if plan.cluster else plan.replicas,
            worker_concurrency=plan.worker_concurrency,
            # One address sends every read here: the per-address limit would refuse most.
            extra_env={"THROTTLE_PUBLIC_RATE": "1000000/s"},
        )
        _boards_setup(deployment, plan)
        deployment.start_jobs_worker()
        deployment.start_beat()
        report.seconds["setup"] = round(time.monotonic() - began, 1)

        ledger = Ledger(tolerated=TOLERATED_CODES, unanswered_tolerated=True, keep_answers=False)
        streams = _streams(plan)
        urls = deployment.base_urls
        results = OpenLoopResults(
            base_urls=lambda: urls,
            key=key,
            ledger=ledger,
            streams=streams,
            rate=plan.rate,
            batch=plan.batch,
            senders=plan.senders,
            seed=plan.seed,
        ).start()
        cleanup.callback(results.stop)
        readers = Readers(
            base_urls=lambda: urls,
            boards=_boards(plan),
            players=[p for s in streams for p in s.results.players[:200]],
            rate=plan.read_rate,
            threads=8,
            seed=plan.seed,
        ).start()
        cleanup.callback(readers.stop)
        follows = [
            (streams[i % len(streams)].board, streams[i % len(streams)].results.players[i])
            for i in range(plan.sockets)
        ]
        sockets = Subscribers(base_urls=lambda: urls, follows=follows).start()
        cleanup.callback(sockets.stop)
        try:
            wait_until(
                lambda: ledger.confirmed_count() > 0,
                timeout=60,
                what=lambda: f"a first result confirmed ({ledger.statuses()})",
            )
        except Timeout as exc:
            violations.append(str(exc))
        time.sleep(plan.warmup_seconds)

        # The faults, the operator and the closes of the short board's seasons, together.
        faults_began = time.monotonic()
        injector = Injector(
            targets=targets(deployment, leaderboard_cluster),
            seed=plan.seed,
            mean_gap=plan.fault_gap,
            down=plan.down,
            began=began,
            first=plan.first_faults,
        ).start()
        cleanup.callback(injector.halt)
        operator = operations.Operator(
            deployment=deployment,
            boards=_boards(plan),
            seed=plan.seed,
            every=plan.operator_every,
            began=began,
        ).start()
        cleanup.callback(operator.stopping.set)
        time.sleep(plan.minutes * 60)
        violations += injector.finish()
        violations += operator.finish()
        faults_ended = time.monotonic()
        report.seconds["faults"] = round(faults_ended - faults_began, 1)
        last_back = injector.log.last_back()
        last_fault = began + last_back if last_back is not None else faults_ended

        # /readyz on every web server, load still running.
        try:
            wait_until(
                lambda: _all_ready(urls),
                timeout=max(1.0, plan.ready_within - (time.monotonic() - last_fault)),
                interval=0.5,
                what=f"/readyz 200 on every web server within {plan.ready_within:.0f} s of "
                "the last fault",
            )
            report.readiness_recovery_seconds = round(time.monotonic() - last_fault, 1)
        except Timeout as exc:
            violations.append(str(exc))
        load_ended = time.monotonic()
        report.seconds["load"] = round(load_ended - faults_began, 1)
        violations += results.stop()
        violations += readers.stop()
        violations += sockets.stop()

        # Settled: nothing left to mirror, every due season closed, every live board whole.
        try:
            wait_until(
                lambda: _settled(deployment),
                timeout=plan.settle_within,
                interval=2.0,
                what=lambda: (
                    f"the deployment settling: {checks.unmirrored(deployment.db())} totals "
                    f"unmirrored; due seasons not closed {archives.due_unclosed(deployment.db())}"
                    f"; {deployment.standings_problems(live_only=True)[:3]}"
                ),
            )
        except Timeout as exc:
            violations.append(str(exc))
            report.stuck = _stuck(deployment)
        report.seconds["settle"] = round(time.monotonic() - load_ended, 1)

        conn = deployment.db()
        violations += ledger.unexpected[:20]
        violations += checks.results_problems(conn, confirmed=ledger.confirmed, sent=ledger.sent)
        violations += deployment.standings_problems(live_only=True)
        violations += archives.archive_problems(conn)
        violations += [f"due and not closed: {s}" for s in archives.due_unclosed(conn)]
        actions = operator.log.actions
        violations += operations.audit_problems(conn, actions)
        violations += operations.effect_problems(conn, actions, urls[0])
        violations += [f"read answered wrongly: {w}" for w in readers.tally.wrong[:20]]
        violations += [f"socket messages out of order: {g}" for g in sockets.tally.gaps]
        violations += injector.stop_watching()
        report.crashes = len(injector.log.crashes)

        duration = load_ended - faults_began
        report.faults = injector.log.by_kind()
        report.faults_injected = sum(k["injected"] for k in report.faults.values())
        report.faults_survived = sum(k["recovered"] for k in report.faults.values())
        report.operator = operator.log.by_kind()
        report.results = {
            "offered": results.offered,
            "shed": results.shed,
            "given_up": results.given_up,
            "retries": results.retries,
            "confirmed": ledger.confirmed_count(),
            "confirmed_per_second": round(ledger.confirmed_count() / max(duration, 1e-9), 1),
            "answers": {str(k): v for k, v in sorted(ledger.statuses().items(), key=str)},
            "refusal_codes": dict(ledger.codes),
        }
        report.reads = dict(readers.tally.statuses)
        report.sockets = {
            "connections": sockets.tally.connections,
            "messages": dict(sockets.tally.messages),
            "ended": dict(sockets.tally.refused),
        }
        report.seasons = _season_figures(conn)
        if readers.lags:
            report.mirror_lag_seconds = {
                "median": round(statistics.median(readers.lags), 2),
                "max": round(max(readers.lags), 2),
            }
    return report


def _stuck(deployment: Deployment) -> list[str]:
    """What the deployment was doing when it did not settle: its database sessions still busy
    (a job stuck on a lock or a long query) and the tasks each worker holds unfinished."""
    try:
        rows = (
            deployment.db()
            .execute(
                """
            SELECT pid, state, wait_event_type, wait_event,
                   round(extract(epoch FROM now() - xact_start)), left(query, 200)
            FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'
            ORDER BY xact_start
            """
            )
            .fetchall()
        )
    except Exception as exc:  # the report says why there is no diagnosis
        rows = [(f"no database diagnosis: {exc!r}",)]
    busy = [" ".join(str(column) for column in row) for row in rows]
    for name in ("worker", "jobs_worker", "rebuilds_worker"):
        worker = getattr(deployment, name, None)
        if worker is None or not worker.process.running():
            continue
        received, finished = worker.tasks()
        held = received - finished
        lines = [
            line.strip()[:200]
            for line in worker.log.read_text(errors="replace").splitlines()
            if any(task_id in line for task_id in held)
        ]
        busy += [f"{name} holds {len(held)} tasks: {lines[-5:]}"] if held else []
    return busy


def _season_figures(conn: Any) -> dict[str, Any]:
    rows = conn.execute(
        """
        SELECT b.slug, count(*) FILTER (WHERE s.state = 'closed'),
               count(*) FILTER (WHERE s.state <> 'closed'),
               (SELECT count(*) FROM seasons_seasonreward r JOIN seasons_season x
                  ON x.id = r.season_id WHERE x.board_id = b.id)
        FROM seasons_season s JOIN seasons_board b ON b.id = s.board_id GROUP BY b.id, b.slug
        """
    ).fetchall()
    return {
        board: {"closed": closed, "open": open_, "rewards": rewards}
        for board, closed, open_, rewards in rows
    }


def markdown(report: Report) -> str:
    plan = report.plan
    lines = [
        f"# Fault campaign, {report.started_at[:16]} UTC",
        "",
        f"{plan['minutes']} minutes of faults, seed {plan['seed']}, "
        f"{'Redis Cluster' if plan['cluster'] else 'one Redis with a replica'}, "
        f"{plan['rate']:.0f} results/s offered.",
        "",
        f"- Faults injected: {report.faults_injected}, survived: {report.faults_survived}; "
        f"processes that exited on their own (restarted by the supervisor): {report.crashes}",
        *[
            f"  - {kind}: {tally['injected']} ({tally['recovered']} back)"
            for kind, tally in report.faults.items()
        ],
        f"- Operator actions: {report.operator}",
        f"- Results confirmed: {report.results.get('confirmed')} "
        f"({report.results.get('confirmed_per_second')}/s); offered "
        f"{report.results.get('offered')}, shed {report.results.get('shed')}; "
        f"answers {report.results.get('answers')}",
        f"- Reads: {report.reads}",
        f"- Sockets: {report.sockets}",
        f"- Seasons: {report.seasons}",
        f"- Mirror lag (from /readyz, s): {report.mirror_lag_seconds}",
        f"- /readyz 200 on every web server {report.readiness_recovery_seconds} s after the "
        f"last fault (limit {plan['ready_within']:.0f} s)",
        f"- Phases (s): {report.seconds}",
        "",
        f"## Violations: {len(report.violations)}",
        "",
        *[f"- {v}" for v in report.violations[:50]],
        "" if report.violations else "None: nothing lost, nothing counted twice.",
        *(["", "Still busy when it did not settle:", ""] if report.stuck else []),
        *[f"- {row}" for row in report.stuck],
    ]
    return "\n".join(lines) + "\n"


def write(report: Report, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(report), indent=2, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(report))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--cluster", action="store_true", help="leaderboard data on a Cluster")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=3000.0, help="results a second offered")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--read-rate", type=float, default=100.0)
    parser.add_argument("--sockets", type=int, default=20)
    parser.add_argument("--fault-gap", type=float, default=15.0, help="mean seconds between")
    parser.add_argument("--season-minutes", type=int, default=3)
    parser.add_argument("--report", type=Path, default=DEFAULT_REPORT)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()  # the checks name keys by the gateway's own rule
    plan = Plan(
        minutes=args.minutes,
        seed=args.seed,
        cluster=args.cluster,
        rate=args.rate,
        batch=args.batch,
        read_rate=args.read_rate,
        sockets=args.sockets,
        fault_gap=args.fault_gap,
        season_minutes=args.season_minutes,
    )
    logs = Path(tempfile.mkdtemp(prefix="lb-chaos-"))
    postgres = PostgresCluster()
    try:
        postgres.init()
        postgres.start()
        key = template_create(postgres, "lb_chaos_template")
        print(f"campaign: {plan.minutes} minutes, seed {plan.seed}; logs in {logs}", flush=True)
        report = run(plan, postgres=postgres, template="lb_chaos_template", key=key, logs=logs)
    finally:
        postgres.destroy()
    write(report, args.report)
    sys.stdout.write(markdown(report))
    print(f"report: {args.report} and {args.report.with_suffix('.md')}")
    return 1 if report.violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
