"""The building blocks every app shares: Redis connections by role (`redis`), rate limits
(`throttles`), the error body (`errors`), input rules (`input_rules`, `player_ids`, `slugs`,
`api`), admin base classes (`admin`), bounded caches (`caching`), liveness and metrics
(`health`), the OpenAPI post-processing (`schema`), the pages' CSP (`content_security`) and the
request body limit (`request_body_limit`). They import no app."""
