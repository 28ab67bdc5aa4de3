"""The service's recent past for the operator dashboard's charts: one sample a minute, kept for
a day, and the series read from them over the last hour or day.

What lives in no table is sampled: a beat task (`sample_operations`, every minute) writes one
OperationsMinute row per whole minute, with the results received in it (results_per_minute,
which the dashboard's table reads too), the
mirror's lag when it ran, and what the web processes counted in Redis (4xx, 5xx, open sockets:
config/building_blocks/minute_counts.py). A row a minute in PostgreSQL costs nothing and
survives a Redis restart; rows older than KEEP are deleted by the same task. A run that was
missed is made up by the next (up to CATCH_UP minutes: the counts are still in Redis and the
results in their table; the lag of those minutes is unknown and left out). Reconciliation drift
needs no sample: it is read from the ReconciliationRun rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db.models import Avg, Count, DateTimeField, DurationField, Func, Max, Sum, Value
from django.db.models.functions import TruncMinute
from django.utils import timezone

from config.building_blocks.minute_counts import FLUSH_SECONDS, minutes_read
from matches.models import MatchResult

from .models import OperationsMinute, ReconciliationRun
from .services import mirror_lag_seconds

MINUTE = timedelta(minutes=1)
# A minute is sampled once it ended this long ago: every web process has flushed its counts of
# it by then (every FLUSH_SECONDS), and its results' transactions have committed.
SETTLED = timedelta(seconds=2 * FLUSH_SECONDS)
KEEP = timedelta(hours=25)
CATCH_UP = 60
_RESULTS_KEY = "dashboard:results:{:%Y%m%d%H%M}"


@dataclass(frozen=True, slots=True)
class Window:
    """What a chart spans: `buckets` points, each `step` long, ending at the last whole one."""

    name: str
    label: str
    step: timedelta
    buckets: int

    def bucket_starts(self, now: datetime) -> list[datetime]:
        settled = now - SETTLED
        step = int(self.step.total_seconds())
        end = datetime.fromtimestamp(int(settled.timestamp()) // step * step, tz=settled.tzinfo)
        return [end - (self.buckets - i) * self.step for i in range(self.buckets)]


WINDOWS = {
    "hour": Window(name="hour", label="Last hour, per minute", step=MINUTE, buckets=60),
    "day": Window(
        name="day", label="Last day, per 15 minutes", step=timedelta(minutes=15), buckets=96
    ),
}


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    title: str
    unit: str  # after a value: " s", or ""
    samples: list[tuple[datetime, float | None]]  # (bucket start, value or None: not sampled)


def _last_settled_minute(now: datetime) -> datetime:
    return (now - SETTLED).replace(second=0, microsecond=0) - MINUTE


def operations_sample(*, now: datetime | None = None) -> int:
    """Sample the whole minutes not sampled yet (the newest CATCH_UP at most) and delete the
    rows older than KEEP; returns how many minutes were sampled. Idempotent: a minute sampled
    twice (two runs at once) keeps the first row."""
    now = now or timezone.now()
    last = _last_settled_minute(now)
    newest = OperationsMinute.objects.aggregate(newest=Max("minute"))["newest"]
    first = last - (CATCH_UP - 1) * MINUTE
    if newest is not None:
        first = max(first, newest + MINUTE)
    minutes = [first + i * MINUTE for i in range(int((last - first) / MINUTE) + 1)]
    if minutes:
        results = {
            minute: sum(boards.values()) for minute, boards in results_per_minute(minutes).items()
        }
        lag = mirror_lag_seconds(now=now)
        OperationsMinute.objects.bulk_create(
            [
                OperationsMinute(
                    minute=counts.minute,
                    results=results.get(counts.minute, 0),
                    mirror_lag_seconds=lag if counts.minute == last else None,
                    sockets=counts.sockets,
                    responses_4xx=counts.responses_4xx,
                    responses_5xx=counts.responses_5xx,
                )
                for counts in minutes_read(minutes)
            ],
            ignore_conflicts=True,
        )
    OperationsMinute.objects.filter(minute__lt=now - KEEP).delete()
    return len(minutes)


def results_per_minute(minutes: list[datetime]) -> dict[datetime, dict[int, int]]:
    """Results received in each of these whole (settled) minutes, by board id. Counted through
    the results' BRIN index on received_at, the missing minutes in one query, and each minute's
    counts kept in the cache for the hour the dashboard shows it: the sampler and the dashboard's
    table count a minute once between them."""
    keys = {minute: _RESULTS_KEY.format(minute) for minute in minutes}
    known = cache.get_many(list(keys.values()))
    missing = [minute for minute, key in keys.items() if key not in known]
    if missing:
        counted: dict[datetime, dict[int, int]] = {minute: {} for minute in missing}
        rows = (
            MatchResult.objects.filter(
                received_at__gte=min(missing), received_at__lt=max(missing) + MINUTE
            )
            .annotate(minute=TruncMinute("received_at"))
            .values("minute", "board_id")
            .annotate(results=Count("*"))
            .order_by()
        )
        for row in rows:
            if row["minute"] in counted:
                counted[row["minute"]][row["board_id"]] = row["results"]
        fresh = {keys[minute]: counts for minute, counts in counted.items()}
        cache.set_many(fresh, timeout=3700)
        known.update(fresh)
    return {minute: known[key] for minute, key in keys.items()}


class _Bucket(Func):
    """PostgreSQL's date_bin: the start of the `step`-long bucket a time falls in."""

    function = "date_bin"
    output_field = DateTimeField()


def _bucket(field: str, window: Window, origin: datetime) -> _Bucket:
    return _Bucket(Value(window.step, output_field=DurationField()), field, Value(origin))


def operations_series(*, window: Window, now: datetime | None = None) -> list[Series]:
    """The charts' series over `window`: a value per bucket, None where nothing was sampled.
    Rates are per minute (a bucket's average over its sampled minutes); the lag and the sockets
    are a bucket's highest, so a short spike still shows on the day's chart; drift is the sum
    the reconciliation runs that finished in the bucket found."""
    starts = window.bucket_starts(now or timezone.now())
    since, until = starts[0], starts[-1] + window.step
    sampled = {
        row["bucket"]: row
        for row in OperationsMinute.objects.filter(minute__gte=since, minute__lt=until)
        .annotate(bucket=_bucket("minute", window, since))
        .values("bucket")
        .annotate(
            results=Avg("results"),
            lag=Max("mirror_lag_seconds"),
            sockets=Max("sockets"),
            responses_4xx=Avg("responses_4xx"),
            responses_5xx=Avg("responses_5xx"),
        )
        .order_by()
    }
    drift = {
        row["bucket"]: row["drift"]
        for row in ReconciliationRun.objects.filter(finished_at__gte=since, finished_at__lt=until)
        .annotate(bucket=_bucket("finished_at", window, since))
        .values("bucket")
        .annotate(drift=Sum("drift"))
        .order_by()
    }

    def of(field: str) -> list[tuple[datetime, float | None]]:
        return [(start, _value(sampled.get(start, {}).get(field))) for start in starts]

    per = "minute" if window.step == MINUTE else f"{int(window.step / MINUTE)} minutes"
    return [
        Series("results", "Results per minute", "", of("results")),
        Series("mirror_lag", "Mirror lag", " s", of("lag")),
        Series(
            "drift",
            f"Reconciliation drift per {per}",
            "",
            [(start, _value(drift.get(start))) for start in starts],
        ),
        Series("sockets", "Open live sockets", "", of("sockets")),
        Series("responses_4xx", "4xx responses per minute", "", of("responses_4xx")),
        Series("responses_5xx", "5xx responses per minute", "", of("responses_5xx")),
    ]


def _value(found: float | None) -> float | None:
    return None if found is None else float(found)
