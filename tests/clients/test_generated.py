"""The committed clients are those of the code: its schema is clients/openapi.json, and each
generator, run again on that file, writes exactly the committed code (`make clients` otherwise)."""

from __future__ import annotations

from pathlib import Path

from scripts import clients

RUN_MAKE_CLIENTS = "run `make clients` (generated code is never edited by hand)"
# Left in the package by an editable install or an import, never generated.
NOT_GENERATED = {"__pycache__", ".pdm-build"}


def _tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not NOT_GENERATED.intersection(path.relative_to(root).parts)
    }


def _differences(committed: dict[str, bytes], generated: dict[str, bytes]) -> list[str]:
    return [
        name
        for name in sorted(committed.keys() | generated.keys())
        if committed.get(name) != generated.get(name)
    ]


def test_the_schema_file_is_the_schema_of_the_code() -> None:
    # given: the schema drf-spectacular writes from the code
    schema = clients.schema_text()

    # then: it is the committed one, which the clients were generated from
    assert schema == clients.SCHEMA.read_text(), (
        f"clients/openapi.json is not the code's schema: the API changed, {RUN_MAKE_CLIENTS}"
    )


def test_the_python_client_is_generated_from_the_schema_file(tmp_path: Path) -> None:
    # when: the Python client is generated again from the committed schema
    clients.python_client_generate(clients.SCHEMA, tmp_path / "python")

    # then: every file is the committed one, and there are no others
    differences = _differences(_tree(clients.PYTHON_CLIENT), _tree(tmp_path / "python"))
    assert differences == [], (
        f"clients/python is not what clients/openapi.json generates ({differences}): "
        f"{RUN_MAKE_CLIENTS}"
    )


def test_the_typescript_client_is_generated_from_the_schema_file(
    tmp_path: Path, typescript_tools: Path
) -> None:
    # when: the TypeScript client's types are generated again from the committed schema
    clients.typescript_client_generate(clients.SCHEMA, tmp_path / "schema.ts")

    # then: they are the committed ones
    generated = (tmp_path / "schema.ts").read_bytes()
    assert generated == clients.TYPESCRIPT_SCHEMA.read_bytes(), (
        "clients/typescript/src/schema.ts is not what clients/openapi.json generates: "
        f"{RUN_MAKE_CLIENTS}"
    )
