"""Settings for `make run` on a developer's machine."""

from .base import *  # noqa: F403
