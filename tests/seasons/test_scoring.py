"""The composite score: Python and the SQL rendered from the same constants agree at the edges."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from seasons.scoring import (
    MAX_POINTS,
    TIME_SLOTS,
    composite_for,
    composite_sql,
    elapsed_of,
    elapsed_seconds,
    elapsed_seconds_sql,
    points_of,
    ranked_points_sql,
)

pytestmark = pytest.mark.django_db

STARTS_AT = datetime(2025, 1, 1, tzinfo=UTC)
POINTS = [0, 1, 2, MAX_POINTS - 1, MAX_POINTS]
# Before the start, the start, within the first second, a microsecond short of a whole second
# and on it deep into the season, the last slot, and past it.
REACHED_AT = [
    STARTS_AT - timedelta(days=1),
    STARTS_AT,
    STARTS_AT - timedelta(microseconds=1),
    STARTS_AT + timedelta(seconds=0.999),
    STARTS_AT + timedelta(microseconds=1),
    STARTS_AT + timedelta(days=100, seconds=41, microseconds=999_999),
    STARTS_AT + timedelta(days=100, seconds=42),
    STARTS_AT + timedelta(seconds=TIME_SLOTS - 1),
    STARTS_AT + timedelta(seconds=TIME_SLOTS - 1, microseconds=999_999),
    STARTS_AT + timedelta(seconds=TIME_SLOTS * 3),
]


def _sql(expression: str, *params: object) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT ({expression})::bigint", params)  # noqa: S608 - fixed constants
        (value,) = cursor.fetchone()
    return value


@pytest.mark.parametrize("lowest_first", [False, True])
@pytest.mark.parametrize("points", POINTS)
@pytest.mark.parametrize("reached_at", REACHED_AT)
def test_the_sql_composite_is_the_python_one(points, reached_at, lowest_first):
    # given: the composite as Python computes it
    expected = composite_for(
        points=points, reached_at=reached_at, season_starts_at=STARTS_AT, lowest_first=lowest_first
    )

    # when: PostgreSQL computes it from the rendered expression
    sql = composite_sql(
        points="%s",
        reached_at="%s",
        starts_at="%s",
        lowest_first="TRUE" if lowest_first else "FALSE",
    )
    computed = _sql(sql, points, points, reached_at, STARTS_AT)

    # then: the same integer, which a Redis double holds exactly and which decodes back
    assert computed == expected
    assert 0 <= computed <= 2**53 - 1
    assert int(float(computed)) == computed
    assert points_of(float(computed), lowest_first=lowest_first) == points
    assert elapsed_of(float(computed)) == elapsed_seconds(
        season_starts_at=STARTS_AT, reached_at=reached_at
    )


@pytest.mark.parametrize("lowest_first", [False, True])
@pytest.mark.parametrize("points", POINTS)
def test_the_sql_ranked_points_are_the_composites_points_part(points, lowest_first):
    sql = ranked_points_sql(points="%s", lowest_first="TRUE" if lowest_first else "FALSE")
    composite = composite_for(
        points=points, reached_at=STARTS_AT, season_starts_at=STARTS_AT, lowest_first=lowest_first
    )

    assert _sql(sql, points, points) == composite // TIME_SLOTS


@pytest.mark.parametrize("reached_at", REACHED_AT)
def test_the_sql_elapsed_seconds_are_the_python_ones(reached_at):
    sql = elapsed_seconds_sql(reached_at="%s", starts_at="%s")

    assert _sql(sql, reached_at, STARTS_AT) == elapsed_seconds(
        season_starts_at=STARTS_AT, reached_at=reached_at
    )


def test_the_largest_composite_is_the_largest_exact_double():
    best = composite_for(
        points=MAX_POINTS, reached_at=STARTS_AT, season_starts_at=STARTS_AT, lowest_first=False
    )

    assert best == 2**53 - 1
    assert points_of(best, lowest_first=False) == MAX_POINTS
    assert elapsed_of(best) == 0
