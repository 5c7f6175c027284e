"""Bulk load and dump with PostgreSQL COPY inside the session's transaction."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from sqlalchemy.orm import Session

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _psycopg(session: Session) -> psycopg.Connection[Any]:
    """The psycopg connection under the session's transaction (COPY is psycopg's)."""
    raw = session.connection().connection.driver_connection
    if not isinstance(raw, psycopg.Connection):
        raise TypeError(f"COPY needs a psycopg connection, not {type(raw).__name__}")
    return raw


def _text_column(values: np.ndarray | Sequence[object]) -> list[str]:
    """COPY text-format cells of one column (None becomes NULL)."""
    array = np.asarray(values)
    if array.dtype.kind == "f":
        return [repr(v) for v in array.tolist()]
    items = array.tolist()
    cells = [str(v) for v in items]
    if any(("\\" in c or "\t" in c or "\n" in c or "\r" in c) for c in cells):
        cells = [c.translate(_ESCAPES) for c in cells]
    if array.dtype.kind == "O":
        cells = ["\\N" if v is None else c for v, c in zip(items, cells, strict=True)]
    return cells


def copy_rows(
    session: Session, table: str, columns: Sequence[str], data: Sequence[np.ndarray | Sequence[object]]
) -> int:
    """COPY parallel column arrays into `table` in the session's transaction; returns the row count."""
    if not data or len(data[0]) == 0:
        return 0
    cells = [_text_column(column) for column in data]
    payload = ("\n".join(map("\t".join, zip(*cells, strict=True))) + "\n").encode()
    raw = _psycopg(session)
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        copy.write(payload)
    return len(data[0])


def copy_out(session: Session, query: sql.Composable, *, delimiter: str = "\t") -> Iterator[bytes]:
    """Stream the text rows of a SELECT with COPY TO STDOUT."""
    raw = _psycopg(session)
    statement = sql.SQL("COPY ({}) TO STDOUT WITH (FORMAT text, DELIMITER {})").format(query, sql.Literal(delimiter))
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        yield from (bytes(block) for block in copy)
