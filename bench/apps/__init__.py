"""Apps the benchmark serves beside the service's own: a bare ASGI app, any server's ceiling."""
