"""Writing output files: the one helper every command that writes a file uses.

A regular file (or one that does not exist yet) is written atomically: into a temporary file created
exclusively in the target's directory (``tempfile.mkstemp``: ``O_EXCL``, an unpredictable name, so a
planted symlink cannot redirect it), flushed to disk, then renamed over the target. A reader sees the old
file or the new one, never half of one, and a failed write (disk full, killed) leaves the target as it
was. Anything else (``-``, a FIFO, a character device such as ``/dev/stdout`` or ``/dev/full``) is
written directly: renaming over a device node would replace it with a regular file.

Every failure is an ``OutputError``: one line naming the file and what went wrong.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from scorer.errors import ToolgoldError


class OutputError(ToolgoldError):
    """An output file cannot be written (missing directory, no permission, disk full, read-only)."""


def describe_os_error(path: Path | str, exc: OSError, *, verb: str = "cannot write") -> str:
    """``cannot write out/x.jsonl: No such file or directory (the folder out does not exist)``."""
    reason = exc.strerror or type(exc).__name__
    target = Path(path)
    hint = ""
    if isinstance(exc, FileNotFoundError) and not target.parent.exists():
        hint = f" (the folder {target.parent} does not exist)"
    return f"{verb} {path}: {reason}{hint}"


def is_stream(path: Path) -> bool:
    """Whether ``path`` is ``-`` or an existing non-regular file (FIFO, device): written directly."""
    if str(path) == "-":
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def check_writable(path: Path) -> None:
    """Raise ``OutputError`` now, before any work, if ``path`` could not be written later."""
    if is_stream(path):
        if str(path) != "-" and not os.access(path, os.W_OK):
            raise OutputError(f"cannot write {path}: Permission denied")
        return
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory")
    folder = path.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {path}: the folder {folder} does not exist")
    try:  # os.access is not enough: a read-only mount or a full inode table only shows on creating a file
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(describe_os_error(path, exc)) from None
    os.close(fd)
    os.unlink(probe)


def durable(fh: TextIO) -> None:
    """Push what was written to ``fh`` to the disk now (a full disk raises here, inside the caller's
    ``output_file`` block, so nothing is left behind); a stream that cannot be synced is only flushed."""
    fh.flush()
    try:
        os.fsync(fh.fileno())
    except (ValueError, io.UnsupportedOperation):  # no file descriptor (a test's captured stdout)
        pass
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):  # a pipe or terminal cannot be synced
            raise


@contextmanager
def output_file(path: Path, *, exclusive: bool = False) -> Iterator[TextIO]:
    """A text stream that ends up as ``path`` (UTF-8, ``\\n`` line ends) once the block finishes.

    With ``exclusive`` an existing ``path`` is never replaced: ``OutputError`` instead (another writer
    created it meanwhile). If the block raises, nothing is left behind and the target is untouched.
    """
    if is_stream(path):
        if str(path) == "-":
            yield sys.stdout
            sys.stdout.flush()
            return
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                yield fh
        except OSError as exc:
            raise OutputError(describe_os_error(path, exc)) from None
        return
    folder = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(describe_os_error(path, exc)) from None
    tmp = Path(tmp_name)
    try:
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                os.fchmod(fh.fileno(), _mode_for(path))
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            if exclusive:
                os.link(tmp, path)  # fails if path exists: never replaces it
                tmp.unlink()
            else:
                os.replace(tmp, path)
            sync_folder(folder)  # the new name is durable too, not only the content
        except FileExistsError:
            raise OutputError(f"cannot write {path}: it already exists") from None
        except OSError as exc:
            raise OutputError(describe_os_error(path, exc)) from None
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Write ``text`` to ``path`` through ``output_file``."""
    with output_file(path, exclusive=exclusive) as fh:
        fh.write(text)


def sync_folder(folder: Path) -> None:
    """fsync a directory, so a rename into it survives a crash (a filesystem that cannot: nothing to do)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _mode_for(path: Path) -> int:
    """The target's current permissions, or what a plain ``open`` would give a new file (0666 & ~umask);
    ``mkstemp`` alone would leave every output readable by its owner only."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


__all__ = ["OutputError", "check_writable", "describe_os_error", "durable", "is_stream", "output_file", "sync_folder", "write_text"]
