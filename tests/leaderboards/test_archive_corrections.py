"""Correcting a closed season's archive after a ban or a void: the preview writes nothing, the
correction re-ranks the archive and its rewards by the close's rule, marks the rows it changed,
is audited and told to the webhooks in its transaction, and a second one changes nothing."""

import csv
import io
from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.utils import timezone

from audit.models import OperatorAction
from config.building_blocks.errors import Conflict
from leaderboards import closing, store
from leaderboards.archive_corrections import (
    Move,
    season_archive_correct,
    season_archive_correction_preview,
)
from leaderboards.exports import standings_export_csv, standings_export_parquet
from leaderboards.models import ArchivedStanding, SeasonReward
from matches.corrections import result_void
from matches.models import MatchResult
from matches.services import player_ban
from seasons.models import Season
from tests.factories import SeasonFactory, WebhookEndpointFactory, rewarded_board
from tests.staff import staff
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed(post_scores):
    """A closed season of ten players, p00 (100 points) to p09 (91), and p05's bonus of 20 that
    puts them first (115); tiers gold 1, silver 2-3, top-half 50%."""
    now = timezone.now().replace(microsecond=0)
    board = rewarded_board("arena")
    season = SeasonFactory(
        board=board,
        slug="past",
        starts_at=now - timedelta(days=7),
        ends_at=now + timedelta(hours=1),
        grace_period=timedelta(0),
    )
    body = [
        {
            "board": "arena",
            "player_id": f"p{i:02d}",
            "points": 100 - i,
            "match_id": f"m{i}",
            "ended_at": (season.starts_at + timedelta(seconds=100 - i)).isoformat(),
        }
        for i in range(10)
    ]
    body.append(
        {
            "board": "arena",
            "player_id": "p05",
            "points": 20,
            "match_id": "bonus",
            "ended_at": (season.starts_at + timedelta(seconds=200)).isoformat(),
        }
    )
    assert post_scores(body).status_code == 200
    return closing.season_close(season=season, force=True)


def archive(season):
    return list(
        ArchivedStanding.objects.filter(season=season)
        .order_by("rank")
        .values_list("rank", "player_id", "points", "closed_rank", "corrected_at")
    )


def rewards(season):
    return sorted(
        SeasonReward.objects.filter(season=season).values_list("player_id", "rank", "reward_code")
    )


def written(season):
    """Everything a correction may write, to compare before and after."""
    return (
        list(
            ArchivedStanding.objects.filter(season=season)
            .order_by("rank")
            .values_list("rank", "competition_rank", "player_id", "points", "reached_at")
        ),
        list(
            SeasonReward.objects.filter(season=season)
            .order_by("segment", "rank")
            .values_list("player_id", "rank", "reward_code", "awarded_at")
        ),
        list(OperatorAction.objects.filter(action="correct_archive").values_list("pk")),
        list(WebhookEvent.objects.filter(type="archive.corrected").values_list("pk")),
        Season.objects.get(pk=season.pk).archived_players,
    )


BEFORE_REWARDS = [
    ("p00", 2, "silver"),
    ("p01", 3, "silver"),
    ("p02", 4, "top-half"),
    ("p03", 5, "top-half"),
    ("p05", 1, "gold"),
]


def test_the_preview_after_a_ban_lists_who_moves_and_the_rewards_and_writes_nothing(closed):
    assert rewards(closed) == BEFORE_REWARDS
    player_ban(player_id="p00", reason="aimbot")
    before = written(closed)

    preview = season_archive_correction_preview(season=closed, limit=3)

    assert (preview.players_before, preview.players_after, preview.moved) == (10, 9, 9)
    assert preview.moves == [
        Move("p00", 2, None, 100, None),
        Move("p01", 3, 2, 99, 99),
        Move("p02", 4, 3, 98, 98),
    ]
    assert preview.next_offset == 3
    assert [
        (c.kind, c.player_id, c.old_reward_code, c.new_reward_code) for c in preview.reward_changes
    ] == [
        ("revoked", "p00", "silver", None),
        ("changed", "p02", "top-half", "silver"),
        ("granted", "p04", None, "top-half"),
    ]
    assert preview.rewards == {"revoked": 1, "changed": 1, "granted": 1, "re-ranked": 2}
    assert written(closed) == before


def test_a_correction_after_a_ban_re_ranks_the_archive_and_its_rewards(closed):
    endpoint = WebhookEndpointFactory()
    player_ban(player_id="p00", reason="aimbot")
    now = timezone.now()
    awarded = SeasonReward.objects.get(season=closed, player_id="p01").awarded_at

    correction = season_archive_correct(season=closed, actor=None, reason="cheater", now=now)

    assert correction.applied_at == now
    assert archive(closed) == [
        (1, "p05", 115, None, None),
        (2, "p01", 99, 3, now),
        (3, "p02", 98, 4, now),
        (4, "p03", 97, 5, now),
        (5, "p04", 96, 6, now),
        (6, "p06", 94, 7, now),
        (7, "p07", 93, 8, now),
        (8, "p08", 92, 9, now),
        (9, "p09", 91, 10, now),
    ]
    assert rewards(closed) == [
        ("p01", 2, "silver"),
        ("p02", 3, "silver"),
        ("p03", 4, "top-half"),
        ("p04", 5, "top-half"),
        ("p05", 1, "gold"),
    ]
    # A reward that only follows its player's rank keeps the time it was given.
    assert SeasonReward.objects.get(season=closed, player_id="p01").awarded_at == awarded
    assert SeasonReward.objects.get(season=closed, player_id="p02").awarded_at == now
    season = Season.objects.get(pk=closed.pk)
    assert season.archived_players == 9
    assert season.standings_removed_at == now
    (audit,) = OperatorAction.objects.filter(action="correct_archive")
    assert (audit.actor_name, audit.board, audit.season, audit.reason) == (
        "system",
        "arena",
        "past",
        "cheater",
    )
    assert audit.details["moves"] == 9
    assert audit.details["rewards_listed"] == [
        {"kind": "revoked", "player_id": "p00", "rank": 2, "reward_code": "silver"},
        {
            "kind": "changed",
            "player_id": "p02",
            "old_rank": 4,
            "new_rank": 3,
            "old_reward_code": "top-half",
            "new_reward_code": "silver",
        },
        {"kind": "granted", "player_id": "p04", "rank": 5, "reward_code": "top-half"},
    ]
    (event,) = WebhookEvent.objects.filter(type="archive.corrected")
    assert event.deliveries.get().endpoint_id == endpoint.pk
    assert event.data == {
        "board": "arena",
        "season": "past",
        "season_id": closed.pk,
        "corrected_at": now.isoformat(),
        "page": 1,
        "pages": 1,
        "summary": {
            "players_before": 10,
            "players_after": 9,
            "moves": 9,
            "rewards_revoked": 1,
            "rewards_granted": 1,
            "rewards_changed": 1,
            "rewards_reranked": 2,
            "clans_changed": 0,
            "segment_rows_changed": 0,
        },
        "rewards": {
            "revoked": [{"player_id": "p00", "rank": 2, "reward_code": "silver"}],
            "granted": [{"player_id": "p04", "rank": 5, "reward_code": "top-half"}],
            "changed": [
                {
                    "player_id": "p02",
                    "old_rank": 4,
                    "new_rank": 3,
                    "old_reward_code": "top-half",
                    "new_reward_code": "silver",
                }
            ],
        },
        "clans": [],
        "moves": [
            {
                "player_id": "p00",
                "old_rank": 2,
                "new_rank": None,
                "old_points": 100,
                "new_points": None,
            },
            *(
                {
                    "player_id": player,
                    "old_rank": rank + 1,
                    "new_rank": rank,
                    "old_points": points,
                    "new_points": points,
                }
                for rank, player, points in (
                    (2, "p01", 99),
                    (3, "p02", 98),
                    (4, "p03", 97),
                    (5, "p04", 96),
                    (6, "p06", 94),
                    (7, "p07", 93),
                    (8, "p08", 92),
                    (9, "p09", 91),
                )
            ),
        ],
    }


def test_a_second_correction_changes_nothing_and_writes_nothing(closed):
    WebhookEndpointFactory()
    player_ban(player_id="p00", reason="aimbot")
    season_archive_correct(season=closed, actor=None)
    before = written(closed)

    again = season_archive_correct(season=closed, actor=None)

    assert again.changes_nothing
    assert again.applied_at is None
    assert written(closed) == before
    assert season_archive_correction_preview(season=closed).changes_nothing


def test_a_correction_after_a_void_moves_the_player_down_by_their_corrected_total(closed):
    bonus = MatchResult.objects.get(match_id="bonus")
    result_void(result_id=bonus.pk, reason="duplicate match", actor=None)
    now = timezone.now()

    correction = season_archive_correct(season=closed, actor=None, now=now)

    assert correction.moves == [
        Move("p05", 1, 6, 115, 95),
        Move("p00", 2, 1, 100, 100),
        Move("p01", 3, 2, 99, 99),
        Move("p02", 4, 3, 98, 98),
        Move("p03", 5, 4, 97, 97),
        Move("p04", 6, 5, 96, 96),
    ]
    assert [row[:4] for row in archive(closed)] == [
        (1, "p00", 100, 2),
        (2, "p01", 99, 3),
        (3, "p02", 98, 4),
        (4, "p03", 97, 5),
        (5, "p04", 96, 6),
        (6, "p05", 95, 1),
        (7, "p06", 94, None),
        (8, "p07", 93, None),
        (9, "p08", 92, None),
        (10, "p09", 91, None),
    ]
    # The void's note stays on the corrected row.
    assert (
        "voided after the close"
        in ArchivedStanding.objects.get(season=closed, player_id="p05").note
    )
    assert rewards(closed) == [
        ("p00", 1, "gold"),
        ("p01", 2, "silver"),
        ("p02", 3, "silver"),
        ("p03", 4, "top-half"),
        ("p04", 5, "top-half"),
    ]
    assert ArchivedStanding.objects.get(season=closed, player_id="p05").reached_at == (
        closed.starts_at + timedelta(seconds=95)
    )


def test_a_later_correction_keeps_the_rank_the_close_gave(closed):
    player_ban(player_id="p00", reason="aimbot")
    season_archive_correct(season=closed, actor=None)
    player_ban(player_id="p01", reason="aimbot too")

    season_archive_correct(season=closed, actor=None)

    assert [row[:4] for row in archive(closed)][:3] == [
        (1, "p05", 115, None),
        (2, "p02", 98, 4),
        (3, "p03", 97, 5),
    ]


def test_a_season_not_closed_is_refused_and_nothing_is_written(season, post_scores):
    post_scores({"player_id": "p1", "points": 5, "match_id": "m"})

    for correct in (
        lambda: season_archive_correction_preview(season=season),
        lambda: season_archive_correct(season=season, actor=None),
    ):
        with pytest.raises(Conflict) as refused:
            correct()
        assert refused.value.code == "season_not_closed"
    assert not ArchivedStanding.objects.filter(season=season).exists()
    assert not OperatorAction.objects.filter(action="correct_archive").exists()


def test_a_correction_removes_the_kept_sorted_set_so_reads_are_the_archives(
    closed, client, django_capture_on_commit_callbacks
):
    assert store.board_size(closed.pk, shards=closed.shards) == 10
    player_ban(player_id="p00", reason="aimbot")

    with django_capture_on_commit_callbacks(execute=True):
        season_archive_correct(season=closed, actor=None)

    assert store.board_size(closed.pk, shards=closed.shards) == 0
    top = client.get("/api/v1/leaderboard/top", {"board": "arena", "season": "past", "limit": 3})
    assert top.status_code == 200
    assert [(e["rank"], e["player_id"], e.get("corrected")) for e in top.json()["entries"]] == [
        (1, "p05", None),
        (2, "p01", True),
        (3, "p02", True),
    ]


def test_the_command_prints_the_preview_and_applies_with_apply(closed, capsys):
    player_ban(player_id="p00", reason="aimbot")

    call_command("correct_archive", "arena", "past")
    printed = capsys.readouterr().out
    assert "9 standings change" in printed
    assert "revoked  p00 silver (rank 2)" in printed
    assert ArchivedStanding.objects.filter(season=closed, player_id="p00").exists()

    call_command("correct_archive", "arena", "past", "--apply")
    assert "Corrected" in capsys.readouterr().out
    assert not ArchivedStanding.objects.filter(season=closed, player_id="p00").exists()
    assert OperatorAction.objects.get(action="correct_archive").actor_name == "system"


def test_a_ban_corrects_the_archives_of_a_board_that_asks_for_it(
    closed, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p00", reason="aimbot")
    assert ArchivedStanding.objects.filter(season=closed, player_id="p00").exists()

    closed.board.correct_archive_on_ban = True
    closed.board.save(update_fields=["correct_archive_on_ban"])
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p01", reason="aimbot")

    assert [row[1] for row in archive(closed)][:3] == ["p05", "p02", "p03"]
    (audit,) = OperatorAction.objects.filter(action="correct_archive")
    assert audit.reason == "automatic, after the ban of p01"


def test_corrected_rows_are_marked_in_the_history_the_exports_and_the_pages(closed, client):
    player_ban(player_id="p00", reason="aimbot")
    season_archive_correct(season=closed, actor=None)

    history = client.get("/api/v1/players/p01/seasons").json()["seasons"]
    assert [(h["season"], h["final_rank"], h["corrected"], h["closed_rank"]) for h in history] == [
        ("past", 2, True, 3)
    ]
    (untouched,) = client.get("/api/v1/players/p05/seasons").json()["seasons"]
    assert (untouched["final_rank"], untouched["corrected"], untouched["closed_rank"]) == (
        1,
        False,
        None,
    )
    rank = client.get("/api/v1/leaderboard/players/p01", {"board": "arena", "season": "past"})
    assert (rank.json()["rank"], rank.json()["corrected"]) == (2, True)

    text = io.StringIO()
    standings_export_csv(season=closed, out=text)
    rows = list(csv.DictReader(io.StringIO(text.getvalue())))
    assert [(r["rank"], r["player_id"], r["corrected"], r["closed_rank"]) for r in rows[:2]] == [
        ("1", "p05", "false", ""),
        ("2", "p01", "true", "3"),
    ]
    data = io.BytesIO()
    standings_export_parquet(season=closed, out=data)
    table = pq.read_table(io.BytesIO(data.getvalue()))
    assert table.column("corrected").to_pylist()[:2] == [False, True]
    assert table.column("closed_rank").to_pylist()[:2] == [None, 3]

    page = client.get("/players/p01/").content.decode()
    assert 'class="corrected" title="Corrected after the close (a ban or a void): #3 at' in page
    board_page = client.get("/boards/arena/seasons/past/").content.decode()
    assert board_page.count('class="corrected"') == 8


def admin_page(closed) -> str:
    return f"/admin/seasons/season/{closed.pk}/archive-correction/"


def test_a_view_only_account_sees_the_preview_but_cannot_correct(closed, client):
    looker = staff(client, "support", every_view=True)
    player_ban(player_id="p00", reason="aimbot")
    before = written(closed)

    page = looker.get(admin_page(closed))
    forged = looker.post(admin_page(closed), {"reason": "forged"})
    action = looker.post(
        "/admin/seasons/season/", {"action": "correct_archive", "_selected_action": [closed.pk]}
    )

    assert page.status_code == 200
    assert page.context["preview"].moved == 9
    assert "Yes, correct the archive" not in page.content.decode()
    assert forged.status_code == 403
    # Back to the list: the account is offered no such action.
    assert (action.status_code, action["Location"]) == (302, "/admin/seasons/season/")
    assert written(closed) == before
    assert ArchivedStanding.objects.filter(season=closed, player_id="p00").exists()


def test_the_correct_archive_permission_corrects_from_the_preview_page(closed, client):
    operator = staff(client, "operator", "view_season", "correct_archive")
    player_ban(player_id="p00", reason="aimbot")

    opened = operator.post(
        "/admin/seasons/season/", {"action": "correct_archive", "_selected_action": [closed.pk]}
    )
    assert opened.status_code == 302 and opened["Location"] == admin_page(closed)
    assert "Yes, correct the archive" in operator.get(admin_page(closed)).content.decode()

    done = operator.post(admin_page(closed), {"reason": "caught after the close"})

    assert done.status_code == 302
    assert not ArchivedStanding.objects.filter(season=closed, player_id="p00").exists()
    (audit,) = OperatorAction.objects.filter(action="correct_archive")
    assert (audit.actor_name, audit.reason) == ("operator", "caught after the close")
