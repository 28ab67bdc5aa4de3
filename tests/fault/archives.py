"""What closing seasons must leave, read from PostgreSQL: every due season closed, its archive
equal to its totals at the close (players banned then left out; a result voided after the close
still in, as the archive keeps it), ranked by the tie rule, and its rewards paid once by the
board's rank tiers."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

import psycopg

# A ban, an unban or a void this close to a close's start or end may have landed on either side
# of its snapshot: such players are not judged.
EDGE = timedelta(seconds=5)


def due_unclosed(conn: psycopg.Connection) -> list[str]:
    """Seasons whose grace period is over and that are not closed."""
    rows = conn.execute(
        """
        SELECT b.slug, s.slug, s.state, s.close_step FROM seasons_season s
        JOIN seasons_board b ON b.id = s.board_id
        WHERE s.ends_at + s.grace_period < now() AND s.state <> 'closed' ORDER BY s.ends_at
        """
    ).fetchall()
    return [
        f"{board}/{season} ({state}, step {step or '-'})" for board, season, state, step in rows
    ]


def _ban_timeline(conn: psycopg.Connection) -> dict[str, list[tuple[datetime, bool]]]:
    """Each player's bans and unbans in the audit log: (when, banned after it)."""
    timeline: dict[str, list[tuple[datetime, bool]]] = defaultdict(list)
    for player, action, at in conn.execute(
        "SELECT player_id, action, at FROM audit_operatoraction"
        " WHERE action IN ('ban', 'unban') ORDER BY at, id"
    ):
        timeline[player].append((at, action == "ban"))
    return timeline


def _banned_at(events: list[tuple[datetime, bool]], moment: datetime) -> bool:
    banned = False
    for at, state in events:
        if at > moment:
            break
        banned = state
    return banned


def archive_problems(conn: psycopg.Connection) -> list[str]:
    problems: list[str] = []
    timeline = _ban_timeline(conn)
    closed = conn.execute(
        """
        SELECT s.id, b.slug, s.slug, s.close_started_at, s.closed_at, s.archived_players, b.id,
               s.starts_at
        FROM seasons_season s JOIN seasons_board b ON b.id = s.board_id
        WHERE s.state = 'closed' ORDER BY s.id
        """
    ).fetchall()
    for season_id, board, slug, started, closed_at, archived_players, board_id, starts_at in closed:
        name = f"{board}/{slug}"
        started = started or closed_at
        archive = {
            player: (rank, points, reached_at)
            for player, rank, points, reached_at in conn.execute(
                "SELECT player_id, rank, points, reached_at FROM seasons_archivedstanding"
                " WHERE season_id = %s",
                [season_id],
            )
        }
        totals = dict(
            conn.execute(
                "SELECT player_id, points FROM matches_playertotal WHERE season_id = %s",
                [season_id],
            ).fetchall()
        )
        unsure: set[str] = set()
        for player, points, voided_at in conn.execute(
            "SELECT player_id, points, voided_at FROM matches_matchresult"
            " WHERE season_id = %s AND voided_at >= %s",
            [season_id, started - EDGE],
        ):
            if voided_at <= started + EDGE:
                unsure.add(player)
            else:  # voided after the close: the archive keeps the points
                totals[player] = totals.get(player, 0) + points
        for player, events in timeline.items():
            if any(started - EDGE <= at <= closed_at + EDGE for at, _ in events):
                unsure.add(player)
            elif player in totals and _banned_at(events, started):
                del totals[player]
        expected = {p: points for p, points in totals.items() if p not in unsure}
        have = {p: row[1] for p, row in archive.items() if p not in unsure}
        missing = expected.keys() - have.keys()
        extra = have.keys() - expected.keys()
        wrong = sorted(p for p in expected.keys() & have.keys() if expected[p] != have[p])
        if missing or extra or wrong:
            problems.append(
                f"{name}: archive of {len(archive)} for {len(expected)} totals: "
                f"{len(missing)} missing {sorted(missing)[:5]}, {len(extra)} extra "
                f"{sorted(extra)[:5]}, {len(wrong)} wrong "
                f"{[(p, have[p], expected[p]) for p in wrong[:5]]} (player, archived, total)"
            )
        if archived_players != len(archive):
            problems.append(f"{name}: archived_players {archived_players}, {len(archive)} rows")
        ranked = sorted(archive.items(), key=lambda item: item[1][0])
        if [row[0] for _, row in ranked] != list(range(1, len(ranked) + 1)):
            problems.append(f"{name}: archive ranks are not 1..{len(ranked)}")
        # The tie rule (seasons/scoring.py): more points, then reached in fewer whole seconds
        # since the start, then the greater player id.
        order = [
            (-points, int((at - starts_at).total_seconds()), player)
            for player, (_, points, at) in ranked
        ]
        for rank, (first, second) in enumerate(zip(order, order[1:], strict=False), 1):
            if first[:2] > second[:2] or (first[:2] == second[:2] and first[2] < second[2]):
                problems.append(f"{name}: rank {rank} {first} ahead of {second} wrongly")
                break
        problems += _reward_problems(conn, season_id, board_id, name, archive)
    return problems


def _reward_problems(
    conn: psycopg.Connection,
    season_id: int,
    board_id: int,
    name: str,
    archive: dict[str, tuple[int, int, datetime]],
) -> list[str]:
    """Rewards by the board's rank-range tiers (the campaign's boards have no percentage tier):
    one per player whose archived rank a tier covers, none twice."""
    tiers = conn.execute(
        "SELECT rank_from, rank_to, reward_code FROM seasons_rewardtier"
        " WHERE board_id = %s AND rank_from IS NOT NULL ORDER BY rank_from DESC, rank_to",
        [board_id],
    ).fetchall()
    expected: dict[str, str] = {}
    for player, (rank, _, _) in archive.items():
        for first, last, code in tiers:
            if first <= rank <= last:
                expected[player] = code
                break
    rows = conn.execute(
        "SELECT player_id, reward_code FROM seasons_seasonreward WHERE season_id = %s",
        [season_id],
    ).fetchall()
    paid = dict(rows)
    problems = []
    if len(rows) != len(paid):
        problems.append(f"{name}: {len(rows) - len(paid)} rewards paid twice")
    if paid != expected:
        problems.append(
            f"{name}: rewards {sorted(paid.items())[:5]} ({len(paid)}), "
            f"expected {sorted(expected.items())[:5]} ({len(expected)})"
        )
    return problems
