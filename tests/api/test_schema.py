"""The OpenAPI schema's shape, as client generators read it: named enums with no empty member,
each operation's own error statuses, request objects closed to unknown fields, the rules the
server checks written as patterns."""

from __future__ import annotations

import re
from typing import Any

import pytest

from config.building_blocks.input_rules import PRINTABLE_CHARACTER
from config.building_blocks.player_ids import PLAYER_ID_PATTERN
from config.building_blocks.slugs import OPTIONAL_SLUG_PATTERN, SLUG_PATTERN
from leaderboards.selectors import RANK_STYLES
from seasons.choices import ScheduleKind, ScoreOperator, SeasonStatus, SortOrder

ERROR = {"$ref": "#/components/schemas/Error"}


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        response = APIClient().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _walk(node: Any, path: str = "") -> Any:
    """Every (path, schema object) of the document."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{path}/{index}")


def _operations(schema: dict[str, Any]) -> Any:
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


def _component(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return schema["components"]["schemas"][name]


def test_no_enum_is_inline_and_none_has_an_empty_member(schema):
    components = schema["components"]["schemas"]
    inline = [
        path
        for path, node in _walk(schema["paths"])
        if "enum" in node or ("$ref" not in node and "oneOf" in node and "enum" in str(node))
    ]
    enums = {name: node["enum"] for name, node in components.items() if "enum" in node}

    assert inline == []
    assert all("" not in members and None not in members for members in enums.values())
    assert [
        path
        for name, component in components.items()
        for path, node in _walk(component, name)
        if "enum" in node and path != name
    ] == []


@pytest.mark.parametrize(
    ("name", "members"),
    [
        ("RankStyleEnum", set(RANK_STYLES)),
        ("ScoreOperatorEnum", set(ScoreOperator.values)),
        ("SortOrderEnum", set(SortOrder.values)),
        ("ScheduleEnum", set(ScheduleKind.values)),
        ("SeasonStatusEnum", set(SeasonStatus.values)),
    ],
)
def test_each_named_enum_is_one_component_referenced_wherever_its_choices_are(
    schema, name, members
):
    ref = {"$ref": f"#/components/schemas/{name}"}

    assert set(_component(schema, name)["enum"]) == members
    assert any(node == ref for _, node in _walk(schema["paths"])) or any(
        node == ref for _, node in _walk(schema["components"])
    )


def test_rank_style_is_an_optional_parameter_of_the_named_enum(schema):
    parameters = {
        p["name"]: p for p in schema["paths"]["/api/v1/leaderboard/top"]["get"]["parameters"]
    }

    assert parameters["rank_style"]["schema"] == {"$ref": "#/components/schemas/RankStyleEnum"}
    assert parameters["rank_style"].get("required", False) is False


def test_a_board_names_its_choices_by_their_enums(schema):
    properties = _component(schema, "BoardOut")["properties"]

    assert properties["score_operator"] == {"$ref": "#/components/schemas/ScoreOperatorEnum"}
    assert properties["sort_order"] == {"$ref": "#/components/schemas/SortOrderEnum"}
    assert properties["schedule"] == {"$ref": "#/components/schemas/ScheduleEnum"}


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/api/v1/ping", "get", {"200", "429"}),
        ("/api/v1/boards", "get", {"200", "429", "503"}),
        ("/api/v1/leaderboard/top", "get", {"200", "304", "400", "404", "429", "503"}),
        (
            "/api/v1/leaderboard/players/{player_id}",
            "get",
            {"200", "400", "404", "429", "503"},
        ),
        (
            "/api/v1/scores",
            "post",
            {"200", "201", "400", "401", "403", "404", "409", "413", "415", "429", "503"},
        ),
        (
            "/api/v1/clans/{clan_id}",
            "put",
            {"200", "201", "400", "401", "404", "413", "415", "429", "503"},
        ),
        ("/api/v1/seasons/{slug}/rewards", "get", {"200", "400", "404", "409", "429", "503"}),
    ],
)
def test_each_operation_lists_the_statuses_it_can_answer(schema, path, method, statuses):
    assert set(schema["paths"][path][method]["responses"]) == statuses


def test_every_error_answer_is_the_one_error_component(schema):
    error_answers = [
        (path, method, status, response)
        for path, method, operation in _operations(schema)
        for status, response in operation["responses"].items()
        if status >= "400"
    ]

    assert len(error_answers) > 50
    assert all(
        response["content"] == {"application/json": {"schema": ERROR}}
        for *_, response in error_answers
    )
    assert _component(schema, "Error")["properties"] == {
        "error": {"$ref": "#/components/schemas/ErrorDetail"}
    }
    assert _component(schema, "ErrorDetail")["required"] == ["code", "details", "message"]


def test_only_keyed_writes_declare_401_403_and_413(schema):
    for path in ("/api/v1/ping", "/api/v1/boards"):
        assert not {"401", "403", "413"} & set(schema["paths"][path]["get"]["responses"])
    keyed = {
        (path, method)
        for path, method, operation in _operations(schema)
        if "403" in operation["responses"]
    }
    assert keyed == {
        ("/api/v1/scores", "post"),
        ("/api/v1/players/{player_id}", "put"),
        ("/api/v1/players/{player_id}/friends", "put"),
    }


def test_a_grace_period_is_an_iso_8601_duration(schema):
    grace = _component(schema, "SeasonOut")["properties"]["grace_period"]

    assert (grace["type"], grace["format"]) == ("string", "duration")


def test_request_objects_refuse_unknown_fields_and_answers_stay_open(schema):
    components = schema["components"]["schemas"]
    requests = {
        name: c for name, c in components.items() if name.endswith("Request") and "type" in c
    }
    objects = {name for name, c in requests.items() if c["type"] == "object"}

    assert objects == {
        "ClanInRequest",
        "FriendsInRequest",
        "PlayerInRequest",
        "RanksInRequest",
        "ResultInRequest",
    }
    assert all(requests[name]["additionalProperties"] is False for name in objects)
    assert "additionalProperties" not in components["ResultOut"]


def test_the_rules_the_server_checks_are_patterns(schema):
    result = _component(schema, "ResultInRequest")["properties"]
    player = _component(schema, "PlayerInRequest")["properties"]
    ranks = _component(schema, "RanksInRequest")["properties"]
    parameters = {
        p["name"]: p["schema"]
        for p in schema["paths"]["/api/v1/leaderboard/top"]["get"]["parameters"]
    }
    search = {
        p["name"]: p["schema"] for p in schema["paths"]["/api/v1/players"]["get"]["parameters"]
    }

    assert result["board"]["pattern"] == result["season"]["pattern"] == SLUG_PATTERN
    assert ranks["board"]["pattern"] == ranks["season"]["pattern"] == SLUG_PATTERN
    assert parameters["board"]["pattern"] == parameters["season"]["pattern"]
    assert parameters["board"]["pattern"] == OPTIONAL_SLUG_PATTERN
    assert result["player_id"]["pattern"] == PLAYER_ID_PATTERN
    assert result["match_id"]["pattern"] == f"^{PRINTABLE_CHARACTER}*$"
    assert search["search"]["pattern"] == f"^{PRINTABLE_CHARACTER}*$"
    assert player["display_name"]["pattern"] == f"^{PRINTABLE_CHARACTER}*$"
    assert player["clan"]["pattern"] == "^[A-Za-z0-9_.-]{1,64}$"
    assert player["segments"]["additionalProperties"]["pattern"] == "^[A-Za-z0-9_.-]{1,32}$"
    assert parameters["segment"]["pattern"].startswith("^([a-z][a-z0-9_]{0,31}:")
    assert schema["paths"]["/api/v1/seasons/{slug}"]["get"]["parameters"][1]["schema"] == {
        "type": "string",
        "pattern": SLUG_PATTERN,
    }


@pytest.mark.parametrize(
    ("url", "admitted"),
    [
        ("", True),
        ("https://img.example/a.png", True),
        ("https://cdn.img.example:8443/p/a%20b.png?size=64&v=2", True),
        ("https://" + "a" * 63 + ".example/a.png", True),
        ("https://" + "a" * 64 + ".example/a.png", False),
        ("http://img.example/a.png", False),
        ("https://img.example/a b.png", False),
        ("https://-bad.example/", False),
        ("https://img.123/", False),
    ],
)
def test_the_avatar_pattern_admits_what_the_server_accepts(schema, url, admitted):
    rule = _component(schema, "PlayerInRequest")["properties"]["avatar_url"]

    assert (re.fullmatch(rule["pattern"], url) is not None) is admitted
    assert rule["maxLength"] == 500
    assert "oneOf" not in rule


def test_a_body_the_server_needs_is_required(schema):
    # A result or a batch, ranks of many players, a friends list: none can be left out.
    required = {
        (path, method)
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
        if operation.get("requestBody", {}).get("required")
    }
    assert required == {
        ("/api/v1/scores", "post"),
        ("/api/v1/leaderboard/ranks", "post"),
        ("/api/v1/players/{player_id}/friends", "put"),
    }
