"""The dashboard's samples (leaderboards/operations.py): one row per whole minute with its
results, the mirror's lag and what the web processes counted, missed minutes made up, a day
kept; and the series read from them over the last hour and day, drift from the runs."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from config.building_blocks.minute_counts import ProcessCounts, process_counts
from leaderboards.models import OperationsMinute, ReconciliationRun
from leaderboards.operations import WINDOWS, operations_sample, operations_series
from leaderboards.tasks import sample_operations
from matches.models import PendingStanding
from tests.factories import MatchResultFactory, PlayerFactory

pytestmark = pytest.mark.django_db

# A day no other test samples or counts in.
NOW = datetime(2026, 7, 1, 12, 0, 30, tzinfo=UTC)


def at(clock: str) -> datetime:
    hour, minute, second = map(int, clock.split(":"))
    return NOW.replace(hour=hour, minute=minute, second=second)


def rows() -> dict[str, tuple]:
    return {
        f"{row.minute:%H:%M}": (
            row.results,
            row.mirror_lag_seconds,
            row.sockets,
            row.responses_4xx,
            row.responses_5xx,
        )
        for row in OperationsMinute.objects.all()
    }


@pytest.fixture
def flush_by_hand(monkeypatch):
    """This process's counts flushed only when the test says. The flushing thread runs every
    few seconds on the clock the test travelled to, and would write the open sockets (0) into
    a minute the test expects no web process to have reported in."""
    counts = process_counts()
    monkeypatch.setattr(counts, "flush", lambda: None)
    return lambda: ProcessCounts.flush(counts)


@pytest.fixture
def busy_minutes(season, flush_by_hand):
    """Results at 11:58:59 (one) and 11:59:10, 11:59:59 (two), and at 12:00:05 (not yet a whole
    minute at NOW); two 404s and a 500 answered at 11:59:40; a standing waiting 4 s."""
    player = PlayerFactory()
    for clock in ("11:58:59", "11:59:10", "11:59:59", "12:00:05"):
        MatchResultFactory(season=season, player=player, received_at=at(clock))
    with time_machine.travel(at("11:59:40"), tick=False):
        for status in (404, 404, 500, 200):
            process_counts().response(status)
        flush_by_hand()
    PendingStanding.objects.create(
        standings={str(season.pk): [["p9", 1]]}, changed_at=NOW - timedelta(seconds=4)
    )


def test_a_run_samples_each_whole_minute_of_the_last_hour_once(busy_minutes):
    with time_machine.travel(NOW, tick=False):
        sampled = sample_operations.delay().get()

    found = rows()
    assert sampled == 60
    assert (min(found), max(found)) == ("11:00", "11:59")
    assert found["11:59"] == (2, 4.0, 0, 2, 1)
    # A minute no web process reported in has no sockets; its lag was not seen.
    assert found["11:58"] == (1, None, None, 0, 0)
    assert found["11:00"] == (0, None, None, 0, 0)


def test_a_second_run_in_the_same_minute_samples_nothing_and_changes_nothing(busy_minutes):
    with time_machine.travel(NOW, tick=False):
        operations_sample()
        before = rows()
        again = operations_sample()

    assert (again, rows()) == (0, before)


def test_a_later_run_samples_the_minutes_since_the_newest_row(busy_minutes):
    with time_machine.travel(NOW, tick=False):
        operations_sample()
    later = NOW + timedelta(minutes=3)

    with time_machine.travel(later, tick=False):
        sampled = operations_sample()

    found = rows()
    assert sampled == 3
    assert max(found) == "12:02"
    assert found["12:00"] == (1, None, None, 0, 0)
    assert found["12:02"] == (0, 4.0 + 180, None, 0, 0)


def test_rows_older_than_a_day_and_an_hour_are_deleted(db):
    whole = NOW.replace(second=0)
    for minute in (whole - timedelta(hours=25, minutes=1), whole - timedelta(hours=24)):
        OperationsMinute.objects.create(
            minute=minute, results=1, sockets=None, responses_4xx=0, responses_5xx=0
        )

    with time_machine.travel(NOW, tick=False):
        operations_sample()

    assert OperationsMinute.objects.filter(minute__lt=NOW - timedelta(hours=2)).count() == 1
    assert OperationsMinute.objects.filter(minute=whole - timedelta(hours=24)).exists()


@pytest.fixture
def samples(season):
    """Two sampled minutes, 11:46 and 11:59; reconciliation runs with drift 2 and 3 in 11:59
    and none in 11:30."""
    for clock, results, lag, sockets, r4, r5 in (
        ("11:46:00", 30, 1.5, 4, 2, 0),
        ("11:59:00", 60, None, 5, 0, 1),
    ):
        OperationsMinute.objects.create(
            minute=at(clock),
            results=results,
            mirror_lag_seconds=lag,
            sockets=sockets,
            responses_4xx=r4,
            responses_5xx=r5,
        )
    for clock, drift in (("11:59:10", 2), ("11:59:50", 3), ("11:30:20", 0)):
        ReconciliationRun.objects.create(
            season=season,
            kind="recent",
            checked=10,
            drift=drift,
            fixed=drift,
            started_at=at(clock),
            finished_at=at(clock),
        )


def present(series) -> dict[str, dict[str, float]]:
    """Each series' sampled buckets by start; the others are None."""
    return {
        s.name: {f"{start:%H:%M}": value for start, value in s.samples if value is not None}
        for s in series
    }


def test_the_hours_series_have_a_value_per_sampled_minute(samples):
    series = operations_series(window=WINDOWS["hour"], now=NOW)

    assert [len(s.samples) for s in series] == [60] * 6
    assert (series[0].samples[0][0], series[0].samples[-1][0]) == (at("11:00:00"), at("11:59:00"))
    assert present(series) == {
        "results": {"11:46": 30.0, "11:59": 60.0},
        "mirror_lag": {"11:46": 1.5},
        "drift": {"11:30": 0.0, "11:59": 5.0},
        "sockets": {"11:46": 4.0, "11:59": 5.0},
        "responses_4xx": {"11:46": 2.0, "11:59": 0.0},
        "responses_5xx": {"11:46": 0.0, "11:59": 1.0},
    }


def test_the_days_series_average_rates_and_keep_peaks_per_quarter_hour(samples):
    series = operations_series(window=WINDOWS["day"], now=NOW)

    assert [len(s.samples) for s in series] == [96] * 6
    assert series[0].samples[0][0] == at("11:45:00") - timedelta(hours=23, minutes=45)
    assert present(series) == {
        "results": {"11:45": 45.0},
        "mirror_lag": {"11:45": 1.5},
        "drift": {"11:30": 0.0, "11:45": 5.0},
        "sockets": {"11:45": 5.0},
        "responses_4xx": {"11:45": 1.0},
        "responses_5xx": {"11:45": 0.5},
    }


def test_nothing_sampled_yet_is_none_everywhere(db):
    series = operations_series(window=WINDOWS["hour"], now=NOW)

    assert present(series) == {s.name: {} for s in series}
