"""Migration tests' helpers: the database taken back to an earlier schema, and forward again."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

Targets = list[tuple[str, str]]


def migrate(targets: Targets | None = None) -> None:
    """Migrate to `targets`, or to the latest migrations with None."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()


@contextmanager
def migrated_back(targets: Targets) -> Iterator[None]:
    """The database as `targets` left it; migrated to the latest at the end, whatever happened."""
    migrate(targets)
    try:
        yield
    finally:
        migrate()
