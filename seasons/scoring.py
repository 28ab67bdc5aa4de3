"""The composite score that packs a standing and the time it was reached into one ZSET score.

composite = ranked_points * 2^24 + (2^24 - 1 - elapsed)

`elapsed` is whole seconds from the season's start to `reached_at`, so of two equal point
totals the one reached first has the larger composite. `ranked_points` is the points on
highest-first boards and (2^29 - 1 - points) on lowest-first boards, so on every board a
larger composite is a better standing and ZREVRANK is the rank. The largest composite is
2^53 - 1: every value is an exact integer in the double Redis stores.

Players with equal points reached in the same second have equal composites; Redis orders equal
scores by member, so ZREVRANGE puts the player_id that sorts last (byte order) first. That rule
is deterministic and the same on every read, rebuild and archive.
"""

from datetime import datetime

TIME_BITS = 24
TIME_SLOTS = 2**TIME_BITS
MAX_POINTS = 2**29 - 1


def elapsed_seconds(*, season_starts_at: datetime, reached_at: datetime) -> int:
    elapsed = int((reached_at - season_starts_at).total_seconds())
    return min(max(elapsed, 0), TIME_SLOTS - 1)


def composite_score(*, points: int, elapsed: int, lowest_first: bool) -> int:
    ranked_points = MAX_POINTS - points if lowest_first else points
    return ranked_points * TIME_SLOTS + (TIME_SLOTS - 1 - elapsed)


def composite_for(
    *, points: int, reached_at: datetime, season_starts_at: datetime, lowest_first: bool
) -> int:
    return composite_score(
        points=points,
        elapsed=elapsed_seconds(season_starts_at=season_starts_at, reached_at=reached_at),
        lowest_first=lowest_first,
    )


def points_of(composite: float, *, lowest_first: bool) -> int:
    ranked_points = int(composite) // TIME_SLOTS
    return MAX_POINTS - ranked_points if lowest_first else ranked_points


def elapsed_of(composite: float) -> int:
    """The whole seconds from the season's start to the standing, as the composite holds them."""
    return TIME_SLOTS - 1 - int(composite) % TIME_SLOTS


# The same arithmetic as PostgreSQL expressions over the given SQL expressions, written from the
# same constants, so the write path, the rebuild and the close's checks compute exactly what
# Python does (floor() equals int() here: negative spans are clamped to 0 first).
def ranked_points_sql(*, points: str, lowest_first: str) -> str:
    """The points part of composite_score: the points, or MAX_POINTS minus them."""
    return f"(CASE WHEN {lowest_first} THEN {MAX_POINTS} - ({points}) ELSE ({points}) END)"


def elapsed_seconds_sql(*, reached_at: str, starts_at: str) -> str:
    """elapsed_seconds: whole seconds from the season's start, clamped to the time slots.

    date_part() gives the span's seconds as a double, where extract() gives a numeric: over 100
    million totals (the close's join and the rebuild's read each work it out once a total) the
    numeric's arithmetic took about 15 s, the double's 8.6 (measured on 11 million). The same
    whole seconds: the span comes as days and microseconds, and its
    seconds as microseconds / 10^6 + days * 86,400, two roundings of a double, each within
    2^-29 s for spans under 2^24 s, where the nearest whole second is at least a microsecond
    away (Python rounds total_seconds() once, as exactly)."""
    return (
        f"LEAST(GREATEST(floor(date_part('epoch', ({reached_at}) - ({starts_at}))), 0),"
        f" {TIME_SLOTS - 1})"
    )


def composite_sql(*, points: str, reached_at: str, starts_at: str, lowest_first: str) -> str:
    """composite_for as a PostgreSQL expression (a bigint)."""
    ranked_points = ranked_points_sql(points=points, lowest_first=lowest_first)
    elapsed = elapsed_seconds_sql(reached_at=reached_at, starts_at=starts_at)
    return f"{ranked_points}::bigint * {TIME_SLOTS} + {TIME_SLOTS - 1} - {elapsed}::bigint"
