"""The harness's load generators are Debian's packages: found on the PATH, or installed with
apt-get when the harness runs as root, or else a clear message saying what to install."""

from __future__ import annotations

import os
import shutil
import subprocess

from .errors import BenchError

# Another apt-get (a second test worker installing chromium, say) holds dpkg's lock for a
# while: wait for it instead of failing at once, as apt-get does by default.
_APT = ["apt-get", "-q", "-o", "DPkg::Lock::Timeout=600"]


def apt_install(*packages: str, recommends: bool = False) -> None:
    """Debian's `packages` installed without questions (with their recommended packages when
    `recommends`); raises CalledProcessError or TimeoutExpired when apt-get fails or hangs."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([*_APT, "update"], check=True, env=env, timeout=900)
    subprocess.run(
        [*_APT, "install", "-y", *([] if recommends else ["--no-install-recommends"]), *packages],
        check=True,
        env=env,
        timeout=1200,
    )


def debian_tool(command: str, package: str) -> str:
    """The path of `command`; its Debian `package` installed first when missing (as root)."""
    found = shutil.which(command)
    if found:
        return found
    hint = f"install Debian's package: `sudo apt-get install {package}`"
    if os.geteuid() != 0:
        raise BenchError(f"{command} is missing: {hint}")
    print(f"[bench] {command} is missing: installing Debian's {package} with apt-get", flush=True)
    try:
        apt_install(package)
    except (subprocess.SubprocessError, OSError) as exc:
        raise BenchError(f"installing {package} failed ({exc}); {hint}") from exc
    found = shutil.which(command)
    if not found:
        raise BenchError(f"{command} is still missing after apt-get; {hint}")
    return found
