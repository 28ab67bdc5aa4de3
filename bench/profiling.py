"""Where the time goes inside the servers: py-spy samples a process group while wrk repeats a
phase (never during a measured run), and the stacks are summed by package and by function."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .errors import BenchError
from .options import ROOT
from .processes import BIN

PROJECT_DIRS = ("config", "leaderboards", "matches", "seasons")
TOP = 12


def py_spy() -> str | None:
    found = shutil.which("py-spy")
    if found:
        return found
    candidate = BIN / "py-spy"
    return str(candidate) if candidate.exists() else None


def profile_start(*, pid: int, seconds: float, output: Path) -> subprocess.Popen[bytes]:
    tool = py_spy()
    if tool is None:
        raise BenchError("py-spy is not installed: pip install -e '.[bench]'")
    return subprocess.Popen(
        [
            tool,
            "record",
            "--pid",
            str(pid),
            "--subprocesses",
            "--nonblocking",
            # Only threads holding the GIL: where the Python CPU goes, not who is waiting.
            "--gil",
            "--full-filenames",
            "--nolineno",
            "--format",
            "raw",
            "--duration",
            str(max(1, round(seconds))),
            "--output",
            str(output),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def profile_finish(
    process: subprocess.Popen[bytes], output: Path, timeout: float
) -> dict[str, Any]:
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise BenchError("py-spy did not finish in time") from None
    if process.returncode != 0 or not output.exists():
        raise BenchError(f"py-spy failed: {stderr.decode(errors='replace').strip()[-500:]}")
    return profile_summary(output)


def _where(frame: str) -> tuple[str, str]:
    """(function, file) of a py-spy frame 'function (path)'."""
    function, _, rest = frame.rpartition(" (")
    return function, rest.rstrip(")")


def _package(path: str) -> str:
    """site-packages' top-level package, `app:<dir>` for the project, `stdlib:<module>`."""
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0]
    try:
        relative = Path(path).resolve().relative_to(ROOT)
    except ValueError:
        _, marker, rest = path.partition(f"/lib/python{sys.version_info[0]}.{sys.version_info[1]}/")
        return f"stdlib:{rest.split('/', 1)[0].removesuffix('.py')}" if marker else "other"
    return f"app:{relative.parts[0]}" if relative.parts[0] in PROJECT_DIRS else "other"


def _short(frame: str) -> str:
    function, path = _where(frame)
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    else:
        try:
            path = str(Path(path).resolve().relative_to(ROOT))
        except ValueError:
            path = Path(path).name
    return f"{function} ({path})"


def profile_summary(raw: Path) -> dict[str, Any]:
    """Shares of the samples: by package of the innermost frame (self time), the hottest
    innermost frames, and the project's own functions by inclusive time."""
    total = 0
    by_package: Counter[str] = Counter()
    self_frames: Counter[str] = Counter()
    app_inclusive: Counter[str] = Counter()
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [f for f in stack.split(";") if " (" in f]
        if not frames:
            continue
        total += count
        leaf = frames[-1]
        by_package[_package(_where(leaf)[1])] += count
        self_frames[_short(leaf)] += count
        for frame in set(frames):
            if _package(_where(frame)[1]).startswith("app:"):
                app_inclusive[_short(frame)] += count

    def shares(counter: Counter[str]) -> list[list[Any]]:
        return [[name, round(100 * n / total, 1)] for name, n in counter.most_common(TOP)]

    if total == 0:
        return {"samples": 0}
    return {
        "samples": total,
        "self_by_package_pct": shares(by_package),
        "self_top_frames_pct": shares(self_frames),
        "app_functions_inclusive_pct": shares(app_inclusive),
        "raw": str(raw),
    }
