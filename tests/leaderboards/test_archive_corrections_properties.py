"""For random histories (results with ties, countries and clans, each board's scoring rule), a
closed season corrected after a ban and voids holds exactly the archive a close writes for the
same history without the cheater's and the voided results: the standings, the segments' and the
clans' ranks, the clans' rewards and every player's rewards, by the close's own code (a second
board fed that history and closed by season_close)."""

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboards import closing
from leaderboards.archive_corrections import season_archive_correct
from leaderboards.models import (
    ArchivedClanStanding,
    ArchivedSegmentStanding,
    ArchivedStanding,
    SeasonReward,
)
from matches.corrections import result_void
from matches.models import Clan, MatchResult
from matches.services import player_ban
from seasons.choices import ScoreOperator, SortOrder
from seasons.models import RewardTier
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

PLAYERS = ["a", "b", "c", "d", "e"]
CHEATER = "a"
_examples = itertools.count()

# (player, points, second of the season it ended at: few seconds, so ties are common, whether
# to void it after the close)
result = st.tuples(st.sampled_from(PLAYERS), st.integers(1, 5), st.integers(1, 4), st.booleans())
membership = st.tuples(st.sampled_from(["DE", "FR", None]), st.sampled_from(["red", "blue", None]))
RULES = [
    (ScoreOperator.SUM, SortOrder.HIGHEST_FIRST),
    (ScoreOperator.BEST, SortOrder.HIGHEST_FIRST),
    (ScoreOperator.SUM, SortOrder.LOWEST_FIRST),
    (ScoreOperator.BEST, SortOrder.LOWEST_FIRST),
]


def _board(slug, rule, now):
    board = BoardFactory(
        slug=slug, segment_dimensions=["country"], score_operator=rule[0], sort_order=rule[1]
    )
    for tier in (
        {"rank_from": 1, "rank_to": 1, "reward_code": "gold"},
        {"rank_from": 2, "rank_to": 3, "reward_code": "silver"},
        {"top_percent": 50, "reward_code": "top-half"},
        {
            "rank_from": 1,
            "rank_to": 1,
            "reward_code": "country-best",
            "segment_dimension": "country",
        },
        {
            "rank_from": 1,
            "rank_to": 1,
            "reward_code": "clan-best",
            "segment_dimension": "clan",
            "members_too": True,
        },
    ):
        RewardTier.objects.create(board=board, **tier)
    return SeasonFactory(
        board=board,
        slug="s",
        starts_at=now - timedelta(days=1),
        ends_at=now + timedelta(hours=1),
        grace_period=timedelta(0),
    )


def _archive(season):
    """The archive without its season's id, its marks and its rewards' times."""
    return {
        "standings": list(
            ArchivedStanding.objects.filter(season=season)
            .order_by("rank")
            .values_list("rank", "competition_rank", "player_id", "points", "reached_at")
        ),
        "segments": list(
            ArchivedSegmentStanding.objects.filter(season=season)
            .order_by("segment", "rank")
            .values_list("segment", "rank", "competition_rank", "player_id")
        ),
        "clans": list(
            ArchivedClanStanding.objects.filter(season=season)
            .order_by("rank")
            .values_list("clan_id", "rank", "competition_rank", "points", "members", "reward_code")
        ),
        "rewards": list(
            SeasonReward.objects.filter(season=season)
            .order_by("segment", "rank")
            .values_list("segment", "rank", "player_id", "reward_code")
        ),
    }


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=st.lists(result, min_size=1, max_size=12),
    memberships=st.lists(membership, min_size=len(PLAYERS), max_size=len(PLAYERS)),
    rule=st.sampled_from(RULES),
    banned=st.booleans(),
)
def test_a_corrected_archive_is_the_close_of_the_history_without_the_cheater(
    history, memberships, rule, banned, server, django_capture_on_commit_callbacks
):
    example = next(_examples)
    player = {name: f"x{example}-{name}" for name in PLAYERS}
    # One start for both seasons: a result's reached_at is its season's start plus its second.
    now = timezone.now().replace(microsecond=0)
    corrected = _board(f"corrected-{example}", rule, now)
    expected = _board(f"expected-{example}", rule, now)
    for clan in ("red", "blue"):
        Clan.objects.get_or_create(clan_id=clan)
    for name, (country, clan) in zip(PLAYERS, memberships, strict=True):
        profile = {"segments": {"country": country}, "clan": clan}
        answer = server.put(f"/api/v1/players/{player[name]}", profile, format="json")
        assert answer.status_code in (200, 201), answer.content

    def post(season, n, name, points, second):
        ended = season.starts_at + timedelta(seconds=second)
        with django_capture_on_commit_callbacks(execute=True):
            answer = server.post(
                "/api/v1/scores",
                {
                    "board": season.board.slug,
                    "player_id": player[name],
                    "points": points,
                    "match_id": f"m{n}",
                    "ended_at": ended.isoformat(),
                },
                format="json",
            )
        assert answer.status_code == 201, answer.content

    for n, (name, points, second, voided) in enumerate(history):
        post(corrected, n, name, points, second)
        # The other board never sees what the correction takes out.
        if not voided and not (banned and name == CHEATER):
            post(expected, n, name, points, second)
    corrected = closing.season_close(season=corrected, force=True)
    expected = closing.season_close(season=expected, force=True)

    for n, (_, _, _, voided) in enumerate(history):
        if voided:
            played = MatchResult.objects.get(season=corrected, match_id=f"m{n}")
            result_void(result_id=played.pk, reason="property", actor=None)
    if banned:
        player_ban(player_id=player[CHEATER], reason="property")
    season_archive_correct(season=corrected, actor=None)

    assert _archive(corrected) == _archive(expected)
    # And a second correction finds nothing to change.
    assert season_archive_correct(season=corrected, actor=None).changes_nothing
