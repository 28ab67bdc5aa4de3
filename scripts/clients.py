"""The API's typed clients, generated from its OpenAPI schema: `make clients` writes the schema
from the code (clients/openapi.json), then the Python package (clients/python, by
openapi-python-client) and the TypeScript one's types (clients/typescript/src/schema.ts, by
openapi-typescript). tests/clients regenerates each into a temporary folder and fails when the
committed files differ, so the clients cannot drift from the API.

`python -m scripts.clients install` installs the TypeScript package's tools from its lock file
(npm ci) when they are missing or older than it; `make test` and `make clients` run it first.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import django
from django.core.management import call_command

from scripts.processes import ROOT, ServiceError

CLIENTS = ROOT / "clients"
SCHEMA = CLIENTS / "openapi.json"
PYTHON_CLIENT = CLIENTS / "python"
PYTHON_CONFIG = CLIENTS / "openapi-python-client.yaml"
TYPESCRIPT_CLIENT = CLIENTS / "typescript"
TYPESCRIPT_SCHEMA = TYPESCRIPT_CLIENT / "src" / "schema.ts"
NODE_MODULES = TYPESCRIPT_CLIENT / "node_modules"
# Bounds on the tools; none of them is a speed requirement.
NPM_CI_SECONDS = 600
GENERATOR_SECONDS = 120
NODE_MISSING = (
    "npm is missing: the TypeScript client is generated and tested with Node.js 20+ and npm"
    " (Debian: `apt-get install nodejs npm`)"
)


def schema_text() -> str:
    """The OpenAPI schema of the code as JSON, validated; Django must be set up."""
    out = io.StringIO()
    call_command("spectacular", format="openapi-json", validate=True, stdout=out)
    return out.getvalue()


def _run(args: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> None:
    try:
        done = subprocess.run(
            args,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=GENERATOR_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ServiceError(f"{args[0]}: not done within {GENERATOR_SECONDS} s") from exc
    if done.returncode != 0:
        raise ServiceError(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    # openapi-python-client reports a skipped post hook (ruff not found) as a warning only,
    # which would leave the code unformatted and unlike the committed one.
    if "Skipping Integration" in done.stdout + done.stderr:
        raise ServiceError(f"{' '.join(args)}:\n{done.stdout}{done.stderr}")


def python_client_generate(schema: Path, output: Path) -> None:
    """The Python package for `schema`, written (over whatever was there) to `output`."""
    bin_dir = Path(sys.executable).parent
    # Its post hooks format the code with the project's ruff; ruff keeps no cache in the package.
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["RUFF_NO_CACHE"] = "true"
    _run(
        [str(bin_dir / "openapi-python-client"), "generate", "--path", str(schema)]
        + ["--config", str(PYTHON_CONFIG), "--meta", "pdm", "--output-path", str(output)]
        + ["--overwrite"],
        cwd=ROOT,
        env=env,
    )


def typescript_client_generate(schema: Path, output: Path) -> None:
    """The TypeScript package's types for `schema`, written to the file `output`."""
    _run(
        [str(NODE_MODULES / ".bin" / "openapi-typescript"), str(schema), "--output", str(output)],
        cwd=TYPESCRIPT_CLIENT,
    )


def typescript_install() -> None:
    """The TypeScript package's tools, installed from its lock file unless already so."""
    installed = NODE_MODULES / ".package-lock.json"
    lock = TYPESCRIPT_CLIENT / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise ServiceError(NODE_MISSING)
    print("[clients] npm ci in clients/typescript", flush=True)
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=TYPESCRIPT_CLIENT,
            capture_output=True,
            text=True,
            timeout=NPM_CI_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ServiceError(f"npm ci: not done within {NPM_CI_SECONDS} s") from exc
    if done.returncode != 0:
        raise ServiceError(f"npm ci failed:\n{done.stdout}{done.stderr}")
    installed.touch()


def clients_generate() -> None:
    """Write the schema of the code, then both clients from it."""
    SCHEMA.write_text(schema_text())
    python_client_generate(SCHEMA, PYTHON_CLIENT)
    # Written beside and moved, so a failed run leaves the committed types as they were.
    with tempfile.TemporaryDirectory(dir=TYPESCRIPT_SCHEMA.parent) as scratch:
        written = Path(scratch) / TYPESCRIPT_SCHEMA.name
        typescript_client_generate(SCHEMA, written)
        written.replace(TYPESCRIPT_SCHEMA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["generate", "install"])
    command = parser.parse_args().command
    try:
        typescript_install()
        if command == "generate":
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
            django.setup()
            clients_generate()
            print(f"[clients] wrote {SCHEMA.relative_to(ROOT)} and both clients", flush=True)
    except ServiceError as exc:
        print(f"[clients] {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
