"""Closing a season into archived standings and rewards: exact, checked, resumable."""

import copy
import csv
import io
import socket
from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from config.building_blocks.errors import Conflict
from leaderboards import closing, exports, store
from leaderboards.models import ArchivedStanding, SeasonReward
from matches.models import PendingPlayerRefresh, Player
from matches.services import player_ban, player_unban
from seasons.models import RewardTier, Season
from tests.factories import BoardFactory, SeasonFactory
from tests.leaderboards.closed_seasons import EXPECTED_ORDER, EXPECTED_REWARDS, archive, rewards

pytestmark = pytest.mark.django_db


def test_closing_archives_exact_standings_and_rewards(ended):
    season = closing.season_close(season=ended)

    assert (season.state, season.close_step, season.archived_players) == ("closed", "closed", 12)
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER
    assert archive(season)[-2:] == [(11, 11, "p06", 5), (12, 11, "p05", 5)]
    assert rewards(season) == EXPECTED_REWARDS
    total = ended.totals.get(player_id="p03")
    assert ArchivedStanding.objects.get(season=season, player_id="p03").reached_at == (
        total.reached_at
    )


def test_the_close_logs_how_long_each_step_took(ended, caplog):
    caplog.set_level("INFO", logger="leaderboards.closing")

    closing.season_close(season=ended)

    steps = [r.getMessage() for r in caplog.records if " in " in r.getMessage()]
    assert [m.split(": ")[1].split(" in ")[0] for m in steps] == [
        "mirrored",
        "snapshotted",
        "verified",
        "rewarded",
    ]
    assert all(m.startswith(f"season {ended.pk}: ") and m.endswith(" s") for m in steps)


@pytest.mark.parametrize("sort_order", ["highest_first", "lowest_first"])
def test_the_archive_holds_each_players_points_and_exact_time(post_scores, sort_order):
    # given: times with microseconds, which the ZSET holds as whole seconds
    now = timezone.now()
    season = SeasonFactory(
        board=BoardFactory(slug="timed", sort_order=sort_order),
        slug="timed",
        starts_at=now - timedelta(days=1, microseconds=345),
    )
    body = [
        {
            "board": "timed",
            "player_id": f"t{i}",
            "points": 10 * i,
            "match_id": f"m{i}",
            "ended_at": (season.starts_at + timedelta(seconds=i, microseconds=1 + i)).isoformat(),
        }
        for i in range(1, 5)
    ]
    assert post_scores(body).status_code == 200

    closed = closing.season_close(season=season, force=True)

    archived = ArchivedStanding.objects.filter(season=closed)
    assert sorted(archived.values_list("player_id", "points", "reached_at")) == sorted(
        closed.totals.values_list("player_id", "points", "reached_at")
    )
    best_first = ["t4", "t3", "t2", "t1"]
    expected = best_first if sort_order == "highest_first" else best_first[::-1]
    assert list(archived.order_by("rank").values_list("player_id", flat=True)) == expected


def test_of_overlapping_rank_ranges_the_one_starting_highest_wins(ended):
    # Ranks 2 and 3 are in "podium" (1-3) and in "silver" (2-3): silver starts higher. Rank 1 is
    # in "gold" (1-1) and "podium", which start alike: the range ending first, gold, wins.
    RewardTier.objects.create(board=ended.board, rank_from=1, rank_to=3, reward_code="podium")

    season = closing.season_close(season=ended)

    assert rewards(season) == EXPECTED_REWARDS


def test_a_close_that_committed_stays_done_when_the_channel_layer_fails(ended, settings, caplog):
    # A port bound but not listening: connecting to it is refused at once.
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        layers = copy.deepcopy(settings.CHANNEL_LAYERS)
        layers["default"]["CONFIG"]["hosts"] = [{"address": f"redis://127.0.0.1:{port}/0"}]
        settings.CHANNEL_LAYERS = layers

        season = closing.season_close(season=ended)

    assert (season.state, season.close_step) == ("closed", "closed")
    assert Season.objects.get(pk=ended.pk).state == "closed"
    assert len(rewards(season)) == 6
    assert "season_closed notice" in caplog.text


def test_closing_before_the_grace_period_ends_is_refused_unless_forced(post_scores, season):
    post_scores({"player_id": "p1", "points": 5, "match_id": "m"})

    with pytest.raises(Conflict) as error:
        closing.season_close(season=season)
    assert error.value.code == "season_not_over"
    assert Season.objects.get(pk=season.pk).state == "open"

    closed = closing.season_close(season=season, force=True)
    assert closed.state == "closed"
    assert closed.ends_at <= timezone.now()  # closed now: it ends now
    # The board has no next season: a result of after the close has no home.
    response = post_scores({"player_id": "p1", "points": 5, "match_id": "m2"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "no_active_season"


@pytest.mark.parametrize(
    "step", ["_mirror_pending", "_snapshot", "_verify", "_attach", "season_rewards_award"]
)
def test_a_close_killed_at_any_step_is_finished_by_the_next_run(ended, monkeypatch, step):
    real = getattr(closing, step)

    def crash(*args, **kwargs):
        real(*args, **kwargs)
        raise SystemExit(f"killed after {step}")

    monkeypatch.setattr(closing, step, crash)
    with pytest.raises(SystemExit):
        closing.season_close(season=ended)
    assert Season.objects.get(pk=ended.pk).state == "closing"

    monkeypatch.setattr(closing, step, real)
    season = closing.season_close(season=ended)

    assert season.state == "closed"
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER
    assert len(rewards(season)) == 6
    assert closing.season_close(season=season).state == "closed"
    assert ArchivedStanding.objects.filter(season=season).count() == 12


def test_unmirrored_results_are_mirrored_before_the_snapshot(server, ended):
    Season.objects.filter(pk=ended.pk).update(ends_at=timezone.now() + timedelta(hours=1))
    # committed, but the mirror task never ran
    server.post(
        "/api/v1/scores",
        {"player_id": "late", "points": 1000, "match_id": "x", "season": "past"},
        format="json",
    )
    Season.objects.filter(pk=ended.pk).update(ends_at=timezone.now() - timedelta(hours=1))
    ended.refresh_from_db()

    season = closing.season_close(season=ended)

    assert archive(season)[0] == (1, 1, "late", 1000)
    assert season.snapshot_attempts == 1


def test_a_corrupted_leaderboard_is_caught_and_rebuilt_before_archiving(ended):
    store.write_standings([store.StandingWrite(ended.pk, "ghost", 2**52)])
    store.compare_and_set(
        ended.pk, "p05", expected=store.scores_of(ended.pk, ["p05"])[0], composite=2**40
    )

    season = closing.season_close(season=ended)

    assert season.snapshot_attempts == 2
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER
    assert "ghost" not in rewards(season)


def test_an_unban_whose_refresh_was_lost_does_not_keep_the_season_from_closing(
    ended, django_capture_on_commit_callbacks
):
    # given: p00 banned, then unbanned by a process that died before the refresh was sent
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p00", reason="aimbot")
    with django_capture_on_commit_callbacks(execute=False):
        player_unban(player_id="p00", reason="appeal won")
    stuck = store.player_banned_in(ended.pk, "p00")

    season = closing.season_close(season=ended)

    assert stuck is True
    assert (season.state, season.snapshot_attempts) == ("closed", 1)
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER
    assert rewards(season) == EXPECTED_REWARDS
    assert SeasonReward.objects.filter(season=season).count() == 6
    assert not PendingPlayerRefresh.objects.exists()


def test_a_ban_state_redis_kept_without_a_refresh_owed_is_repaired_by_the_close(ended):
    # given: Redis holds p00 as banned and forgot p11's ban (a Redis restored from an older
    # copy), with no refresh owed for either
    store.players_ban({ended.pk: 1}, "p00")
    Player.objects.filter(player_id="p11").update(banned_at=timezone.now())

    season = closing.season_close(season=ended)

    assert (season.state, season.snapshot_attempts) == ("closed", 1)
    assert [row[2] for row in archive(season)] == [p for p in EXPECTED_ORDER if p != "p11"]
    assert rewards(season) == EXPECTED_REWARDS


def test_reads_of_a_closed_season_come_from_the_archive_after_the_key_is_gone(client, ended):
    closing.season_close(season=ended)
    urls = [
        "/api/v1/leaderboard/top?season=past&limit=5&offset=8",
        "/api/v1/leaderboard/top?season=past&rank_style=competition&offset=9",
        "/api/v1/leaderboard/players/p06?season=past",
        "/api/v1/leaderboard/players/p05?season=past&rank_style=competition",
        "/api/v1/leaderboard/players/p03/around?season=past&n=2",
    ]
    from_redis = [client.get(url).json() for url in urls]
    ranks_redis = client.post(
        "/api/v1/leaderboard/ranks?season=past", {"player_ids": ["p05", "zz", "p00"]}, format="json"
    ).json()

    assert closing.closed_standings_remove_expired() == 0
    assert closing.closed_standings_remove_expired(now=timezone.now() + timedelta(days=8)) == 1
    assert not store.standings_exist(ended.pk)
    from_archive = [client.get(url).json() for url in urls]
    ranks_archive = client.post(
        "/api/v1/leaderboard/ranks?season=past", {"player_ids": ["p05", "zz", "p00"]}, format="json"
    ).json()

    for redis_answer, archive_answer in zip(from_redis, from_archive, strict=True):
        redis_answer.pop("as_of", None)
        archive_answer.pop("as_of", None)
        assert archive_answer == redis_answer
    assert ranks_archive == ranks_redis
    assert from_archive[0]["entries"][0]["rank"] == 9
    assert from_archive[3]["rank"] == 11


def test_the_players_history_and_the_seasons_rewards(client, ended):
    closing.season_close(season=ended)

    history = client.get("/api/v1/players/p01/seasons").json()
    rewards_all = client.get("/api/v1/seasons/past/rewards").json()
    rewards_one = client.get("/api/v1/seasons/past/rewards?player_id=p00").json()

    assert history["player_id"] == "p01"
    [row] = history["seasons"]
    assert (row["board"], row["season"], row["final_rank"], row["points"], row["reward"]) == (
        "global",
        "past",
        2,
        99,
        "silver",
    )
    assert [(r["player_id"], r["rank"], r["reward_code"]) for r in rewards_all["rewards"]][:3] == [
        ("p00", 1, "gold"),
        ("p01", 2, "silver"),
        ("p02", 3, "silver"),
    ]
    assert [r["reward_code"] for r in rewards_one["rewards"]] == ["gold"]
    assert client.get("/api/v1/players/nobody/seasons").json() == {
        "player_id": "nobody",
        "seasons": [],
    }


def test_rewards_of_a_season_not_closed_yet_are_409(client, season):
    response = client.get("/api/v1/seasons/s1/rewards")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "season_not_closed"


def test_exports_to_csv_and_parquet(ended, tmp_path, capsys):
    closing.season_close(season=ended)

    call_command("export_standings", "--season", "past", "--output", str(tmp_path / "s.csv"))
    call_command(
        "export_standings",
        "--season",
        "past",
        "--format",
        "parquet",
        "--output",
        str(tmp_path / "s.parquet"),
    )

    rows = list(csv.DictReader(io.StringIO((tmp_path / "s.csv").read_text())))
    assert [r["player_id"] for r in rows] == EXPECTED_ORDER
    assert rows[0]["reward_code"] == "gold"
    table = pq.read_table(tmp_path / "s.parquet").to_pydict()
    assert table["player_id"] == EXPECTED_ORDER
    assert table["rank"] == list(range(1, 13))


def test_a_parquet_export_is_written_a_row_group_at_a_time(ended, tmp_path, monkeypatch):
    closing.season_close(season=ended)
    monkeypatch.setattr(exports, "PARQUET_GROUP_ROWS", 5)

    written = exports.standings_export_parquet(
        season=Season.objects.get(pk=ended.pk), out=str(tmp_path / "s.parquet")
    )

    parquet = pq.ParquetFile(tmp_path / "s.parquet")
    assert written == 12
    assert [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)] == [
        5,
        5,
        2,
    ]
    table = parquet.read().to_pydict()
    assert table["player_id"] == EXPECTED_ORDER
    assert table["rank"] == list(range(1, 13))


def test_an_export_of_a_season_not_closed_yet_is_refused_before_writing(season, tmp_path):
    with pytest.raises(Conflict):
        exports.standings_export_parquet(season=season, out=str(tmp_path / "s.parquet"))

    assert not (tmp_path / "s.parquet").exists()


def test_the_close_command_shows_progress_and_is_idempotent(ended, capsys):
    call_command("close_season", "--season", "past", "--no-progress")
    call_command("close_season", "--season", "past", "--no-progress")

    out = capsys.readouterr().out
    assert out.count("is closed: 12 players archived, 6 rewards") == 2


def test_the_periodic_task_closes_every_season_that_is_due(ended):
    running = SeasonFactory(board=BoardFactory(slug="other"))

    closed = closing.seasons_close_due()

    assert closed == [ended.pk]
    assert Season.objects.get(pk=ended.pk).state == "closed"
    assert Season.objects.get(pk=running.pk).state == "open"


def test_the_archive_is_written_without_per_row_checks_and_read_through_its_indexes(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'seasons_archivedstanding'"
        )
        indexes = sorted(row[0] for row in cursor.fetchall())
        cursor.execute(
            "SELECT conname FROM pg_constraint"
            " WHERE conrelid = 'seasons_archivedstanding'::regclass AND contype = 'f'"
        )
        foreign_keys = cursor.fetchall()

    assert indexes == [
        "archive_unique_player",
        "archive_unique_rank",
        "seasons_archivedstanding_pkey",
    ]
    assert foreign_keys == []


def test_the_archive_lists_newest_season_first_from_rank_1_through_an_index(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN SELECT * FROM seasons_archivedstanding"
            " ORDER BY season_id DESC, rank ASC LIMIT 100"
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())

    # each partition read through its part of the index (archive_unique_rank): here the
    # default one, as no season is archived yet
    assert "archive_other_seasons_unique_rank" in plan
    assert "Sort" not in plan


def test_a_close_resumed_after_some_rewards_were_written_rewards_its_new_snapshot(
    ended, monkeypatch, django_capture_on_commit_callbacks
):
    # given: a close killed once its rewards were written, before it recorded the step
    real = closing.season_rewards_award

    def killed(**kwargs):
        real(**kwargs)
        raise SystemExit("killed after the rewards")

    monkeypatch.setattr(closing, "season_rewards_award", killed)
    with pytest.raises(SystemExit):
        closing.season_close(season=ended)
    monkeypatch.setattr(closing, "season_rewards_award", real)
    assert SeasonReward.objects.filter(season=ended).count() == 6
    # and: the leader banned meanwhile, so every rank moves up by one
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p00", reason="aimbot")

    # when: the close resumes
    season = closing.season_close(season=ended)

    # then: the rewards are the new snapshot's, one per rank, none for the banned player
    assert season.state == "closed"
    assert rewards(season) == {
        "p01": "gold",
        "p02": "silver",
        "p03": "silver",
        "p04": "top-half",
        "p07": "top-half",
        "p08": "top-half",
    }
    assert list(
        SeasonReward.objects.filter(season=season).order_by("rank").values_list("rank", "player_id")
    ) == list(
        ArchivedStanding.objects.filter(season=season, rank__lte=6)
        .order_by("rank")
        .values_list("rank", "player_id")
    )
