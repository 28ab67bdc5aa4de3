"""The request body limit in front of every HTTP request, outermost of the layers the ASGI entry
point (server/asgi.py) puts around the apps: it needs no app, only the setting."""

import json

from django.conf import settings

from config.building_blocks.errors import error_body
from config.building_blocks.minute_counts import process_counts


class RequestBodyLimit:
    """Request bodies over MAX_REQUEST_BODY_BYTES are answered 413 before they are read.

    A limit in the view's parser would come after the upload (Django reads a body it parses
    whole, and a2wsgi streams it in as the view reads). Here a body
    whose Content-Length is over the limit is refused without reading a byte (the server holds
    a body to its declared length), and a body sent without one (chunked) is read only up to
    the limit, then handed on with its length declared, so the views can read it too.
    """

    def __init__(self, app) -> None:  # noqa: ANN001
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = settings.MAX_REQUEST_BODY_BYTES
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > limit:
                return await _payload_too_large(send, limit)
            return await self.app(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client left before sending its body
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                return await _payload_too_large(send, limit)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if body:
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        sent = False

        async def replay():  # noqa: ANN202
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


async def _payload_too_large(send, limit: int) -> None:  # noqa: ANN001
    body = json.dumps(
        error_body("payload_too_large", f"The request body may be at most {limit} bytes.")
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                # The rest of the body stays unread: this connection cannot carry another request.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
    process_counts().response(413)
