"""Players, every match result, and each player's total per season: the source of truth."""

from datetime import datetime

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import BrinIndex, OpClass
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower
from rest_framework_api_key.models import AbstractAPIKey

from config.building_blocks.expressions import EachMatches, NotAmong
from config.building_blocks.player_ids import (
    PLAYER_ID_CHARACTERS,
    PLAYER_ID_MAX_LENGTH,
    PLAYER_ID_PATTERN,
    player_id_validator,
)
from config.building_blocks.segments import (
    CLAN_ID_PATTERN,
    DIMENSION_CHARACTERS,
    SEGMENT_VALUE_CHARACTERS,
    clan_id_validator,
    dimension_validator,
    segment_value_validator,
)

# Points and totals fit the 29 high bits of the composite score.
from seasons.scoring import MAX_POINTS


class Clan(models.Model):
    """A group of players ranked together: on each board, by its members' season totals."""

    clan_id = models.CharField(max_length=64, primary_key=True, validators=[clan_id_validator])
    name = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["clan_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(clan_id__regex=CLAN_ID_PATTERN), name="clan_id_allowed_characters"
            )
        ]

    def __str__(self) -> str:
        return self.clan_id


class Player(models.Model):
    player_id = models.CharField(
        max_length=PLAYER_ID_MAX_LENGTH, primary_key=True, validators=[player_id_validator]
    )
    display_name = models.CharField(max_length=100, blank=True, default="")
    avatar_url = models.URLField(max_length=500, blank=True, default="")
    # A banned player is hidden from live boards and future archives; their new results are
    # stored but do not count. Unbanning restores their standing from PostgreSQL.
    banned_at = models.DateTimeField(null=True, blank=True)
    # A temporary ban's end; empty for a ban until lifted. From this moment the write path
    # counts the player's results again, and the unban task (every minute) lifts the ban
    # everywhere else: the live boards, archives, reconciliation.
    banned_until = models.DateTimeField(null=True, blank=True)
    ban_reason = models.CharField(max_length=200, blank=True, default="")
    # At most one clan; leaving it is setting none. A clan with members cannot be deleted.
    clan = models.ForeignKey(
        Clan,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="members",
        # Indexed below for clan members only: most players are in no clan.
        db_index=False,
    )
    # How many times the player's segment values changed: the stamp of the values' copies in
    # Redis, so a copy read before a change never replaces one read after it. A default in the
    # database too: the write path inserts new players with SQL of its own. (No check of its
    # sign: adding one would scan the whole players table under lock.)
    segments_changes = models.BigIntegerField(default=0, db_default=0)
    # How many times the display name or avatar changed: the version of the profile's copy in the
    # boards' profile directory (leaderboards/profiles.py), so a copy read before a change never
    # replaces one read after it. Counted in the database, not from clocks that may disagree.
    profile_changes = models.BigIntegerField(default=0, db_default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["player_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(player_id__regex=PLAYER_ID_PATTERN), name="player_id_allowed_characters"
            ),
            models.CheckConstraint(
                condition=Q(banned_until__isnull=True)
                | Q(banned_at__isnull=False, banned_until__gt=F("banned_at")),
                name="player_ban_ends_after_it_starts",
                violation_error_message="A temporary ban must end after it starts.",
            ),
        ]
        # The banned players alone: every batch of results asks which of its players are banned,
        # and at millions of players a read of each one's row cost a random page apiece.
        indexes = [
            models.Index(
                fields=["player_id"], condition=Q(banned_at__isnull=False), name="player_banned"
            ),
            models.Index(fields=["clan"], condition=Q(clan__isnull=False), name="player_clan"),
            # The search by name (a case-insensitive prefix, LIKE 'abc%' on the lowered name),
            # over the players who have a name: the write path creates players without one, so
            # it never pays this index.
            models.Index(
                OpClass(Lower("display_name"), name="text_pattern_ops"),
                condition=~Q(display_name=""),
                name="player_name_prefix",
            ),
        ]

    def __str__(self) -> str:
        return self.player_id

    def banned_at_time(self, moment: datetime) -> bool:
        """Whether the player is banned at `moment`: a temporary ban that ended is not."""
        return self.banned_at is not None and (
            self.banned_until is None or self.banned_until > moment
        )


class MatchResult(models.Model):
    """One player's points from one match; never changed once written.

    Every index here costs each of thousands of inserts a second, so there are only the ones a
    query uses: the unique key (which finds a retried result), the player's results by season,
    and a BRIN on arrival time for "who played recently" (nearly free on an append-only table).
    """

    # db_index=False: (player, season) serves the lookups by season.
    season = models.ForeignKey(
        "seasons.Season", on_delete=models.PROTECT, related_name="results", db_index=False
    )
    # The board, besides the season, so that a result posted again is found whichever season
    # it would now fall in: a match counts once per board. It is always the season's board (the
    # write path takes both from one season row), so the season's foreign key guards it too.
    board = models.ForeignKey(
        "seasons.Board",
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    match_id = models.CharField(max_length=128)
    # No foreign-key constraint in the database: checking it locks the player's row (FOR KEY
    # SHARE, a write to its page and the WAL) for every result, 12% of PostgreSQL's time per
    # result in the benchmark. The write path creates the player in the same statement, players
    # are never deleted, and the player's totals keep their constraint.
    player = models.ForeignKey(
        Player,
        on_delete=models.PROTECT,
        related_name="results",
        db_index=False,
        db_constraint=False,
    )
    points = models.IntegerField(validators=[MinValueValidator(1), MaxValueValidator(MAX_POINTS)])
    ended_at = models.DateTimeField()
    received_at = models.DateTimeField()
    # False for results posted while the player was banned, and for voided ones: kept, never
    # added to the total.
    counted = models.BooleanField(default=True)
    # An operator's correction (matches/corrections.py): when and why the result was voided.
    # Defaults in the database: the write path's INSERT names only the columns it fills.
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.CharField(max_length=200, blank=True, db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["board", "match_id", "player"], name="result_unique_per_board_match_player"
            ),
            models.CheckConstraint(
                condition=Q(points__gte=1, points__lte=MAX_POINTS), name="result_points_in_range"
            ),
            models.CheckConstraint(
                condition=Q(voided_at__isnull=True) | Q(counted=False) & ~Q(void_reason=""),
                name="result_voided_uncounted_with_reason",
            ),
        ]
        indexes = [
            models.Index(fields=["player", "season"], name="result_player_season"),
            BrinIndex(fields=["received_at"], name="result_received_brin"),
        ]

    def __str__(self) -> str:
        return f"{self.match_id}/{self.player_id}: {self.points}"


class PlayerTotal(models.Model):
    """A player's standing in one season, updated in the transaction of the result that changes it.

    No index covers a column that changes (points, reached_at, updated_at), and the table
    leaves room on each page (fillfactor, in the migration), so an update stays on its page
    without touching an index (a HOT update): the hottest row write of the service. What still
    has to reach Redis is recorded apart, in PendingStanding.
    """

    # db_index=False: the unique key starts with the season; the player has its own index.
    season = models.ForeignKey(
        "seasons.Season", on_delete=models.PROTECT, related_name="totals", db_index=False
    )
    player = models.ForeignKey(
        Player, on_delete=models.PROTECT, related_name="totals", db_index=False
    )
    points = models.IntegerField()
    reached_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["season", "player"], name="total_unique_per_season"),
            models.CheckConstraint(
                condition=Q(points__gte=0, points__lte=MAX_POINTS), name="total_points_in_range"
            ),
        ]
        # A player's seasons (history, bans); a plain B-tree, not Django's pair with _like.
        indexes = [models.Index(fields=["player"], name="total_player")]

    def __str__(self) -> str:
        return f"{self.player_id}@{self.season_id}: {self.points}"


class PendingStanding(models.Model):
    """The outbox of the mirror: the totals one write committed here, whose new standings Redis
    may not show yet.

    The write path adds one row per statement that merges totals (one per request and scoring
    rule), in the same transaction, holding each new standing as the composite score it computed:
    `{"<season id>": [["<player id>", composite], ...], ...}`. The mirror writes them to the
    seasons' sorted sets and deletes the row; the sweep mirrors rows whose task never ran. The
    table stays small (rows live for milliseconds), so finding what is unmirrored never scans the
    totals. One row per write, not per standing: a row per standing was an insert, an index entry
    and a delete per result, about a tenth of PostgreSQL's work on the write path.

    The row's id is also the stamp of its standings against corrections
    (leaderboards/player_refreshes.py, _standings_stamp): taken from the sequence while the
    write holds its seasons in share mode.
    """

    standings = models.JSONField()
    changed_at = models.DateTimeField()

    def __str__(self) -> str:
        count = sum(len(players) for players in self.standings.values())
        return f"{count} standings in seasons {', '.join(self.standings)}"

    def season_standings(self) -> dict[int, list[tuple[str, int]]]:
        """The row's standings by season: (player id, composite) each."""
        return {
            int(season_id): [(str(player_id), int(composite)) for player_id, composite in players]
            for season_id, players in self.standings.items()
        }


class PendingPlayerRefresh(models.Model):
    """The outbox of bans and segment changes: a player whose ban, unban, lifted temporary ban or
    new segment values committed here and whose live boards Redis may not show so yet.

    The change's transaction writes the row (one per player, so changes made before a refresh
    runs make one refresh); the refresh reads the player's ban state and segment values from
    PostgreSQL when it runs, not the ones of the change that queued it, and deletes the row once
    Redis holds them.
    A refresh lost with its task or met by a Redis error leaves the row for the sweep.
    """

    player = models.OneToOneField(
        Player, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    requested_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.player_id} since {self.requested_at.isoformat()}"


class PlayerSegment(models.Model):
    """A player's value in one segment dimension (country DE, platform pc), set by game
    servers; every board that declares the dimension ranks the player within that value too."""

    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="segments")
    dimension = models.CharField(max_length=32, validators=[dimension_validator])
    value = models.CharField(max_length=32, validators=[segment_value_validator])

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "dimension"], name="one_value_per_dimension"),
            models.CheckConstraint(
                condition=Q(dimension__regex=f"^{DIMENSION_CHARACTERS}$"),
                name="segment_dimension_allowed_characters",
            ),
            models.CheckConstraint(
                condition=Q(value__regex=f"^{SEGMENT_VALUE_CHARACTERS}$"),
                name="segment_value_allowed_characters",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} {self.dimension}={self.value}"


# Friends one player's list holds at most: the friends view ranks them all in one read.
FRIENDS_MAX = 1000


class FriendList(models.Model):
    """A player's friends as their game's server last stored them: one-way (the player's own
    list), replaced whole, in the order given. A friend need not have played yet, so the ids
    are kept as ids, not as keys of players that may not exist."""

    player = models.OneToOneField(
        Player, on_delete=models.CASCADE, primary_key=True, related_name="friend_list"
    )
    friend_ids = ArrayField(
        models.CharField(max_length=PLAYER_ID_MAX_LENGTH), default=list, blank=True
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(friend_ids__len__lte=FRIENDS_MAX),
                name="friend_list_at_most_max",
                violation_error_message=f"A player has at most {FRIENDS_MAX} friends.",
            ),
            models.CheckConstraint(
                condition=NotAmong(F("player_id"), F("friend_ids")),
                name="friend_list_not_self",
                violation_error_message="A player is not their own friend.",
            ),
            models.CheckConstraint(
                condition=EachMatches(F("friend_ids"), pattern=f"^({PLAYER_ID_CHARACTERS}(,|$))*$"),
                name="friend_ids_allowed_characters",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player_id}: {len(self.friend_ids)} friends"


class GameServer(AbstractAPIKey):
    """A game server's credential: the key is shown once and stored hashed; revoke to cut it off."""

    boards = models.ManyToManyField(
        "seasons.Board",
        blank=True,
        related_name="game_servers",
        help_text="Boards this key may post to; leave empty for every board.",
    )

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "game-server key"
        verbose_name_plural = "game-server keys"
