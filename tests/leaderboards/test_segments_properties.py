"""For random histories of results, moves between segments and clans, bans, unbans, voids and
rebuilds, every segment set in Redis holds exactly the players PostgreSQL has in that segment
(a clan's members too), each with the board's score of their total, and every clan's standing is
its members' points summed (negated on a lowest-first board) or its best member's score, by the
board's rule."""

import itertools
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from leaderboards import services, store
from matches.corrections import result_void
from matches.models import Clan, MatchResult, Player, PlayerSegment, PlayerTotal
from matches.services import player_ban, player_unban
from seasons.choices import ScoreOperator, SortOrder
from seasons.scoring import TIME_SLOTS
from tests.factories import BoardFactory, SeasonFactory
from tests.mirroring import expected_composite

pytestmark = pytest.mark.django_db

PLAYERS = ["a", "b", "c"]
COUNTRIES = ["DE", "FR", None]
CLANS = ["red", "blue", None]
_boards = itertools.count()

# Results weigh three times as much as each other step, so a player's later results (the
# mirror's steady state) follow a move or a join in most histories.
result = st.tuples(st.just("result"), st.sampled_from(PLAYERS), st.integers(1, 50))
operation = st.one_of(
    result,
    result,
    result,
    st.tuples(st.just("move"), st.sampled_from(PLAYERS), st.sampled_from(COUNTRIES)),
    st.tuples(st.just("join"), st.sampled_from(PLAYERS), st.sampled_from(CLANS)),
    st.tuples(st.just("ban"), st.sampled_from(PLAYERS)),
    st.tuples(st.just("unban"), st.sampled_from(PLAYERS)),
    st.tuples(st.just("void"), st.integers(0, 30)),
    st.tuples(st.just("rebuild")),
)


# Each clan rule the store keeps: sums (written with GT), bests, and sums on a lowest-first board
# (scores that only fall: written with LT).
BOARDS = [
    (ScoreOperator.SUM, SortOrder.HIGHEST_FIRST),
    (ScoreOperator.BEST, SortOrder.HIGHEST_FIRST),
    (ScoreOperator.SUM, SortOrder.LOWEST_FIRST),
]


def _expected(season):
    """{segment: {player: score}} as PostgreSQL has it."""
    board = season.board
    expected = {}
    values = dict(
        PlayerSegment.objects.filter(dimension="country").values_list("player_id", "value")
    )
    clans = dict(Player.objects.filter(clan__isnull=False).values_list("player_id", "clan_id"))
    totals = PlayerTotal.objects.filter(season=season, player__banned_at__isnull=True)
    for total in totals.select_related("season__board"):
        if total.player_id in values:
            segment = f"country:{values[total.player_id]}"
            expected.setdefault(segment, {})[total.player_id] = expected_composite(total)
        if total.player_id in clans:
            members = f"clan:{clans[total.player_id]}"
            expected.setdefault(members, {})[total.player_id] = expected_composite(total)
            standing = expected.setdefault("clans", {})
            clan = clans[total.player_id]
            if board.score_operator == ScoreOperator.BEST:
                standing[clan] = max(standing.get(clan, 0), expected_composite(total))
            else:
                signed = -total.points if board.lowest_first else total.points
                standing[clan] = standing.get(clan, 0) + signed * TIME_SLOTS
    return expected


def _held(season):
    keys = store.season_keys(season.pk)
    held = {}
    for name in [*store.client().smembers(keys.segment_names), "clans"]:
        members = store.client().zrange(f"{keys.standings}:{name}", 0, -1, withscores=True)
        if members:
            held[name] = {player: int(score) for player, score in members}
    return held


# The same histories on every run (as the other property tests here). One random run of the
# suite found a player's last result missing from their new segment: voided off the board, the
# player kept the values Redis held, which their move (owing no refresh of a season they had no
# standing in) left stale. It needed a player who had changed values before (one carried over from
# an earlier example); the examples below start from such a player, banned meanwhile or not.
@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=st.lists(operation, min_size=1, max_size=16), rule=st.sampled_from(BOARDS))
@example(
    history=[
        ("move", "b", "FR"),
        ("result", "b", 1),
        ("void", 0),
        ("move", "b", "DE"),
        ("result", "b", 1),
    ],
    rule=(ScoreOperator.SUM, SortOrder.HIGHEST_FIRST),
)
@example(
    history=[
        ("join", "b", "red"),
        ("result", "b", 1),
        ("ban", "b"),
        ("void", 0),
        ("unban", "b"),
        ("move", "b", "DE"),
        ("result", "b", 1),
    ],
    rule=(ScoreOperator.BEST, SortOrder.HIGHEST_FIRST),
)
def test_segment_sets_hold_exactly_what_postgresql_has(
    history, rule, server, django_capture_on_commit_callbacks
):
    slug = f"prop-{next(_boards)}"
    board = BoardFactory(
        slug=slug, segment_dimensions=["country"], score_operator=rule[0], sort_order=rule[1]
    )
    season = SeasonFactory(board=board)
    # Players carry over from the examples before: each starts unbanned and in no segment.
    for player_id in PLAYERS:
        Player.objects.get_or_create(player_id=player_id)
    Player.objects.filter(player_id__in=PLAYERS).update(
        banned_at=None, banned_until=None, clan=None
    )
    for clan in CLANS[:-1]:
        Clan.objects.get_or_create(clan_id=clan)
    PlayerSegment.objects.filter(player_id__in=PLAYERS).delete()
    matches = itertools.count()
    for step in history:
        with django_capture_on_commit_callbacks(execute=True):
            if step[0] == "result":
                ended = season.starts_at + timedelta(seconds=next(matches) + 1)
                posted = server.post(
                    "/api/v1/scores",
                    {
                        "board": slug,
                        "player_id": step[1],
                        "points": step[2],
                        "match_id": f"{slug}-{ended.timestamp()}",
                        "ended_at": ended.isoformat(),
                    },
                    format="json",
                )
                assert posted.status_code == 201, posted.content
            elif step[0] == "move":
                moved = server.put(
                    f"/api/v1/players/{step[1]}",
                    {"segments": {"country": step[2]}},
                    format="json",
                )
                assert moved.status_code in (200, 201), moved.content
            elif step[0] == "join":
                joined = server.put(f"/api/v1/players/{step[1]}", {"clan": step[2]}, format="json")
                assert joined.status_code in (200, 201), joined.content
            elif step[0] == "ban":
                player_ban(player_id=step[1], reason="property", actor=None)
            elif step[0] == "unban":
                player_unban(player_id=step[1], reason="property", actor=None)
            elif step[0] == "void":
                results = list(
                    MatchResult.objects.filter(season=season, voided_at__isnull=True).order_by("pk")
                )
                if results:
                    result = results[step[1] % len(results)]
                    result_void(result_id=result.pk, reason="property", actor=None)
            else:
                services.season_rebuild_standings(season=season)
        # After every step, not only at the end: a later rebuild or move would hide a drift.
        assert _held(season) == _expected(season), step
