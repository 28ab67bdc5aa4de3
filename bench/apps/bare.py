"""The machine's reference: an ASGI app with no framework, answering every GET with a small JSON
body, so a read endpoint's throughput can be set against what the server alone can do here."""

from __future__ import annotations

from typing import Any

BODY = b'{"ok":true,"served_by":"a bare ASGI app, no framework","rank":1234567}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":  # uvicorn runs it with --lifespan off, as the service
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})
