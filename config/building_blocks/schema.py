"""OpenAPI schema post-processing: document the error body every API operation may answer with."""

from typing import Any

ERROR_STATUSES = {
    "400": "Invalid input (validation_error, malformed_json, ...); nothing was written.",
    "401": "Missing, unknown or revoked game-server key.",
    "403": "The key may not do this (board_not_allowed).",
    "404": "Unknown board, season or player.",
    "409": "Conflicts with the season or stored results (season_closed, conflict, ...).",
    "413": "The request body is too large.",
    "429": "Rate limited; see Retry-After.",
    "503": "PostgreSQL or Redis is unavailable; the request was not confirmed.",
}

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"nullable": True},
            },
        }
    },
}


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular POSTPROCESSING_HOOK: every /api/ operation documents the error body."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in ERROR_STATUSES.items():
                responses.setdefault(
                    status,
                    {
                        "description": description,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                        },
                    },
                )
    return result
