"""The process entry points: the layer above every app, which assembles them (server/asgi.py)."""
