"""What POST /api/v1/scores takes, as the schema says it and as the fast check reads it."""

import pytest

from config.building_blocks.slugs import SLUG_RULE
from matches.api import MAX_BATCH, RESULT_RULES, ResultIn

PRINTABLE_REFUSED = "Use printable characters: no control characters or line separators."

SCORES = "/api/v1/scores"
GOOD = {"player_id": "p1", "points": 5, "match_id": "m"}


def _schema(client):
    response = client.get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _component(schema, ref):
    return schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[1]]


def test_the_schema_takes_one_result_or_a_batch_of_up_to_a_thousand(client):
    schema = _schema(client)
    post = schema["paths"][SCORES]["post"]

    body = _component(schema, post["requestBody"]["content"]["application/json"]["schema"])
    single, batch = (_component(schema, form) for form in body["oneOf"])

    assert len(body["oneOf"]) == 2
    assert single["type"] == "object"
    assert single["required"] == ["match_id", "player_id", "points"]
    assert list(single["properties"]) == list(RESULT_RULES.fields)
    assert batch == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/ResultInRequest"},
        "minItems": 1,
        "maxItems": MAX_BATCH,
    }


def test_the_schema_answers_201_for_one_accepted_and_200_for_a_duplicate_or_a_batch(client):
    schema = _schema(client)
    responses = schema["paths"][SCORES]["post"]["responses"]

    created = responses["201"]["content"]["application/json"]["schema"]
    answered = _component(schema, responses["200"]["content"]["application/json"]["schema"])
    single, batch = (_component(schema, form) for form in answered["oneOf"])

    assert created == {"$ref": "#/components/schemas/ResultOut"}
    assert single == _component(schema, created)
    assert batch == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/ResultOut"},
        "minItems": 1,
        "maxItems": MAX_BATCH,
    }


def test_the_view_answers_as_the_schema_says(post_scores, season):
    accepted = post_scores(GOOD)
    duplicate = post_scores(GOOD)
    batch = post_scores([GOOD, {**GOOD, "match_id": "m2"}])

    assert accepted.status_code == 201
    assert isinstance(accepted.json(), dict)
    assert (duplicate.status_code, duplicate.json()["status"]) == (200, "duplicate")
    assert batch.status_code == 200
    assert [outcome["status"] for outcome in batch.json()] == ["duplicate", "accepted"]


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"points": 5, "match_id": "m"}, {"player_id": ["This field is required."]}),
        ({**GOOD, "player_id": ""}, {"player_id": ["This field may not be blank."]}),
        ({**GOOD, "player_id": 12}, {"player_id": ["Must be a JSON string."]}),
        (
            {**GOOD, "player_id": "bad id"},
            {"player_id": ["Use 1-64 characters of A-Z, a-z, 0-9, '_', '.' or '-'."]},
        ),
        ({**GOOD, "points": True}, {"points": ["Must be a JSON integer."]}),
        ({**GOOD, "points": 0}, {"points": ["Must be from 1 to 536870911."]}),
        ({**GOOD, "points": 2**29}, {"points": ["Must be from 1 to 536870911."]}),
        (
            {**GOOD, "match_id": "x" * 129},
            {"match_id": ["Ensure this field has no more than 128 characters."]},
        ),
        ({**GOOD, "match_id": "a\nb"}, {"match_id": [PRINTABLE_REFUSED]}),
        ({**GOOD, "match_id": "a\u0085b"}, {"match_id": [PRINTABLE_REFUSED]}),
        ({**GOOD, "match_id": "a\u2028b"}, {"match_id": [PRINTABLE_REFUSED]}),
        (
            {**GOOD, "match_id": "a\ud800"},
            {"match_id": ["Surrogate characters are not allowed: U+D800."]},
        ),
        (
            {**GOOD, "board": "Global"},
            {"board": ["Use " + SLUG_RULE + "."]},
        ),
        ({**GOOD, "season": ""}, {"season": ["This field may not be blank."]}),
        ({**GOOD, "board": 7}, {"board": ["Must be a JSON string."]}),
        (
            {**GOOD, "ended_at": "yesterday"},
            {"ended_at": ["Use ISO 8601, e.g. 2026-11-30T12:00:00Z."]},
        ),
        ({**GOOD, "ended_at": None}, {"ended_at": ["Use ISO 8601, e.g. 2026-11-30T12:00:00Z."]}),
    ],
)
def test_the_fast_check_and_the_schemas_serializer_say_the_same(body, errors):
    values, fast_errors = RESULT_RULES.parse(body)
    serializer = ResultIn(data=body)

    assert values is None
    assert fast_errors == errors
    assert not serializer.is_valid()
    assert {
        name: [str(m) for m in messages][:1] for name, messages in serializer.errors.items()
    } == errors


def test_the_fast_check_reports_unknown_fields_with_the_others():
    values, errors = RESULT_RULES.parse({"player_id": "p1", "extra": 1, "also": 2})

    assert values is None
    assert errors == {
        "also": ["Unknown field."],
        "extra": ["Unknown field."],
        "points": ["This field is required."],
        "match_id": ["This field is required."],
    }
    assert RESULT_RULES.parse([GOOD]) == (None, {"non_field_errors": ["Expected a JSON object."]})


def test_a_valid_result_is_read_with_its_optional_fields_empty_and_a_bare_time_in_utc():
    values, errors = RESULT_RULES.parse({**GOOD, "ended_at": "2026-11-30T12:00:00"})

    assert errors is None
    assert values == {
        "player_id": "p1",
        "points": 5,
        "match_id": "m",
        "board": None,
        "season": None,
        "ended_at": values["ended_at"],
    }
    assert values["ended_at"].isoformat() == "2026-11-30T12:00:00+00:00"
