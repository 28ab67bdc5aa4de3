"""The audit log: what each operator did to the game (bans, closes, rebuilds, rules, voids,
reward tiers, shards, game-server keys, corrections of closed seasons' archives),
when and why. Rows are written by the services that do the actions and are never changed."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class OperatorActionKind(models.TextChoices):
    BAN = "ban", "Ban a player"
    UNBAN = "unban", "Unban a player"
    CLOSE_NOW = "close_now", "Close a season now"
    REBUILD = "rebuild", "Rebuild a leaderboard"
    BOARD_RULES = "board_rules", "Change a board's rules"
    BOARD_PUBLISH = "board_publish", "Publish or hide a board"
    VOID_RESULT = "void_result", "Void a result"
    REWARD_TIERS = "reward_tiers", "Change a board's reward tiers"
    SHARDS = "shards", "Change a board's or a season's shards"
    GAME_SERVER_KEY = "game_server_key", "Create, change or revoke a game-server key"
    CORRECT_ARCHIVE = "correct_archive", "Correct a closed season's archive"


# Actions that must say why.
REASON_REQUIRED = (OperatorActionKind.BAN, OperatorActionKind.VOID_RESULT)
# Actions on a player, on a season, on a board: what each row must name.
ON_A_PLAYER = (OperatorActionKind.BAN, OperatorActionKind.UNBAN, OperatorActionKind.VOID_RESULT)
ON_A_SEASON = (
    OperatorActionKind.CLOSE_NOW,
    OperatorActionKind.REBUILD,
    OperatorActionKind.VOID_RESULT,
    OperatorActionKind.CORRECT_ARCHIVE,
)
ON_A_BOARD = (
    OperatorActionKind.CLOSE_NOW,
    OperatorActionKind.REBUILD,
    OperatorActionKind.BOARD_RULES,
    OperatorActionKind.BOARD_PUBLISH,
    OperatorActionKind.VOID_RESULT,
    OperatorActionKind.REWARD_TIERS,
    OperatorActionKind.SHARDS,
    OperatorActionKind.CORRECT_ARCHIVE,
)


class OperatorAction(models.Model):
    """One operator action. Boards, seasons and players are named by their slugs and ids, not
    foreign keys: the log outlives what it describes and never blocks a deletion."""

    at = models.DateTimeField(default=timezone.now)
    # The account, while it exists; its name stays when it is deleted. No account: the action
    # came from a command line or a scheduled task ("system").
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=32, choices=OperatorActionKind.choices)
    board = models.CharField(max_length=64, blank=True, default="")
    season = models.CharField(max_length=64, blank=True, default="")
    player_id = models.CharField(max_length=64, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    # What changed: old and new rules, tiers or shards, the voided result's points, a rebuild's
    # size, a game-server key's name, prefix and boards.
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(action__in=OperatorActionKind.values), name="audit_action_known"
            ),
            models.CheckConstraint(condition=~Q(actor_name=""), name="audit_actor_named"),
            models.CheckConstraint(
                condition=~Q(action__in=REASON_REQUIRED) | ~Q(reason=""),
                name="audit_reason_given",
                violation_error_message="Say why: a ban and a void need a reason.",
            ),
            models.CheckConstraint(
                condition=~Q(action__in=ON_A_PLAYER) | ~Q(player_id=""),
                name="audit_player_named",
            ),
            models.CheckConstraint(
                condition=~Q(action__in=ON_A_SEASON) | ~Q(season=""), name="audit_season_named"
            ),
            models.CheckConstraint(
                condition=~Q(action__in=ON_A_BOARD) | ~Q(board=""), name="audit_board_named"
            ),
        ]
        indexes = [
            models.Index(fields=["-at"], name="audit_newest_first"),
            models.Index(
                fields=["player_id", "-at"], condition=~Q(player_id=""), name="audit_by_player"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name}: {self.get_action_display()}"
