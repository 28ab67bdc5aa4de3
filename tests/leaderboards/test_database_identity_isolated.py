"""Runs test_database_identity.py in a process of its own (see its module comment): every test
there must pass."""

import os
import subprocess
import sys
from pathlib import Path

from tests.leaderboards.test_database_identity import ISOLATED

MODULE = Path(__file__).with_name("test_database_identity.py")


def test_the_database_identity_tests_pass_in_a_process_of_their_own():
    started = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "0", str(MODULE)],
        env={**os.environ, ISOLATED: "1", "TEST_DB_SUFFIX": f"_isolated{os.getpid()}"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )

    assert started.returncode == 0, started.stdout[-4000:] + started.stderr[-2000:]
    assert " passed" in started.stdout
    assert "failed" not in started.stdout
    assert "skipped" not in started.stdout
