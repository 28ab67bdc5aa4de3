"""The harness's load generators are Debian's packages: found on the PATH, or installed with
apt-get when the harness runs as root, or else a clear message saying what to install."""

from __future__ import annotations

import os
import shutil
import subprocess

from .errors import BenchError


def debian_tool(command: str, package: str) -> str:
    """The path of `command`; its Debian `package` installed first when missing (as root)."""
    found = shutil.which(command)
    if found:
        return found
    hint = f"install Debian's package: `sudo apt-get install {package}`"
    if os.geteuid() != 0:
        raise BenchError(f"{command} is missing: {hint}")
    print(f"[bench] {command} is missing: installing Debian's {package} with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env, timeout=600)
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", package],
            check=True,
            env=env,
            timeout=600,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        raise BenchError(f"installing {package} failed ({exc}); {hint}") from exc
    found = shutil.which(command)
    if not found:
        raise BenchError(f"{command} is still missing after apt-get; {hint}")
    return found
