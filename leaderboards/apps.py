from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        from matches import outbox
        from seasons import jobs as season_jobs
        from seasons import previews as season_previews
        from seasons import visibility as season_visibility

        from . import live, metrics, rewards, selectors, tasks

        metrics.register()
        # The write path below this app hands committed standings, bans and profile changes
        # over here.
        outbox.connect(
            standings_changed=tasks.queue_mirror,
            player_changed=tasks.queue_owed_player_refresh,
            profiles_changed=selectors.profiles_forget,
            standing_corrected=tasks.queue_standing_correction,
        )
        # The seasons admin asks for rebuilds and closes through seasons/jobs.py.
        season_jobs.connect(rebuild=tasks.queue_season_rebuild, close=tasks.queue_season_close)
        # And the preview of a season's rewards through seasons/previews.py.
        season_previews.connect(rewards=rewards.season_rewards_preview)
        # Hiding a board closes the live sockets on its seasons (seasons/visibility.py).
        season_visibility.connect(board_hidden=live.board_hidden)
