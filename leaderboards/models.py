"""Records of the mirror's health: what each reconciliation run found and repaired."""

from django.db import models


class ReconciliationRun(models.Model):
    class Kind(models.TextChoices):
        RECENT = "recent", "Recently active players"
        WALK = "walk", "A page of the whole season"

    season = models.ForeignKey("seasons.Season", on_delete=models.CASCADE, related_name="+")
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
