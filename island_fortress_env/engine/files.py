"""Files people give the game (favor decks, game records): read with limits, parsed with bounds,
and their text made safe for a terminal. Standard library only, so every layer can use it.

* ``read_file(path, limit)``: the bytes of a regular file of at most ``limit`` bytes. A named
  pipe, a device, a socket or a directory is refused before it is opened (``os.stat``) and
  again after (``fstat`` of a descriptor opened without blocking, so a file swapped in between
  is caught too, and a pipe never waits for a writer); a file is refused by its size before it
  is read, and at most ``limit + 1`` bytes are ever read.
* ``read_text(path, limit)``: the same, decoded as UTF-8.
* ``parse_json(text)``: JSON nested at most ``MAX_DEPTH`` deep (checked before the parser
  recurses), integers of at most ``MAX_INT_DIGITS`` digits (checked before ``int()`` sees the
  digits, so Python's own limit on them never shows), other numbers of at most
  ``MAX_NUMBER_CHARS`` characters, and no NaN or Infinity.
* ``printable(text)``: control characters (ESC, carriage returns, bidirectional overrides, line
  breaks) written as their escapes, so text from a file cannot drive a terminal.

``read_file``, ``read_text`` and ``parse_json`` raise ``FileRefused`` (a ``ValueError``) whose
text says what is wrong with the file in a phrase ("is a named pipe (FIFO), not a regular file")
but does not name it: each caller puts its own name for the file in front and raises its own
error (``DeckError``, ``RecordError``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from typing import Any

MAX_DEPTH = 32  # JSON nesting: a deck needs 4 levels, a record with its deck 6
MAX_INT_DIGITS = 20  # 2**64 has 20 digits: no field of a deck or a record needs more
MAX_NUMBER_CHARS = 64  # a number with a fraction or an exponent, as written

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 opens, -1 (as a signed byte) closes


class FileRefused(ValueError):
    """A file that cannot be used; the text is a phrase about it ("is larger than 1 MB")."""


def size_text(size: int) -> str:
    """A byte count in the largest unit that divides it: ``8 MB``, ``64 KB``, ``100 bytes``."""
    for unit, scale in (("MB", 2**20), ("KB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, words in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return words
    return "a special file"


def _check(st: os.stat_result, limit: int) -> None:
    kind = _kind(st.st_mode)
    if kind is not None:
        raise FileRefused(f"is {kind}, not a regular file")
    if st.st_size > limit:
        raise FileRefused(f"is larger than {size_text(limit)}")


def _cannot_read(exc: OSError) -> FileRefused:
    return FileRefused(f"cannot be read ({exc.strerror or exc})")


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a pipe swapped in after the stat is opened without waiting
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def read_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file ``path``, which holds at most ``limit`` of them; otherwise
    ``FileRefused``. Never waits on a pipe, and never reads more than ``limit + 1`` bytes."""
    try:
        _check(os.stat(path), limit)
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise _cannot_read(exc) from None
    try:
        _check(os.fstat(fd), limit)
        chunks: list[bytes] = []
        total = 0
        while total <= limit:  # the size may have grown since the fstat
            chunk = os.read(fd, min(2**20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise _cannot_read(exc) from None
    finally:
        os.close(fd)
    if total > limit:
        raise FileRefused(f"is larger than {size_text(limit)}")
    return b"".join(chunks)


def read_text(path: str | os.PathLike[str], limit: int) -> str:
    """``read_file``, decoded as UTF-8 (``FileRefused`` if it is not)."""
    return decode(read_file(path, limit))


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRefused(f"is not a text file (not UTF-8 at byte {exc.start})") from None


def json_depth(text: str) -> int:
    """How deep the arrays and objects of the JSON ``text`` nest (brackets inside strings do not
    count; for text that is not JSON, an upper bound of what a parser would reach)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    steps = memoryview(brackets.encode("ascii").translate(_STEPS)).cast("b")
    return max(accumulate(steps), default=0)


class _Refused(Exception):
    """Raised inside the JSON parser's hooks: a number no file of ours holds."""


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"the number {text}, too large for a float")
    return value


def _no_constant(name: str) -> float:
    raise _Refused(f"{name} ({name} is not a JSON number)")


def parse_json(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``text``, within the bounds above; ``FileRefused`` otherwise."""
    if json_depth(text) > max_depth:
        raise FileRefused(f"holds JSON nested too deeply (more than {max_depth} levels)")
    try:
        return json.loads(
            text, parse_int=_bounded_int, parse_float=_bounded_float, parse_constant=_no_constant
        )
    except json.JSONDecodeError as exc:
        raise FileRefused(f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except _Refused as exc:
        raise FileRefused(f"holds {exc}") from None
    except RecursionError:  # (the depth check above comes first; this is the parser's own limit)
        raise FileRefused("holds JSON nested too deeply") from None
    except ValueError as exc:  # any other refusal of the parser's, in words
        raise FileRefused(f"is not usable JSON ({printable(exc)})") from None


def read_json(path: str | os.PathLike[str], limit: int, max_depth: int = MAX_DEPTH) -> Any:
    """``parse_json(read_text(path, limit))``: a JSON file read with every limit."""
    return parse_json(read_text(path, limit), max_depth)


def printable(text: object) -> str:
    """``text`` safe for a terminal: every character that is not printable (control characters
    such as ESC, bidirectional overrides, line breaks) written as its escape (``\\x1b``)."""
    text = str(text)
    if text.isprintable():  # the common case: nothing to escape
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def printable_lines(text: object) -> str:
    """``printable`` line by line: the line breaks are kept, everything else is escaped."""
    return "\n".join(printable(line) for line in str(text).split("\n"))
