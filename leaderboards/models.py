"""What this app writes to PostgreSQL: a closed season's archive and the rewards its close gave
(the close and the corrections write them), and the records of the mirror's health (what each
reconciliation run found and repaired, and the service's per-minute samples the operator
dashboard charts)."""

from django.db import models

from matches.models import Clan, Player
from seasons.models import Season


class ReconciliationRun(models.Model):
    class Kind(models.TextChoices):
        RECENT = "recent", "Recently active players"
        WALK = "walk", "A page of the whole season"

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    checked = models.PositiveIntegerField(default=0)
    drift = models.PositiveIntegerField(default=0, help_text="Entries that disagreed.")
    fixed = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["-finished_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.season_id}: {self.drift} drift, {self.fixed} fixed"


class OperationsMinute(models.Model):
    """One whole minute of the service, as the dashboard's sampler found it
    (leaderboards/operations.py): kept for a day, one row a minute."""

    minute = models.DateTimeField(unique=True, help_text="The minute's start (UTC).")
    results = models.PositiveIntegerField(help_text="Results received in the minute.")
    # Taken when the minute was sampled; None for a minute sampled late, whose lag is unknown.
    mirror_lag_seconds = models.FloatField(null=True)
    # Open live sockets at the minute's end, over the web processes that reported in it; None
    # when none did.
    sockets = models.PositiveIntegerField(null=True)
    responses_4xx = models.PositiveIntegerField()
    responses_5xx = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.minute:%Y-%m-%d %H:%M}: {self.results} results"


class ArchivedStanding(models.Model):
    """A closed season's final standings, snapshotted from the ZSET and checked against totals.

    Only the close writes its rows, a whole season into a partition of its own (the table is
    partitioned by season: archive_partitions.py, migration 0007), from the season's own
    standings: players with a total in that season (whose foreign key holds them) and the
    season it locks; a void after the close adds a note (archive_notes.py), and an operator's
    correction re-ranks it (archive_corrections.py). In the database the primary key is
    (id, season_id), as a partitioned table's keys must hold the season; ids come from one
    sequence.
    Foreign-key constraints would check every row at COMMIT, each check locking the player's
    row: at ten million players that was most of the close. So the references are checked by
    the close (its verify step compares the archive with the totals) and kept by PROTECT in the
    ORM, and the indexes are the ones queries use: the two unique keys, a season's ranks and
    each player's standing (which also finds a player's seasons for their history).
    """

    season = models.ForeignKey(
        Season,
        on_delete=models.PROTECT,
        related_name="archived_standings",
        db_index=False,
        db_constraint=False,
    )
    rank = models.PositiveIntegerField()
    competition_rank = models.PositiveIntegerField()
    player = models.ForeignKey(
        Player,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    points = models.IntegerField()
    reached_at = models.DateTimeField()
    # What changed after the close (a voided result): the rank, points and rewards stay as
    # archived, since they were final and given; the note says what the total is now and why.
    # A default in the database: the close's COPY names only the columns it fills.
    note = models.TextField(blank=True, db_default="")
    # A correction of the closed season (archive_corrections.py) re-ranks the archive from the
    # corrected totals: the rows it changed are stamped, and keep the rank the close gave (null
    # for a player the close did not archive), so every read can mark them.
    corrected_at = models.DateTimeField(null=True, blank=True)
    closed_rank = models.PositiveIntegerField(
        null=True, blank=True, help_text="The rank the close gave, on a row a correction changed."
    )

    class Meta:
        # The table keeps the name it had when the seasons app held the archive: the move was
        # made in Django's state alone (migrations/0002_archive_from_seasons.py).
        db_table = "seasons_archivedstanding"
        constraints = [
            # Newest season first, each from rank 1: the order the admin lists the archive in,
            # which an ascending index could only give by sorting the whole archive.
            models.UniqueConstraint(
                models.F("season").desc(), models.F("rank"), name="archive_unique_rank"
            ),
            # Player first: it serves a season's lookups of a player and the player's history
            # across seasons alike (migration 0007).
            models.UniqueConstraint(fields=["player", "season"], name="archive_unique_player"),
        ]

    def __str__(self) -> str:
        return f"{self.season_id} #{self.rank} {self.player_id}"


class ArchivedSegmentStanding(models.Model):
    """A closed season's final rank within each segment of its board (`country:DE`): written by
    the close from the archive, by the segment values the players had at the close, ranked in
    the archive's order (ties as the board broke them). Its references are kept as the
    archive's are (no constraint checked at COMMIT, PROTECT in the ORM)."""

    season = models.ForeignKey(
        Season, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    segment = models.CharField(max_length=65, help_text="dimension:value")
    rank = models.PositiveIntegerField()
    competition_rank = models.PositiveIntegerField()
    player = models.ForeignKey(
        Player, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["season", "segment", "rank"], name="segment_archive_unique_rank"
            ),
            models.UniqueConstraint(
                fields=["season", "segment", "player"], name="segment_archive_unique_player"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.season_id} {self.segment} #{self.rank} {self.player_id}"


class ArchivedClanStanding(models.Model):
    """A closed season's final clan board: each clan with archived members (by the clan they are
    in at the close), ranked by their archived points' sum or best, as the live clan board ranks
    them (equal sums tie by clan id, equal bests by their members' ranks), with the reward a clan
    tier gave it. Written by the close (closing.py)."""

    season = models.ForeignKey(
        Season, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    clan = models.ForeignKey(
        Clan, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    rank = models.PositiveIntegerField()
    competition_rank = models.PositiveIntegerField()
    points = models.BigIntegerField()
    members = models.PositiveIntegerField()
    reward_code = models.CharField(max_length=64, blank=True, db_default="", default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["season", "rank"], name="clan_archive_unique_rank"),
            models.UniqueConstraint(fields=["season", "clan"], name="clan_archive_unique_clan"),
        ]

    def __str__(self) -> str:
        return f"{self.season_id} #{self.rank} {self.clan_id}"


class SeasonReward(models.Model):
    """A reward a close gave: the player's final rank matched one of the board's reward tiers
    (or their rank within a segment, one of the tiers of its dimension)."""

    season = models.ForeignKey(Season, on_delete=models.PROTECT, related_name="rewards")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="rewards")
    rank = models.PositiveIntegerField()
    reward_code = models.CharField(max_length=64)
    awarded_at = models.DateTimeField()
    # "country:DE" for a reward of the rank within that segment; "" for the whole board's.
    segment = models.CharField(max_length=65, blank=True, db_default="", default="")

    class Meta:
        db_table = "seasons_seasonreward"  # as the archive's: moved in Django's state alone
        constraints = [
            # One reward per player from the whole board's tiers, and one from each segment's.
            models.UniqueConstraint(
                fields=["season", "segment", "player"], name="reward_once_per_season"
            ),
            # A rank is one archived player; the index also serves the rewards' pages by rank.
            models.UniqueConstraint(
                fields=["season", "segment", "rank"], name="reward_unique_rank"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.season_id} {self.player_id}: {self.reward_code}"
