"""Register a webhook endpoint from the command line; prints its id. Unknown event types or
boards, or a URL that may not receive webhooks, write nothing."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.building_blocks.errors import InvalidInput
from webhooks.services import webhook_endpoint_create


def _names(value: str | None) -> list[str]:
    return [name.strip() for name in (value or "").split(",") if name.strip()]


class Command(BaseCommand):
    help = "Register a webhook endpoint (every event type and board unless narrowed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", required=True, help="http or https URL that receives POSTs.")
        parser.add_argument("--secret", required=True, help="Signs every delivery.")
        parser.add_argument("--events", help="Comma-separated event types (default: every type).")
        parser.add_argument("--boards", help="Comma-separated board slugs (default: every board).")

    def handle(
        self,
        *args: object,
        url: str,
        secret: str,
        events: str | None,
        boards: str | None,
        **options: object,
    ) -> None:
        try:
            endpoint = webhook_endpoint_create(
                url=url, secret=secret, event_types=_names(events), board_slugs=_names(boards)
            )
        except InvalidInput as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(str(endpoint.pk))
