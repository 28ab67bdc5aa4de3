"""Applications the benchmark serves beside the service's own: a bare ASGI app, the machine's
ceiling for any Python server."""
