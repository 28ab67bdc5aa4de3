from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        from matches import outbox
        from seasons import jobs as season_jobs

        from . import metrics, selectors, tasks

        metrics.register()
        # The write path below this app hands committed standings, bans and profile changes
        # over here.
        outbox.connect(
            standings_changed=tasks.queue_mirror,
            player_changed=tasks.queue_player_refresh,
            profiles_changed=selectors.profiles_forget,
        )
        # The seasons admin asks for rebuilds and closes through seasons/jobs.py.
        season_jobs.connect(rebuild=tasks.queue_season_rebuild, close=tasks.queue_season_close)
