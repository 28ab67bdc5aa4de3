"""The changes that tell the webhooks, each in its own transaction: a ban and an unban, a void,
and a season's close with its archive's summary and its rewards in pages (each reward in
exactly one page). A change that does nothing tells no one."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from config.building_blocks.errors import InvalidInput
from leaderboards import closing, rewards
from leaderboards.archive_corrections import season_archive_correct
from leaderboards.models import SeasonReward
from matches.corrections import result_void
from matches.models import MatchResult
from matches.services import player_ban, player_unban, players_unban_expired
from seasons.models import Season
from tests.factories import (
    BoardFactory,
    PlayerFactory,
    SeasonFactory,
    WebhookEndpointFactory,
    rewarded_board,
)
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


def told(receiver) -> list[dict]:
    """The events the receiver got, as sent, in the order they arrived; but for the top-N
    crossings of the results that set each scene (test_thresholds.py tells those)."""
    events = [json.loads(post.body) for post in receiver.received]
    return [event for event in events if event["type"] != "player.threshold"]


def test_a_ban_and_an_unban_are_told_with_the_player_and_reason(
    endpoint, receiver, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    until = (timezone.now() + timedelta(days=1)).replace(microsecond=0)

    with django_capture_on_commit_callbacks(execute=True):
        banned = player_ban(player_id="cheat", reason="aimbot", until=until)
    with django_capture_on_commit_callbacks(execute=True):
        player_unban(player_id="cheat", reason="appeal granted")

    ban, unban = told(receiver)
    assert (ban["type"], ban["data"]) == (
        "player.banned",
        {
            "player_id": "cheat",
            "reason": "aimbot",
            "banned_at": banned.banned_at.isoformat(),
            "until": until.isoformat(),
        },
    )
    assert unban["type"] == "player.unbanned"
    assert unban["data"]["unbanned_at"] >= ban["data"]["banned_at"]
    assert {k: v for k, v in unban["data"].items() if k != "unbanned_at"} == {
        "player_id": "cheat",
        "reason": "appeal granted",
        "ban_reason": "aimbot",
    }
    assert WebhookEvent.objects.filter(board__isnull=True).count() == 2


def test_a_ban_that_changes_nothing_or_fails_tells_no_one(
    endpoint, receiver, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "fair", "points": 20, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")
    WebhookEvent.objects.all().delete()
    receiver.received.clear()

    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")  # the same ban again
        player_unban(player_id="fair")  # never banned
    with pytest.raises(InvalidInput):
        player_ban(player_id="cheat", reason="x", until=timezone.now() - timedelta(hours=1))

    assert not WebhookEvent.objects.exists()
    assert receiver.received == []


def test_a_temporary_ban_lifted_by_the_periodic_task_is_told(
    endpoint, receiver, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    end = timezone.now() + timedelta(minutes=5)
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="smurfing", until=end)

    with django_capture_on_commit_callbacks(execute=True):
        players_unban_expired(now=end + timedelta(seconds=1))

    assert [(e["type"], e["data"]["reason"]) for e in told(receiver)] == [
        ("player.banned", "smurfing"),
        ("player.unbanned", "temporary ban ended"),
    ]


def test_a_void_is_told_to_the_endpoints_of_its_board(
    make_receiver, post_scores, season, django_capture_on_commit_callbacks
):
    # given: an endpoint of the result's board and one of another board
    ours, theirs = make_receiver(), make_receiver()
    WebhookEndpointFactory(url=ours.url, boards=[season.board])
    WebhookEndpointFactory(url=theirs.url, boards=[BoardFactory(slug="other")])
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m2"})
    voided = MatchResult.objects.get(match_id="m1")

    # when
    with django_capture_on_commit_callbacks(execute=True):
        assert result_void(result_id=voided.pk, reason="aimbot", actor=None) is True
    # and: voided again, nothing changes and nothing is told
    with django_capture_on_commit_callbacks(execute=True):
        assert result_void(result_id=voided.pk, reason="aimbot", actor=None) is False

    # then
    (event,) = told(ours)
    voided.refresh_from_db()
    assert (event["type"], event["data"]) == (
        "result.voided",
        {
            "result_id": voided.pk,
            "match_id": "m1",
            "player_id": "cheat",
            "board": "global",
            "season": "s1",
            "season_id": season.pk,
            "points": 90,
            "was_counted": True,
            "total_before": 100,
            "total_after": 10,
            "season_closed": False,
            "reason": "aimbot",
            "voided_at": voided.voided_at.isoformat(),
        },
    )
    assert theirs.received == []


@pytest.fixture
def ended(post_scores):
    """A global season that ended an hour ago with 12 players, p00 first with 100 points down
    to p11 with 89; gold for rank 1, silver for ranks 2-3 and top-half for the rest of the top
    half: six rewards."""
    now = timezone.now().replace(microsecond=0)
    board = rewarded_board("global")
    season = SeasonFactory(
        board=board,
        slug="past",
        starts_at=now - timedelta(days=7),
        ends_at=now + timedelta(hours=1),
        grace_period=timedelta(minutes=10),
    )
    body = [
        {
            "player_id": f"p{i:02d}",
            "points": 100 - i,
            "match_id": "m",
            "season": "past",
            "ended_at": (season.starts_at + timedelta(seconds=100 - i)).isoformat(),
        }
        for i in range(12)
    ]
    assert post_scores(body).status_code == 200
    Season.objects.filter(pk=season.pk).update(ends_at=now - timedelta(hours=1))
    season.refresh_from_db()
    return season


def test_a_close_tells_its_summary_then_every_reward_once_in_pages(
    endpoint, receiver, ended, monkeypatch, django_capture_on_commit_callbacks
):
    # given: pages of 4 rewards (500 in production), so six rewards take two pages
    monkeypatch.setattr(rewards, "REWARDS_PER_EVENT", 4)

    # when
    with django_capture_on_commit_callbacks(execute=True):
        season = closing.season_close(season=ended)

    # then: the close's summary
    events = sorted(
        told(receiver), key=lambda e: (e["type"] != "season.closed", e["data"].get("page"))
    )
    closed, *pages = events
    assert closed["type"] == "season.closed"
    assert closed["data"] == {
        "board": "global",
        "season": "past",
        "season_id": season.pk,
        "starts_at": season.starts_at.isoformat(),
        "ends_at": season.ends_at.isoformat(),
        "closed_at": season.closed_at.isoformat(),
        "archive": {
            "players": 12,
            "top": [
                {"rank": 1, "player_id": "p00", "points": 100},
                {"rank": 2, "player_id": "p01", "points": 99},
                {"rank": 3, "player_id": "p02", "points": 98},
            ],
            "rewards": 6,
        },
    }
    # and: the rewards in two pages, each reward in exactly one
    assert [(p["type"], p["data"]["page"], p["data"]["pages"]) for p in pages] == [
        ("rewards.granted", 1, 2),
        ("rewards.granted", 2, 2),
    ]
    assert [len(p["data"]["rewards"]) for p in pages] == [4, 2]
    told_rewards = [
        (r["player_id"], r["rank"], r["reward_code"]) for p in pages for r in p["data"]["rewards"]
    ]
    assert told_rewards == [
        ("p00", 1, "gold"),
        ("p01", 2, "silver"),
        ("p02", 3, "silver"),
        ("p03", 4, "top-half"),
        ("p04", 5, "top-half"),
        ("p05", 6, "top-half"),
    ]
    assert sorted(told_rewards) == sorted(
        SeasonReward.objects.filter(season=season).values_list("player_id", "rank", "reward_code")
    )
    assert {p["data"]["season_id"] for p in pages} == {season.pk}

    # and: closing it again tells nothing more
    with django_capture_on_commit_callbacks(execute=True):
        closing.season_close(season=season)
    assert len(told(receiver)) == 3


def test_a_segments_reward_names_its_segment(endpoint):
    # given: a season's rewards as a close wrote them, one of them of a segment
    season = SeasonFactory(board=BoardFactory(slug="global"))
    PlayerFactory(player_id="p1")
    PlayerFactory(player_id="p2")
    now = timezone.now()
    SeasonReward.objects.create(
        season=season, player_id="p1", rank=1, reward_code="gold", awarded_at=now
    )
    SeasonReward.objects.create(
        season=season,
        player_id="p2",
        rank=1,
        reward_code="best-de",
        awarded_at=now,
        segment="country:DE",
    )

    # when
    assert rewards.season_rewards_announce(season=season) == 2

    # then
    (page,) = WebhookEvent.objects.filter(type="rewards.granted").values_list("data", flat=True)
    assert page["rewards"] == [
        {"player_id": "p1", "rank": 1, "reward_code": "gold"},
        {"player_id": "p2", "rank": 1, "reward_code": "best-de", "segment": "country:DE"},
    ]
    assert (page["page"], page["pages"]) == (1, 1)


def test_rewards_are_told_in_pages_of_500():
    assert rewards.REWARDS_PER_EVENT == 500


def test_with_no_endpoint_wanting_it_nothing_is_written_and_no_reward_is_paged(
    db, monkeypatch, django_capture_on_commit_callbacks
):
    season = SeasonFactory(board=BoardFactory(slug="global"))
    PlayerFactory(player_id="p1")
    SeasonReward.objects.create(
        season=season, player_id="p1", rank=1, reward_code="gold", awarded_at=timezone.now()
    )
    paged = []
    monkeypatch.setattr(rewards, "_rewards_page", lambda *page: paged.append(page))

    with django_capture_on_commit_callbacks(execute=True):
        told_of = rewards.season_rewards_announce(season=season)
        player_ban(player_id="p1", reason="aimbot")

    assert told_of == 1
    assert paged == []
    assert not WebhookEvent.objects.exists()


def test_a_correction_after_a_ban_is_told_once_with_the_rewards_it_moved(
    endpoint, receiver, ended, django_capture_on_commit_callbacks
):
    # given: the season closed, then its winner is caught
    with django_capture_on_commit_callbacks(execute=True):
        season = closing.season_close(season=ended)
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p00", reason="aimbot")
    receiver.received.clear()

    # when: the archive is corrected, twice
    with django_capture_on_commit_callbacks(execute=True):
        season_archive_correct(season=season, actor=None)
    with django_capture_on_commit_callbacks(execute=True):
        season_archive_correct(season=season, actor=None)

    # then: one event, at the receiver, with the gold moved down to the next player
    (corrected,) = told(receiver)
    assert corrected["type"] == "archive.corrected"
    data = corrected["data"]
    assert (data["board"], data["season"], data["page"], data["pages"]) == ("global", "past", 1, 1)
    # (11 players left: gold 1, silver 2-3, top half ranks 1-6)
    assert data["rewards"] == {
        "revoked": [{"player_id": "p00", "rank": 1, "reward_code": "gold"}],
        "granted": [{"player_id": "p06", "rank": 6, "reward_code": "top-half"}],
        "changed": [
            {
                "player_id": "p01",
                "old_rank": 2,
                "new_rank": 1,
                "old_reward_code": "silver",
                "new_reward_code": "gold",
            },
            {
                "player_id": "p03",
                "old_rank": 4,
                "new_rank": 3,
                "old_reward_code": "top-half",
                "new_reward_code": "silver",
            },
        ],
    }
    assert (data["summary"]["players_before"], data["summary"]["players_after"]) == (12, 11)
