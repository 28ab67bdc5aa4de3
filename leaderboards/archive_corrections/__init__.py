"""Correcting a closed season's archive after bans or voids in it: the archive a close would
write now (the corrected totals, without the players banned now, ranked, segmented and rewarded
by the close's own rules: archive_rules.py, rewards.py) compared with the archive as it is.

A preview shows the difference and writes nothing. Applying it writes only the difference, in
one transaction with the season's row locked (a second correction and a void of the season
wait), together with its audit record and its `archive.corrected` webhook events; so a second
run finds nothing to change, and then writes nothing at all (no event, no audit row: a record
that nothing changed would only hide the ones that did).

Who is archived follows the close's rule applied now: the players with a total in the season
who are not banned at the correction (a ban lifted since the close brings its player back). The
players archived before keep the segments and clan they were archived with; a player new to the
archive is ranked in the ones they have now.

A package of one job each: what a correction changes (`changes.py`), the corrected archive built
beside the archive and compared with it (`work_tables.py`), the webhooks told of it
(`announce.py`), and the operator's and the automatic corrections (`services.py`).
"""

from .changes import ArchiveCorrection, ClanChange, Move, RewardChange
from .services import (
    archives_correct_after_ban,
    season_archive_correct,
    season_archive_correction_preview,
    seasons_corrected_on_ban,
)

__all__ = [
    "ArchiveCorrection",
    "ClanChange",
    "Move",
    "RewardChange",
    "archives_correct_after_ban",
    "season_archive_correct",
    "season_archive_correction_preview",
    "seasons_corrected_on_ban",
]
