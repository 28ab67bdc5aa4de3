"""A short run of the fault campaign (tests/fault/campaign.py, `make chaos`) on every change:
each kind of fault at least once, overlapping, at a lower load, with seasons closing every
minute and an operator at work; nothing confirmed may be lost or counted twice. About three
minutes: setup, 45 s of faults, the recovery and the checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import campaign
from .conftest import Cluster
from .faults import RESTART_DEADLINE

pytestmark = pytest.mark.fault

PLAN = campaign.Plan(
    # Long enough that a short season comes due whenever in its minute the run starts: seasons
    # end on the minute, take results 5 s more, and the close job looks every 10 s (0.75 min
    # missed it when the board was made just after a minute began).
    minutes=1.25,
    seed=7,
    rate=400,
    batch=40,
    senders=12,
    read_rate=20,
    sockets=4,
    players=2000,
    replicas=1,
    worker_concurrency=2,
    fault_gap=4.5,
    down=(1.0, 3.0),
    first_faults=(
        "kill_mirror_worker",
        "redis_restarted_empty",
        "kill_web",
        "postgres_restarted",
        "kill_jobs_worker",
        "broker_restarted",
        "kill_beat",
        "kill_rebuilds_worker",
        "replica_killed",
    ),
    operator_every=4.0,
    season_minutes=1,
    grace_seconds=5,
    job_seconds=10,
    warmup_seconds=3.0,
    ready_within=60.0,
    settle_within=90.0,
)


@pytest.mark.timeout(
    PLAN.minutes * 60 + PLAN.ready_within + PLAN.settle_within + RESTART_DEADLINE + 180
)
def test_a_short_campaign_loses_nothing(cluster: Cluster, tmp_path: Path):
    # given: the deployment under load; when: faults of every kind, closes and an operator
    report = campaign.run(
        PLAN, postgres=cluster.postgres, template=cluster.template, key=cluster.key, logs=tmp_path
    )
    campaign.write(report, tmp_path / "report.json")
    print(campaign.markdown(report))

    # then: every fault kind was injected and survived, and no check found anything
    assert set(PLAN.first_faults) <= set(report.faults), report.faults
    assert report.faults_survived == report.faults_injected
    assert {"ban", "void", "rebuild"} <= set(report.operator), report.operator
    assert report.results["confirmed"] > 0
    assert report.seasons[campaign.SHORT_BOARD]["closed"] >= 1, report.seasons
    assert report.violations == []
