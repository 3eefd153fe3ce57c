"""The errors the web app answers with: one status and one sentence each."""

from __future__ import annotations

import reprlib
from typing import Any

# A value from a request quoted in an error: a few levels, a few items and characters of it.
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel = 3
_SHOWN.maxstring = _SHOWN.maxother = 60
_SHOWN.maxlong = 24


def shown(value: Any) -> str:
    """``value`` for an error message: its repr (control characters escaped), cut short
    whatever its size or nesting."""
    return _SHOWN.repr(value)


class WebError(Exception):
    """A request the app refuses; ``status`` is the HTTP status, the message says why."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(WebError):
    status = 400


class Forbidden(WebError):
    status = 403


class NotFound(WebError):
    status = 404


class Conflict(WebError):
    """Well formed, but not now: not your turn, not a legal choice, the game is over."""

    status = 409


class TooLarge(WebError):
    status = 413


class WrongMediaType(WebError):
    """A body that is not JSON (only ``application/json`` is read)."""

    status = 415


class TooMany(WebError):
    """More than the server takes now: unfinished games in use, one client's analyses."""

    status = 429


class BadGateway(WebError):
    """An agent served elsewhere (``remote:URL``) failed to answer: the game cannot go on."""

    status = 502
