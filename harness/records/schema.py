"""The run-file schema version and its check, shared by every reader of run files."""

from __future__ import annotations

from typing import Any

from harness.errors import UserError

SCHEMA = "crucible.run/1.0"
SCHEMA_MAJOR = 1


def check_schema(schema: str | None, where: Any = "run file") -> None:
    """Refuse a schema this reader does not know, saying which and what to do."""
    try:
        name, version = str(schema).split("/")
        major = int(version.split(".")[0])
    except ValueError:
        raise UserError(f"{where}: unreadable schema {schema!r}; expected 'crucible.run/<major>.<minor>'") from None
    if name != "crucible.run" or major != SCHEMA_MAJOR:
        raise UserError(
            f"{where}: schema {schema!r} is not supported by this reader "
            f"(it reads {SCHEMA}); upgrade Crucible to read it"
        )
