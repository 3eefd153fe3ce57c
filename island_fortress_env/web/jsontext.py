"""JSON in and out of the web app, bounded and never a crash.

In: a request body or a file of the games directory is parsed with the bounded parser the game
records and deck files use (``engine.files.parse_json``: nesting depth, digits of an integer,
length of a number, no ``NaN``, ``Infinity`` or ``1e400``), after a bound on its size; a file is
read only if it is a regular file (``engine.files.read_file``: never a pipe that would wait).
Anything else is one ``FileRefused`` whose text is a phrase to follow a name ("the request body
is not valid JSON (...)").

Out: ``Answer`` writes JSON as ASCII (``\\uXXXX`` escapes), so any text a file holds (a lone
surrogate in an agent's name) can be sent; a number that is not finite is never sent.
"""

from __future__ import annotations

import json
import os
from typing import Any

from starlette.responses import JSONResponse

from island_fortress_env.engine.files import FileRefused, parse_json, read_file, size_text

__all__ = ["Answer", "FileRefused", "parse", "read"]


def parse(data: bytes, max_bytes: int) -> Any:
    """The JSON value of ``data`` (UTF-8), or ``FileRefused`` (see the module doc)."""
    if len(data) > max_bytes:
        raise FileRefused(f"is larger than {size_text(max_bytes)}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileRefused("is not a text (UTF-8)") from None
    return parse_json(text)


def read(path: str | os.PathLike[str], max_bytes: int) -> Any:
    """The JSON value of the regular file ``path`` of at most ``max_bytes``, or ``FileRefused``."""
    return parse(read_file(path, max_bytes), max_bytes)


class Answer(JSONResponse):
    """A JSON answer in ASCII (see the module doc)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
