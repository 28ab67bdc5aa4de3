"""Where the time goes inside the servers: py-spy samples a process group while wrk repeats a
phase (never during a measured run), and the stacks are summed by package and by function."""

from __future__ import annotations

import functools
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.processes import BIN, ROOT, Process, Timeout

from .core import BenchError
from .environment import Bench

PROJECT_DIRS = ("config", "leaderboards", "matches", "seasons")
TOP = 12
PROFILE_SECONDS = 10.0


def profile(bench: Bench, label: str, pids: dict[str, int], load: Callable[[float], Any]) -> bool:
    """py-spy on each of `pids` and its children, threads holding the GIL only (CPU, not
    waiting), while `load` repeats a phase; returns whether it ran."""
    options, profiles = bench.options, bench.results["profiles"]
    if not options.profile:
        return False
    spy = shutil.which("py-spy") or (str(BIN / "py-spy") if (BIN / "py-spy").exists() else None)
    if spy is None:
        profiles["unavailable"] = "py-spy is not installed: pip install -e '.[bench]'"
        return False
    seconds = min(PROFILE_SECONDS, options.read_seconds)
    with bench.phases.phase(f"profile {label}"):
        running = {}
        try:
            for part, pid in pids.items():
                out = (bench.log_dir / f"profile-{label}-{part}.txt").resolve()
                argv = [spy, "record", "--pid", str(pid), "--subprocesses", "--nonblocking"]
                argv += ["--gil", "--full-filenames", "--nolineno", "--format", "raw"]
                argv += ["--duration", str(max(1, round(seconds))), "--output", str(out)]
                running[part] = (Process(argv, log=out.with_suffix(".log")).start(), out)
            load(seconds + 2)
            profiles[label] = {}
            for part, (process, out) in running.items():
                if process.wait(seconds + 30) != 0 or not out.exists():
                    raise BenchError(f"py-spy failed: {process.output().strip()[-500:]}")
                profiles[label][part] = profile_summary(out)
        except (BenchError, OSError, Timeout) as exc:
            # A profile explains the figures; it is not one of them, so its failure is noted only.
            profiles[label] = {"error": str(exc)}
            for process, _ in running.values():
                process.stop()
    return True


@functools.cache
def _frame(frame: str) -> tuple[str, str]:
    """A py-spy frame 'function (path)': its file's package (site-packages' top-level one,
    `app:<dir>` for the project's, `stdlib:<module>`) and the frame named short."""
    function, _, path = frame.rpartition(" (")
    path = path.rstrip(")")
    _, installed, package_path = path.partition("site-packages/")
    try:
        relative: Path | None = Path(path).resolve().relative_to(ROOT)
    except ValueError:
        relative = None
    if installed:
        package = package_path.split("/", 1)[0]
    elif relative is None:
        _, marker, rest = path.partition(f"/lib/python{sys.version_info[0]}.{sys.version_info[1]}/")
        package = f"stdlib:{rest.split('/', 1)[0].removesuffix('.py')}" if marker else "other"
    else:
        package = f"app:{relative.parts[0]}" if relative.parts[0] in PROJECT_DIRS else "other"
    return package, f"{function} ({package_path if installed else relative or Path(path).name})"


def profile_summary(raw: Path) -> dict[str, Any]:
    """Shares of the samples: by package of the innermost frame (self time), the hottest
    innermost frames, and the project's own functions by inclusive time."""
    by_package, self_frames, app_inclusive = Counter[str](), Counter[str](), Counter[str]()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = [f for f in stack.split(";") if " (" in f]
        if not frames or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        package, innermost = _frame(frames[-1])
        by_package[package] += count
        self_frames[innermost] += count
        for package, short in map(_frame, set(frames)):
            if package.startswith("app:"):
                app_inclusive[short] += count
    if total == 0:
        return {"samples": 0}

    def shares(counter: Counter[str]) -> list[list[Any]]:
        return [[name, round(100 * n / total, 1)] for name, n in counter.most_common(TOP)]

    return {
        "samples": total, "self_by_package_pct": shares(by_package),
        "self_top_frames_pct": shares(self_frames),
        "app_functions_inclusive_pct": shares(app_inclusive), "raw": str(raw),
    }  # fmt: skip
