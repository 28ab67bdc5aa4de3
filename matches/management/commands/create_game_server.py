"""Create a game-server key (audited as `system`); the key itself is printed alone on the last
line."""

from django.core.management.base import BaseCommand, CommandParser

from matches.game_servers import game_server_create


class Command(BaseCommand):
    help = "Create an API key for a game server. The key is shown once: store it now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="A name to recognise the game server by.")

    def handle(self, *args: object, name: str, **options: object) -> None:
        server, key = game_server_create(name=name, actor=None)
        self.stdout.write(
            f"Created game-server key '{server.name}' (prefix {server.prefix}). "
            "Send it as 'Authorization: Api-Key <key>'. It is shown only once:"
        )
        self.stdout.write(key)
