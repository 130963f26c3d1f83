"""How a command's output reaches stdout or ``-o``: cleaned of credentials, escaped, in
chunks of whole lines, so an output of any size is never held whole."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from agentloop_tools._errors import UsageProblem
from agentloop_tools._visible import visible


def emit(output: str | None, write: Callable[[TextIO], None], *, exact: bool = False) -> None:
    """Write the output (cleaned of credentials) to ``output`` or stdout, as it is made.

    Unless ``exact`` (JSON, JUnit), every control character left in it is written
    as its escape: the formatters escape each recorded field, this is the backstop.
    Text is cleaned and written in chunks that end at a line's end (no credential or
    key shape spans one: every format escapes a recorded newline), so an output of any
    size is never held whole.

    A closed pipe (``| head``) ends the output quietly: the verdict and exit code
    stand, as they do not depend on who reads the report.
    """
    if output is None:
        _write_through(_Chunks(sys.stdout, exact, output), write)
        return
    target = os.path.realpath(output)  # a symbolic link's target is written, as open() does
    temporary = _temporary_beside(target)
    try:
        file = open(temporary or output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as error:
        _remove(temporary)
        raise UsageProblem(f"-o {output}: cannot be written ({error.strerror})") from None
    try:
        with file:
            _write_through(_Chunks(file, exact, output), write)
    except BaseException:
        _remove(temporary)
        raise
    if temporary is not None:
        try:
            os.replace(temporary, target)
        except OSError as error:
            _remove(temporary)
            raise UsageProblem(f"-o {output}: cannot be written ({error.strerror})") from None


def _temporary_beside(target: str) -> str | None:
    """A new file in ``target``'s directory, with the mode ``open(target, "w")`` would
    give: the output replaces ``target`` only once whole, so a failure leaves the old
    file as it was. None where that cannot be (a device or a pipe such as /dev/stdout,
    a file with other hard links, a directory that takes no new file): the output is
    then written in place."""
    import stat
    import tempfile

    try:
        found = os.stat(target)
        # A file this user may not write is refused by open() as before; a file with
        # other hard links is written in place, so every name keeps showing it, and so
        # is another user's file, which a replacement would take from them.
        if not stat.S_ISREG(found.st_mode) or found.st_nlink > 1:
            return None
        if found.st_uid != os.geteuid():
            return None
        if not os.access(target, os.W_OK):
            return None
        permissions = stat.S_IMODE(found.st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        permissions = 0o666 & ~umask
    except OSError:
        return None
    directory, name = os.path.split(target)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    except OSError:
        return None
    os.close(handle)
    with contextlib.suppress(OSError):
        os.chmod(temporary, permissions)
    return temporary


def _remove(temporary: str | None) -> None:
    if temporary is not None:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _write_through(chunks: _Chunks, write: Callable[[TextIO], None]) -> None:
    try:
        write(chunks)
        chunks.close()
    except BaseException:
        # The one line on stderr is the caller's: what is held must not be written again
        # when the stream is collected (io closes it then), after that line.
        chunks.abandon()
        raise


class _Chunks(io.StringIO):
    """A text stream that passes on cleaned text a chunk of whole lines at a time."""

    SIZE = 256 * 1024

    def __init__(self, out: TextIO, exact: bool, output: str | None) -> None:
        super().__init__()
        self.out, self.exact, self.output = out, exact, output
        self.closed_pipe = False
        self.cleaner = _cleaner()

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.tell() >= self.SIZE:
            held = self.getvalue()
            cut = held.rfind("\n") + 1
            if cut:
                self.seek(0)
                self.truncate()
                super().write(held[cut:])
                self._pass(held[:cut])
        return written

    def close(self) -> None:
        if self.closed:  # io closes again when collected
            return
        self._pass(self.getvalue())
        super().close()
        self._pass(None)  # stdout is flushed: its closed pipe is known now

    def abandon(self) -> None:
        """Drop what is held, unwritten: the output failed and has been reported."""
        self.closed_pipe = True
        io.StringIO.close(self)

    def _pass(self, text: str | None) -> None:
        if self.closed_pipe:
            return
        try:
            if text is None:
                self.out.flush()
                return
            text = self.cleaner.text(text)
            if not self.exact:
                text = visible(text, layout=True)
            self.out.write(text)
        except BrokenPipeError:
            # Python flushes stdout again at exit; point it at /dev/null so that flush is quiet.
            self.closed_pipe = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError as error:
            if self.output is None:
                raise
            where = f"-o {self.output}"
            raise UsageProblem(f"{where}: cannot be written ({error.strerror})") from None


def _cleaner() -> Any:
    from agentloop_tools._secrets import Cleaner, secret_values

    return Cleaner(secret_values(os.environ))
