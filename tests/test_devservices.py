"""The local services `make run` and `make test` find or start: a Redis left running by an
earlier checkout whose directory is gone refuses every write (MISCONF); it is replaced, not
used."""

from __future__ import annotations

import contextlib
import shutil

import pytest
import redis

from scripts import devservices
from tests.fault.procs import free_port, wait_until


@pytest.fixture
def local_server(tmp_path, monkeypatch):
    monkeypatch.setattr(devservices, "RUN", tmp_path / "run")
    url = f"redis://127.0.0.1:{free_port()}/0"
    yield url
    with (
        redis.Redis.from_url(url, socket_timeout=2) as client,
        contextlib.suppress(redis.exceptions.ConnectionError),
    ):
        client.shutdown(nosave=True)


def test_a_server_whose_directory_is_gone_is_replaced_by_a_working_one(local_server, tmp_path):
    engine = devservices.redis_engine()
    devservices.ensure_redis(local_server, engine=engine)
    started = redis.Redis.from_url(local_server, socket_timeout=2)
    first_pid = started.info("server")["process_id"]
    # given: its directory removed under it, and a save that therefore failed
    shutil.rmtree(tmp_path / "run")
    started.bgsave()
    wait_until(
        lambda: started.info("persistence")["rdb_bgsave_in_progress"] == 0,
        timeout=20,
        what="the save to end",
    )
    with pytest.raises(redis.exceptions.ResponseError, match="MISCONF"):
        started.set("k", "v")

    # when
    devservices.ensure_redis(local_server, engine=engine)

    # then: another server answers there, and it takes writes
    with redis.Redis.from_url(local_server, socket_timeout=2) as client:
        assert client.info("server")["process_id"] != first_pid
        assert client.set("k", "v")
        assert client.get("k") == b"v"


def test_make_run_prints_where_the_player_pages_are(capsys, monkeypatch):
    monkeypatch.setenv("PORT", "8123")
    monkeypatch.delenv("HOST", raising=False)
    monkeypatch.setattr("sys.argv", ["devservices.py", "--print-urls"])

    devservices.main()

    printed = capsys.readouterr().out
    assert "Pages:    http://127.0.0.1:8123/" in printed
    assert "API docs: http://127.0.0.1:8123/api/v1/docs/" in printed
