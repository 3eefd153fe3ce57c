"""Numbers typed at a prompt (``play``'s action number, the replay viewer's step): one reader.

An entry is a number when it is digits with an optional sign, in any script Python's ``int()``
reads (``12``, ``+3``, ``-1``, ``1_000``, ``١٢``, ``１２``). It is accepted when it lies in the range asked
for; otherwise the reason is given in one sentence: out of range, too long, or numeric
characters that are not decimal digits (``²``, ``½``, ``Ⅻ``). Entries that are not numbers at
all are left to the caller (a command or the start of an action's text).
"""

from __future__ import annotations

from dataclasses import dataclass

from island_fortress_env.env.records import printable

MAX_DIGITS = 12  # far above any step or action number; int() never sees a longer entry


@dataclass(frozen=True)
class NumberEntry:
    """A numeric entry: its ``value`` when it is in range, else None and ``message`` says why."""

    value: int | None
    message: str = ""


def shown(entry: str, limit: int = 24) -> str:
    """A person's entry quoted in a reply: control characters escaped, cut to ``limit``."""
    text = printable(entry)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def looks_numeric(entry: str) -> bool:
    """Numeric characters (and ``_`` between digits, as ``int()`` allows) with an optional
    leading sign, nothing else."""
    body = entry.strip()
    body = body[1:] if body[:1] in ("+", "-") else body
    return any(c.isnumeric() for c in body) and all(c.isnumeric() or c == "_" for c in body)


def read_number(entry: str, low: int, high: int, what: str) -> NumberEntry | None:
    """Read ``entry`` as a ``what`` number in [``low``, ``high``]; None when it is not a number."""
    if not looks_numeric(entry):
        return None
    text = entry.strip()
    choose = f"choose {low}-{high}" if low <= high else f"there is no {what} to choose"
    if len(text.lstrip("+-")) > MAX_DIGITS:
        return NumberEntry(None, f"'{shown(text)}' is too long for a {what} number: {choose}.")
    try:
        value = int(text)
    except ValueError:
        return NumberEntry(None, f"'{shown(text)}' is not a number in decimal digits: {choose}.")
    if not low <= value <= high:
        return NumberEntry(None, f"There is no {what} {value}: {choose}.")
    return NumberEntry(value)
