from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        # Imported here, as Django's documentation has it: this module is loaded while the app
        # registry is being filled, before any model may be imported.
        from matches import archive_notes as match_archive_notes
        from matches import outbox
        from seasons import archive_corrections as season_archive_corrections
        from seasons import archive_exports as season_archive_exports
        from seasons import jobs as season_jobs
        from seasons import previews as season_previews
        from seasons import visibility as season_visibility

        from . import (
            archive_corrections,
            archive_notes,
            exports,
            heals,
            live,
            metrics,
            profiles,
            rewards,
            tasks,
        )

        metrics.register()
        # Whoever finds a season's standings lost asks for its rebuild through heals.py.
        heals.connect(queue=tasks.queue_season_heal)
        # The write path below this app hands committed standings, bans and profile changes
        # over here.
        outbox.connect(
            standings_changed=tasks.queue_mirror,
            player_changed=tasks.queue_owed_player_refresh,
            profiles_changed=profiles.profiles_refresh,
            standing_corrected=tasks.queue_standing_correction,
            player_banned=tasks.queue_archive_corrections_after_ban,
        )
        # The seasons admin asks for rebuilds and closes through seasons/jobs.py.
        season_jobs.connect(rebuild=tasks.queue_season_rebuild, close=tasks.queue_season_close)
        # And the preview of a season's rewards through seasons/previews.py.
        season_previews.connect(rewards=rewards.season_rewards_preview)
        # Hiding a board closes the live sockets on its seasons (seasons/visibility.py).
        season_visibility.connect(board_hidden=live.board_hidden)
        # The archive is this app's: the seasons admin exports it through
        # seasons/archive_exports.py, and a void after a close notes it through
        # matches/archive_notes.py.
        season_archive_exports.connect(
            csv=exports.standings_export_csv, parquet=exports.standings_export_parquet
        )
        match_archive_notes.connect(note=archive_notes.archived_standing_note)
        # And corrects a closed season's archive through seasons/archive_corrections.py.
        season_archive_corrections.connect(
            preview=archive_corrections.season_archive_correction_preview,
            correct=archive_corrections.season_archive_correct,
        )
