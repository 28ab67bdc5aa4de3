from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        from matches import outbox

        from . import metrics, selectors, tasks

        metrics.register()
        # The write path below this app hands committed standings, bans and profile changes
        # over here.
        outbox.connect(
            standings_changed=tasks.queue_mirror,
            player_changed=tasks.queue_player_refresh,
            profiles_changed=selectors.profiles_forget,
        )
