"""The answers' JSON, made by orjson, is byte for byte what DRF's renderer writes."""

from __future__ import annotations

import datetime
import decimal
import uuid

import pytest
from rest_framework.renderers import JSONRenderer

from config.building_blocks.renderers import json_bytes

AT = datetime.datetime(2026, 12, 3, 16, 59, 21, 649621, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    "data",
    [
        {"entries": [{"rank": 1, "player_id": "p1", "display_name": "Ädä 名前", "points": 30}]},
        {"name": "line\u2028and paragraph\u2029separators", "percentile": 99.95, "none": None},
        {"at": AT, "day": AT.date(), "grace": datetime.timedelta(seconds=90), 7: True},
        {"share": decimal.Decimal("1.50"), "id": uuid.UUID(int=7), "points": [0.5, 100.0, -3]},
    ],
)
def test_json_bytes_are_the_renderers_bytes(data):
    assert json_bytes(data) == JSONRenderer().render(data)


@pytest.mark.django_db
def test_the_api_answers_compact_json_or_indented_when_asked(client):
    # a game server's call without its key: DRF's error answer
    asked = {"path": "/api/v1/scores", "data": {}, "content_type": "application/json"}
    compact = client.post(**asked)
    indented = client.post(**asked, HTTP_ACCEPT="application/json; indent=2")

    assert compact.status_code == indented.status_code == 401
    assert compact["Content-Type"] == "application/json"
    assert compact.json()["error"]["code"] == "not_authenticated"
    assert compact.content == JSONRenderer().render(compact.json())
    assert indented.content == JSONRenderer().render(compact.json(), renderer_context={"indent": 2})
    assert b"\n  " in indented.content
