"""Counters of the write path, exported by the service's Prometheus endpoint."""

from prometheus_client import Counter

RESULTS_ACCEPTED = Counter(
    "leaderboard_results_accepted",
    "Match results committed to PostgreSQL (duplicates not included).",
)
