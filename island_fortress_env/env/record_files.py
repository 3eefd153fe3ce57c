"""Writing files safely: a new file written atomically and never over another, and output paths
checked before any work starts (``check_output_dir``, ``check_output_file``: one ``RecordError``
naming the path and why, for a record, a video, a checkpoint or an export alike).
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

__all__ = [
    "RecordError",
    "check_output_dir",
    "check_output_file",
    "checked_path",
    "temporary_path",
    "write_new",
]


class RecordError(ValueError):
    """A game record that cannot be read, written or replayed."""


def checked_path(path: str | Path, what: str) -> Path:
    """``path`` as a ``Path``; a ``RecordError`` naming ``what`` when it is empty."""
    if isinstance(path, str) and not path.strip():
        raise RecordError(f"{what}: the path is empty")
    return Path(path)


def temporary_path(path: Path) -> Path:
    """A fresh hidden name beside ``path`` for writing it atomically (same directory, so
    ``os.replace``/``os.link`` never cross file systems); ends with ``path``'s suffix. The
    random part only keeps names apart (it draws nothing a game uses)."""
    return path.with_name(f".{path.stem}.{os.getpid()}.{secrets.token_hex(6)}.tmp{path.suffix}")


def _create_temporary(path: Path, mode: int = 0o666) -> tuple[int, Path]:
    """Create a new temporary file beside ``path`` (exclusively: never one that exists);
    returns its descriptor and name."""
    while True:
        tmp = temporary_path(path)
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), tmp
        except FileExistsError:
            continue


def write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path`` atomically: ``FileExistsError`` if ``path`` exists
    (then nothing is written). The data goes to a temporary file first, which is linked to
    ``path`` (atomic, and refused when the name is taken); where the file system has no hard
    links the name is claimed with an exclusive create and the data renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # claims the name
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# --------------------------------------------------------------------------- output paths


def check_output_dir(path: str | Path, what: str = "directory", create: bool = False) -> Path:
    """Make sure files can be written in the directory ``path`` before any work starts: it
    exists, or its nearest existing parent is a writable directory (``create`` makes it, with
    its parents). A ``RecordError`` naming ``what`` and the path if it is empty, a file, or
    cannot be created or written."""
    path = checked_path(path, what)
    if path.exists() and not path.is_dir():
        raise RecordError(f"{what} {str(path)!r}: is a file, not a directory")
    if not create:
        _probe(_nearest_folder(path, what), what, path)
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"{what} {str(path)!r}: cannot be created ({exc.strerror or exc})") from None
    _probe(path, what, path)
    return path


def check_output_file(path: str | Path, what: str = "file", overwrite: bool = False) -> Path:
    """Make sure a file can be written at ``path`` before any work starts (nothing is created):
    a ``RecordError`` naming ``what`` and the path if it is empty, a directory, an existing file
    (unless ``overwrite``), or in a directory that cannot be created or written."""
    path = checked_path(path, what)
    if path.is_dir() or str(path).endswith(("/", os.sep)):
        raise RecordError(f"{what} {str(path)!r}: is a directory, not a file name")
    if path.exists() and not overwrite:
        raise RecordError(f"{what} {str(path)!r}: already exists; give a new name")
    _probe(_nearest_folder(path.absolute().parent, what, path), what, path)
    return path


def _nearest_folder(folder: Path, what: str, path: Path | None = None) -> Path:
    """``folder`` if it exists, else its nearest existing parent, which must be a directory
    (that is where the missing folders will be created)."""
    path = folder if path is None else path
    folder = folder.absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise RecordError(f"{what} {str(path)!r}: cannot be created ({str(folder)!r} is a file)")
    return folder


def _probe(directory: Path, what: str, path: Path) -> None:
    """Create and remove a temporary file in ``directory``: the one sure test that it can be
    written (permissions, read-only file systems, and root's exemptions all included)."""
    try:
        fd, probe = _create_temporary(directory / "write-check", 0o600)
        os.close(fd)
        probe.unlink()
    except OSError as exc:
        where = "" if directory == path else f" (in {str(directory)!r})"
        raise RecordError(f"{what} {str(path)!r}: cannot be written{where}: {exc.strerror or exc}") from None
