from django.db import migrations

# Django gives a text primary key a second index for LIKE 'prefix%' (varchar_pattern_ops). No
# query here uses one (the admin looks players up by exact id, through the primary key), and at
# ten million players it was 500 MB that every new player paid an insert into.
INDEX = "matches_player_player_id_903bfaff_like"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("matches", "0007_banned_players_index"),
    ]

    operations = [
        migrations.RunSQL(
            f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}",
            reverse_sql=(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} "
                "ON matches_player (player_id varchar_pattern_ops)"
            ),
        ),
    ]
