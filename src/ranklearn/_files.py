"""Writing output files safely: every file ranklearn writes goes through :func:`write_outputs`.

Rules (the README's "Command line" section states them for users):

* ``-`` is standard output.
* A regular file or a new path is written atomically: a temporary file in the same folder,
  then a rename, so readers see the old file or the whole new one, and a failure leaves
  the old file as it was.
* A symlink is written through: its target gets the new content, the link stays.
* A path that is, through any links, the process's own standard output or error
  (``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/2``, a symlink to them, or the very file
  the shell redirected it to) is written through that stream, where the shell opened it: what
  it already holds stays, as with ``-`` (reopening would truncate, renaming would replace).
* A special file (character device such as ``/dev/null`` or a terminal, FIFO, socket) and
  anything under ``/proc`` is written directly, never replaced by a rename.
* A path ending in ``/`` names a folder, never a file; an existing file that is write-protected
  for this user is refused, as the shell's ``>`` refuses it.
* A new file gets the usual mode under the umask (0644 with umask 022); an existing file
  keeps its mode.
* Several files (a data file and its ``.query`` file) are written together: every one is
  prepared before any is put in place, so a failure leaves none of them half-written.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
from collections.abc import Mapping
from os import PathLike

#: The path that means standard output (and standard input where a command reads one file).
STDIO = "-"

# Kernel files: a temporary file and a rename make no sense there. (Devices are found by their
# file type; files under /dev/shm are ordinary files of a tmpfs and are renamed into place.)
_DIRECT_PREFIXES = ("/proc/",)


def is_stdio(path: str | PathLike[str]) -> bool:
    """True for ``-``, the name of standard input or output."""
    return os.fspath(path) == STDIO


def _std_stream(path: str, fds: tuple[int, ...] = (1, 2)) -> int | None:
    """The first of ``fds`` (default: standard output, error) that ``path`` names (any spelling), else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    for fd in fds:
        try:
            if os.path.samestat(st, os.fstat(fd)):
                return fd
        except OSError:  # that descriptor is closed
            continue
    return None


def reads_stdin(path: str | PathLike[str]) -> bool:
    """True for a path that is the regular file this process's standard input reads (``< FILE``),
    under any name (``/dev/stdin`` too); not for ``-`` itself, nor for a terminal or a pipe,
    which writing does not destroy."""
    given = os.fspath(path)
    try:
        return _std_stream(given, (0,)) == 0 and stat.S_ISREG(os.fstat(0).st_mode)
    except OSError:  # standard input closed
        return False


def writes_stdout(path: str | PathLike[str]) -> bool:
    """True for ``-`` and for a path that is this process's standard output under any name."""
    given = os.fspath(path)
    return is_stdio(given) or _std_stream(given) == 1


def is_special(path: str | PathLike[str]) -> bool:
    """True for ``-``, this process's standard output or error under any name, and an existing
    file that is neither a regular file nor a folder (a device, FIFO or socket)."""
    given = os.fspath(path)
    if is_stdio(given) or _std_stream(given) is not None:
        return True
    try:
        mode = os.stat(given).st_mode
    except OSError:
        return False  # a new file
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _writes_directly(given: str, resolved: str) -> bool:
    """Whether ``given`` (resolving to ``resolved``) must be opened and written in place."""
    if given.startswith(_DIRECT_PREFIXES) or resolved.startswith(_DIRECT_PREFIXES):
        return True
    try:
        mode = os.stat(resolved).st_mode
    except FileNotFoundError:
        return False  # a new file
    except OSError as exc:  # e.g. a name too long for the file system
        raise _named(exc, given) from None
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _new_file_mode() -> int:
    """0o666 under the process umask, as ``open()`` would create the file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _check_target(given: str) -> tuple[str, bool, int | None]:
    """(resolved path, written directly?, 1 or 2 when it is standard output or error) of an
    output path other than ``-``.

    Raises
    ------
    OSError
        Naming ``given``: a directory, a path ending in ``/``, an existing file this user may
        not write.
    """
    if os.path.isdir(given):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", given)
    if given.endswith(("/", os.sep)):  # realpath and pathlib would drop the slash
        raise NotADirectoryError(errno.ENOTDIR, "ends with / but is not a folder; a file's name has none", given)
    resolved = os.path.realpath(given)  # through symlinks: the link stays a link
    descriptor = re.fullmatch(r"/proc/(?:self|\d+)/fd/(\d+)", resolved)
    if descriptor is not None and not os.path.exists(resolved):  # /dev/stdout with stdout closed
        raise OSError(errno.EBADF, f"file descriptor {descriptor.group(1)} is closed", given)
    stream = _std_stream(given)
    if stream is not None or _writes_directly(given, resolved):
        return resolved, True, stream
    if os.path.exists(resolved) and not os.access(resolved, os.W_OK):
        raise PermissionError(errno.EACCES, "the file is write-protected; it is not replaced", given)
    return resolved, False, None


def check_writable(path: str | PathLike[str]) -> None:
    """Fail now, before any long work, where :func:`write_output` would fail on ``path``.

    Raises
    ------
    OSError
        Naming the path as given: a directory, a path ending in ``/``, a write-protected file, a
        folder that does not exist or where this user cannot create files.
    """
    given = os.fspath(path)
    if is_stdio(given):
        return
    resolved, direct, _ = _check_target(given)
    if direct:
        return
    folder = os.path.dirname(resolved) or "."
    try:  # the temporary file of the real write goes here: try making one
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise _named(exc, given, folder) from None


def _named(exc: OSError, given: str, folder: str | None = None) -> OSError:
    """The same error naming the path as the user wrote it (not a temporary file)."""
    reason = exc.strerror or str(exc)
    if folder is not None:
        typed = os.path.dirname(given) or "."
        if os.path.realpath(typed) == os.path.realpath(folder):
            folder = typed  # the folder as the user wrote it, unless a symlink led elsewhere
        if isinstance(exc, FileNotFoundError) and os.path.isdir(folder):
            reason = "new files cannot be created in this folder"  # e.g. /sys
        elif isinstance(exc, FileNotFoundError):
            reason = "no such directory"
        reason = f"cannot write here ({reason}: {folder})"
    return type(exc)(exc.errno, reason, given)


class _Pending:
    """One output: a temporary file ready to be renamed into place, or bytes to write directly."""

    def __init__(self, path: str | PathLike[str], data: bytes) -> None:
        self.given = os.fspath(path)
        self.data = data
        self.tmp: str | None = None
        self.target = self.given
        self.stream: int | None = 1 if is_stdio(self.given) else None
        if self.stream is not None:
            return
        resolved, direct, self.stream = _check_target(self.given)
        if direct:
            return
        self.target = resolved
        try:
            old: os.stat_result | None = os.stat(resolved)
        except FileNotFoundError:
            old = None
        folder = os.path.dirname(resolved) or "."
        try:
            # a long name keeps its start only: the temporary name must fit the file system's limit too
            fd, self.tmp = tempfile.mkstemp(prefix=f".{os.path.basename(resolved)[:64]}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise _named(exc, self.given, folder) from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if old is None:
                    os.fchmod(fh.fileno(), _new_file_mode())
                else:  # the replacement keeps the file's mode and, where allowed, its owner
                    os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode))
                    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                        try:
                            os.fchown(fh.fileno(), old.st_uid, old.st_gid)
                        except PermissionError:
                            pass
                os.fsync(fh.fileno())
        except OSError as exc:
            self.discard()
            raise _named(exc, self.given) from None
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        """Put the content in place: rename the temporary file, or write the special file."""
        if self.stream is not None:
            stream = sys.stdout if self.stream == 1 else sys.stderr
            if stream is None:  # Python sets it to None when the descriptor was closed at start
                raise OSError(errno.EBADF, "is closed", f"standard {'output' if self.stream == 1 else 'error'}")
            try:
                stream.flush()  # text printed before stays before
                buffer = getattr(stream, "buffer", None)
                if buffer is not None:
                    buffer.write(self.data)
                    buffer.flush()
                elif is_stdio(self.given):  # a text-only stream (a notebook, redirect_stdout): "-" means it
                    stream.write(self.data.decode("utf-8", errors="replace"))
                    stream.flush()
                else:  # a path naming the descriptor itself: write there
                    view = memoryview(self.data)
                    while view:
                        view = view[os.write(self.stream, view) :]
            except OSError as exc:
                raise _named(exc, "standard output" if is_stdio(self.given) else self.given) from None
        elif self.tmp is None:
            try:
                with open(self.given, "wb") as fh:
                    fh.write(self.data)
            except FileNotFoundError as exc:  # e.g. a new name under /proc
                raise _named(exc, self.given, os.path.dirname(self.given) or ".") from None
            except OSError as exc:
                raise _named(exc, self.given) from None
        else:
            try:
                os.replace(self.tmp, self.target)
            except OSError as exc:
                self.discard()
                raise _named(exc, self.given) from None
            self.tmp = None

    def discard(self) -> None:
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except FileNotFoundError:
                pass
            self.tmp = None


def write_outputs(files: Mapping[str | PathLike[str], bytes]) -> None:
    """Write each path's bytes by the rules of this module; all files are prepared first.

    Parameters
    ----------
    files : mapping of path -> bytes
        Paths as the user wrote them (``-`` = standard output), in the order to write them.

    Raises
    ------
    OSError
        Naming the path as given: a directory, a folder that does not exist or where files
        cannot be created, a read-only place. No output has been changed then, except
        when a later special file fails after earlier outputs were put in place.
    """
    pending: list[_Pending] = []
    try:
        for path, data in files.items():
            pending.append(_Pending(path, data))
        for item in pending:
            item.commit()
    finally:
        for item in pending:
            item.discard()


def write_output(path: str | PathLike[str], data: bytes) -> None:
    """Write one output file (see :func:`write_outputs`)."""
    write_outputs({path: data})


def same_file(a: str | PathLike[str], b: str | PathLike[str]) -> bool:
    """Whether two paths name the same existing file (through symlinks and any spelling)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


__all__ = [
    "STDIO", "check_writable", "is_special", "is_stdio", "reads_stdin", "same_file", "writes_stdout", "write_output",
    "write_outputs",
]  # fmt: skip
