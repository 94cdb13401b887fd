"""Writing result files so that no reader ever sees a half-written or mixed set.

Two writers, used by every command and by the dashboard:

* :func:`atomic_file` writes one file under a temporary name beside it
  (``.NAME.<uuid>.tmp``) and renames it into place; any failure (an
  ``OSError``, polars' ``ComputeError`` on a full disk, an interrupt) removes
  the temporary file and leaves the old file as it was.
* :class:`ResultSet` writes a set of files (``phrases.parquet``,
  ``documents.parquet``, ``sites.parquet``, ``summary.json``) as one folder:
  the files are written into a fresh sibling folder ``.OUT.new-<uuid>``, the
  other result files already in ``OUT`` (another command's) are hard-linked
  beside them, and the new folder then replaces ``OUT`` in one atomic
  ``renameat2(RENAME_EXCHANGE)`` (or, where the kernel lacks it, two renames
  during which ``OUT`` is briefly absent: still never a mix).  A reader sees
  the old set or the new one.

``OUT`` must be new, empty, or a folder holding only Boilerscope result
files: a folder with other files (``--out .`` in a folder of snapshots) is
refused, so no file the user did not name is ever replaced.  Leftovers of a
writer killed half-way (``.OUT.new-*``, ``.OUT.old-*``, ``.NAME.*.tmp``) are
removed by the next writer of the same place.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import logging
import os
import shutil
import struct
import uuid

import numpy as np

from .errors import BoilerscopeError

log = logging.getLogger(__name__)

#: The files each command writes into a result folder (a command's new set
#: replaces all of its own, and keeps the other command's).
COMMAND_FILES = {
    "mine": frozenset({"phrases.parquet", "documents.parquet", "sites.parquet", "summary.json", "blocks.parquet",
                       "block_spans.parquet",
                       "templates.parquet", "template_occurrences.parquet", "spans.parquet"}),
    "dedup": frozenset({"clusters.parquet", "pairs.parquet", "dedup_summary.json"}),
}
#: Every file a result folder may hold.
RESULT_FILES = frozenset().union(*COMMAND_FILES.values())


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@contextlib.contextmanager
def atomic_file(path: str, what: str = "the output"):
    """Yield a temporary path beside ``path``; rename it to ``path`` when the
    block succeeds, remove it when anything fails."""
    path = os.path.abspath(path)
    folder, name = os.path.split(path)
    for old in _listdir(folder):
        if old.startswith(f".{name}.") and old.endswith(".tmp"):
            log.info("removing the leftover %s", old)
            _remove(os.path.join(folder, old))
    tmp = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BoilerscopeError:
        _remove(tmp)
        raise
    except Exception as exc:
        _remove(tmp)
        raise BoilerscopeError(f"cannot write {what} {path} ({_reason(exc)}); "
                               "free some space or pick another output") from None
    except BaseException:
        _remove(tmp)
        raise


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)
    except OSError:
        pass


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux renameat2); False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), a)


class ResultSet:
    """A set of result files replacing ``out`` as a whole (see module docstring).

    Use :meth:`prepare` to write the files into the hidden new folder (this may
    fail: nothing visible changes), then :meth:`publish` to swap it in, or
    :meth:`discard` to drop it.
    """

    def __init__(self, out: str):
        self.out = os.path.abspath(out)
        self.parent, self.base = os.path.split(self.out)
        self.new: str | None = None
        self._recover()
        self._check()

    def _recover(self) -> None:
        """Clean what an earlier writer killed half-way left here."""
        olds = []
        for name in _listdir(self.parent):
            if name.startswith(f".{self.base}.new-"):
                log.info("removing the leftover %s", name)
                _remove(os.path.join(self.parent, name))
            elif name.startswith(f".{self.base}.old-"):
                olds.append(os.path.join(self.parent, name))
        if olds and not os.path.exists(self.out):
            # killed between the two renames of the fallback: put the old set back
            try:
                os.rename(olds.pop(), self.out)
            except OSError:
                pass
        for old in olds:
            _remove(old)
        for name in _listdir(self.out):
            if name.startswith(".") and name.endswith(".tmp"):
                _remove(os.path.join(self.out, name))

    def _check(self) -> None:
        if os.path.exists(self.out) and not os.path.isdir(self.out):
            raise BoilerscopeError(f"{self.out} is a file, not a folder; give a folder for {{out}}", "out")
        foreign = sorted(n for n in _listdir(self.out) if n not in RESULT_FILES)
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise BoilerscopeError(
                f"{self.out} holds other files ({shown}); give a new or empty folder for {{out}} "
                "(it is replaced as a whole)", "out")
        try:
            os.makedirs(self.parent, exist_ok=True)
            probe = os.path.join(self.parent, f".{self.base}.new-probe-{uuid.uuid4().hex}")
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError as exc:
            raise BoilerscopeError(
                f"cannot write to {self.out} ({_reason(exc)}); pick another {{out}} folder", "out") from None

    def prepare(self, frames: dict, summary_name: str, summary: dict) -> None:
        """Write the Parquet frames and the JSON summary into the new folder."""
        self.new = os.path.join(self.parent, f".{self.base}.new-{uuid.uuid4().hex}")
        try:
            os.mkdir(self.new)
            for name, frame in frames.items():
                if callable(frame):  # a writer of its own (Spark's executors write a folder of parts)
                    frame(os.path.join(self.new, name))
                else:
                    frame.write_parquet(os.path.join(self.new, name), compression="zstd", statistics=True)
            self._write_json(summary_name, summary)
            mine = set(frames) | {summary_name}
            mine |= next((f for f in COMMAND_FILES.values() if mine <= f), frozenset())
            for name in _listdir(self.out):
                if name in RESULT_FILES and name not in mine:
                    src, dst = os.path.join(self.out, name), os.path.join(self.new, name)
                    if os.path.isdir(src):  # a folder of parts (the Spark engine's)
                        shutil.copytree(src, dst)
                        continue
                    try:
                        os.link(src, dst)
                    except OSError:
                        shutil.copy2(src, dst)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, Exception) and not isinstance(exc, BoilerscopeError):
                raise BoilerscopeError(f"cannot write results to {self.out} ({_reason(exc)}); "
                                       "free some space or pick another {out}", "out") from None
            raise

    def _write_json(self, name: str, summary: dict) -> None:
        with open(os.path.join(self.new, name), "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=2, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())

    def rewrite_summary(self, name: str, summary: dict) -> None:
        """Write the summary again in the prepared folder (figures known only
        once the frames are written); a failure drops the folder."""
        try:
            self._write_json(name, summary)
        except OSError as exc:
            self.discard()
            raise BoilerscopeError(f"cannot write results to {self.out} ({_reason(exc)}); "
                                   "free some space or pick another {out}", "out") from None

    def publish(self) -> None:
        """Swap the new folder in; the old set goes away."""
        assert self.new is not None
        try:
            if not os.path.exists(self.out):
                os.rename(self.new, self.out)
            elif _exchange(self.new, self.out):
                shutil.rmtree(self.new, ignore_errors=True)
            else:
                old = os.path.join(self.parent, f".{self.base}.old-{uuid.uuid4().hex}")
                os.rename(self.out, old)
                os.rename(self.new, self.out)
                shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:
            self.discard()
            raise BoilerscopeError(f"cannot write results to {self.out} ({_reason(exc)}); "
                                   "pick another {out}", "out") from None
        self.new = None

    @contextlib.contextmanager
    def staged(self):
        """The block that commits the run: if it fails, the prepared files go."""
        try:
            yield self
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        if self.new is not None:
            _remove(self.new)
            self.new = None


def write_result_set(out: str, frames: dict, summary_name: str, summary: dict) -> None:
    """Prepare and publish in one step (when nothing must happen in between)."""
    rs = ResultSet(out)
    rs.prepare(frames, summary_name, summary)
    rs.publish()


class NpyAppender:
    """A 1-D ``.npy`` file written in pieces, for arrays longer than memory.

    The file starts with a header sized for any length (``np.load`` reads
    it, memory-mapped or not); :meth:`append` writes each piece after the
    last, and :meth:`close` rewrites the header with the final length.  Until
    then the file is not a valid array: callers write it inside a temporary
    folder that is renamed into place only once every array is closed.
    """

    HEADER = 128  # bytes: a 1.0 header for any 1-D shape of a plain dtype fits

    def __init__(self, path: str, dtype):
        self.path = path
        self.dtype = np.dtype(dtype)
        self.length = 0
        self._fh = open(path, "wb")
        self._fh.write(self._header(0))

    def _header(self, n: int) -> bytes:
        # the .npy 1.0 format: magic, version, the dict's length, the dict
        # padded with spaces to a multiple of 64 bytes and ended by a newline
        text = "{'descr': %r, 'fortran_order': False, 'shape': (%d,), }" % (
            np.lib.format.dtype_to_descr(self.dtype), n)
        size = self.HEADER - 10
        if len(text) + 1 > size:  # pragma: no cover - a 1-D shape never needs more
            raise ValueError("npy header too long")
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", size) + (text.ljust(size - 1) + "\n").encode("latin1")

    def append(self, values) -> None:
        arr = np.ascontiguousarray(values, dtype=self.dtype)
        self._fh.write(memoryview(arr).cast("B"))
        self.length += arr.shape[0]

    def close(self) -> None:
        if self._fh.closed:
            return
        self._fh.seek(0)
        self._fh.write(self._header(self.length))
        self._fh.close()

    def discard(self) -> None:
        """Close without completing (the caller removes the file); a full
        disk may refuse the buffered bytes: that is ignored."""
        with contextlib.suppress(OSError):
            self._fh.close()
