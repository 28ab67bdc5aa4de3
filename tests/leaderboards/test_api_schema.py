"""The read endpoints' integer parameters: the schema shows the ranges read_query applies."""

import pytest

from config.building_blocks.errors import InvalidInput
from leaderboards.api import AROUND_RANGES, TOP_RANGES, read_query


@pytest.mark.parametrize(
    ("path", "ranges"),
    [
        ("/api/v1/leaderboard/top", TOP_RANGES),
        ("/api/v1/leaderboard/players/{player_id}/around", AROUND_RANGES),
    ],
)
def test_the_schema_shows_the_ranges_the_reads_apply(client, path, ranges):
    schema = client.get("/api/v1/schema/?format=json").json()
    parameters = {p["name"]: p for p in schema["paths"][path]["get"]["parameters"]}

    for name, rule in ranges.items():
        assert parameters[name]["schema"] == {
            "type": "integer",
            "minimum": rule.low,
            "maximum": rule.high,
        }
        assert f"default {rule.default}." in parameters[name]["description"]
        assert read_query({}, **ranges)[name] == rule.default
        assert read_query({name: str(rule.high)}, **ranges)[name] == rule.high
        with pytest.raises(InvalidInput) as refused:
            read_query({name: str(rule.high + 1)}, **ranges)
        assert refused.value.details == {
            name: [f"Use a whole number from {rule.low} to {rule.high}."]
        }
