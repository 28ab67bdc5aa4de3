"""A real local Redis Cluster for the tests: three primaries of the engine under test on free
loopback ports, nothing on disk, started and stopped by the test run itself (every wait bounded).
It lives in scripts/redis_cluster.py, where the benchmark starts one too."""

from __future__ import annotations

from scripts.redis_cluster import LocalRedisCluster

__all__ = ["LocalRedisCluster"]
