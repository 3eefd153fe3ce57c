"""The errors the web app answers with: one status and one sentence each."""

from __future__ import annotations


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


class Unavailable(WebError):
    """The server cannot take more of this now (too many games or analyses running)."""

    status = 503
