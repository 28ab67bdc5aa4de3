"""Who passed whom between two ticks (leaderboards/live/rank_events.py: passes_find marks the
followed players passed, passers_fill finds who passed them), against the definition itself: a
followed player was passed by every other player whose move started below them and ended above
them, and a message names the nearest of those."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboards.live import rank_events
from leaderboards.live.pass_log import MAX_KEPT_MOVES, PassLog
from leaderboards.live.season_sockets import SeasonSockets
from seasons.models import Season

PLAYERS = [f"p{i}" for i in range(12)]
composites = st.integers(min_value=0, max_value=30)


def _sockets(followed: dict[str, int], moves: list[tuple[str, int | None, int]]) -> SeasonSockets:
    sockets = SeasonSockets(season=Season(pk=1, slug="s1"))
    for player_id, composite in followed.items():
        sockets.player_followers[player_id] = set()
        sockets.standing_tell(player_id, (1, composite))
    sockets.moves_pending = list(moves)
    return sockets


def _passers(followed: dict[str, int], moves: list[tuple[str, int | None, int]]) -> dict:
    """Each followed player's passers, by the lowest end of the moves that passed them."""
    passed: dict[str, dict[str, int]] = {}
    for player_id, composite in followed.items():
        for mover, before, after in moves:
            start = (float("-inf"), "") if before is None else (before, mover)
            if mover != player_id and start < (composite, player_id) < (after, mover):
                mine = passed.setdefault(player_id, {})
                mine[mover] = min(mine.get(mover, after), after)
    return passed


@settings(max_examples=300, deadline=None)
@given(
    followed=st.dictionaries(st.sampled_from(PLAYERS), composites, max_size=8),
    moves=st.lists(
        st.tuples(st.sampled_from(PLAYERS), st.none() | composites, composites), max_size=14
    ).filter(lambda moves: all(sum(m[0] == p for m in moves) <= 2 for p in PLAYERS)),
)
def test_passes_are_every_pass_and_the_nearest_passers_are_kept(followed, moves):
    expected = _passers(followed, moves)
    sockets = _sockets(followed, moves)

    passed = rank_events.passes_find(sockets)
    rank_events.passers_fill(sockets, passed)

    assert sorted(passed) == sorted(expected)
    assert len(passed) == len(set(passed))
    for player_id, passers in expected.items():
        kept = sockets.passed_by[player_id]
        assert set(kept) <= set(passers), "only players who passed are kept"
        nearest = min(passers, key=lambda mover: (passers[mover], mover))
        assert nearest in kept
        # Each mover moves at most twice here: the nearest 5 distinct passers are all kept.
        assert len(kept) >= min(rank_events.OVERTAKEN_BY, len(passers))
    assert set(sockets.passed_by) == set(expected)
    assert sockets.moves_pending == []


def test_a_move_that_passes_thousands_costs_one_entry_per_player_passed():
    followed = {f"f{i}": 10 * i for i in range(5000)}
    moves = [(f"m{i}", -1, 50_000 + i) for i in range(600)]  # each passes every followed player
    sockets = _sockets(followed, moves)

    passed = rank_events.passes_find(sockets)
    rank_events.passers_fill(sockets, passed)

    assert len(passed) == 5000
    # The nearest passers of the lowest followed player above every start are the lowest ends.
    assert sorted(sockets.passed_by["f100"], key=sockets.passed_by["f100"].get)[:3] == [
        "m0",
        "m1",
        "m2",
    ]
    assert all(len(kept) <= 2 * rank_events.OVERTAKEN_BY + 1 for kept in sockets.passed_by.values())


def test_a_tick_reads_as_many_passed_players_as_the_budget_can_tell_the_longest_waiting_first():
    sockets = _sockets({"a": 10, "b": 20, "c": 30, "d": 40}, [("climber", 5, 99)])
    sockets.player_told_at = {"a": 30.0, "b": 10.0, "c": 20.0}  # "d" never told
    rank_events.passes_find(sockets)

    assert rank_events.passed_to_read(sockets, 2) == ["d", "b"]
    assert sorted(rank_events.passed_to_read(sockets, 10)) == ["a", "b", "c", "d"]
    assert rank_events.passed_to_read(sockets, 0) == []
    # Only the players read have their passers found and read.
    assert rank_events.passers_to_read(sockets, ["b"]) == ["climber"]
    assert sockets.passed_by == {"b": {"climber": 99}}
    assert rank_events.passers_to_read(sockets, ["nobody"]) == []


def test_passes_over_many_ticks_are_found_when_the_player_is_told_and_then_let_go():
    sockets = _sockets({"waiting": 100, "other": 500}, [("first", 50, 150)])
    assert rank_events.passes_find(sockets) == ["waiting"]
    # Later ticks: more passes of the player not told yet, and a fall that passes no one.
    sockets.moves_pending = [("second", None, 120), ("faller", 400, 90)]
    assert rank_events.passes_find(sockets) == ["waiting"]
    sockets.moves_pending = [("third", 90, 600)]
    assert rank_events.passes_find(sockets) == ["waiting", "other"]

    assert rank_events.passers_to_read(sockets, ["waiting"]) == ["second", "first", "third"]
    assert sockets.passed_by["waiting"] == {"second": 120, "first": 150, "third": 600}

    # Told: their passes are forgotten, and the moves only they needed let go at the next tick.
    rank_events.passes_forget(sockets, "waiting")
    rank_events.passes_forget(sockets, "other")
    assert rank_events.passes_find(sockets) == []
    assert sockets.pass_log.movers == []
    assert sockets.passed_since == {}
    assert sockets.passed_by == {}


def test_a_players_own_move_is_no_pass_of_them():
    sockets = _sockets({"self": 100}, [("self", 50, 150)])
    sockets.standing_tell("self", (1, 100))  # told before the notice of its own rise came

    assert rank_events.passes_find(sockets) == []
    assert sockets.passed_since == {}


def test_the_kept_moves_are_bounded_and_the_oldest_passes_go_untold():
    log = PassLog()
    log.append([(f"m{i}", 0, 10 + i) for i in range(MAX_KEPT_MOVES + 10)])

    log.trim(0)  # a pass not told yet since the first move: only the newest are kept

    assert (log.base, len(log.movers), len(log.afters)) == (10, MAX_KEPT_MOVES, MAX_KEPT_MOVES)
    assert sorted(log.numbers.tolist()) == list(range(10, MAX_KEPT_MOVES + 10))
    # A player at 5 was passed by every move; the nearest kept ends at 20 (m10's).
    assert log.passers("p", 5, 0, 3) == {"m10": 20, "m11": 21, "m12": 22}
