"""The mirror's outbox going from a row per standing to a row per write (matches 0017): the rows
waiting at the upgrade keep their ids (their standings' stamps) and are mirrored by the sweep."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from leaderboards import services, store
from matches.models import PendingStanding
from tests.migrating import migrate, migrated_back

ROW_PER_STANDING = [("matches", "0016_player_profile_changes")]


@pytest.fixture
def row_per_standing(transactional_db: None) -> Iterator[None]:
    """The outbox as the previous schema had it."""
    with migrated_back(ROW_PER_STANDING):
        yield


def test_standings_waiting_at_the_upgrade_keep_their_ids_and_are_swept(row_per_standing, season):
    # given: two standings in the old outbox, one row each
    changed_at = timezone.now() - timedelta(minutes=1)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO matches_pendingstanding (season_id, player_id, composite, changed_at)"
            " VALUES (%s, 'p1', 700, %s), (%s, 'p2', 900, %s) RETURNING id",
            [season.pk, changed_at, season.pk, changed_at],
        )
        ids = [row[0] for row in cursor.fetchall()]

    # when: migrated to a row per write
    migrate()

    # then: each is a row of its own standing, under its old id
    assert {row.pk: row.season_standings() for row in PendingStanding.objects.all()} == {
        ids[0]: {season.pk: [("p1", 700)]},
        ids[1]: {season.pk: [("p2", 900)]},
    }
    # and the sweep mirrors them
    assert services.totals_mirror_pending() == 2
    assert store.scores_of(season.pk, ["p1", "p2"]) == [700, 900]
    assert not PendingStanding.objects.exists()
