"""Working-tree files, opened so that no symlink is ever followed.

A remote can commit a symlink where gitmem expects a folder or a card (``cards`` ->
``/home/you``); a plain ``open(root / "cards/x.md")`` would then write outside the
repo. Every access here walks the path one component at a time with
``O_NOFOLLOW | O_DIRECTORY`` from a descriptor of the repo's top level, and opens
the last component with ``O_NOFOLLOW``, so a symlink that appears between a check
and the write is refused by the kernel, not by a check that can be raced. A
rename never follows a symlink at its target, so replacing a file is safe too.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from gitmem.errors import UnsafePath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _refuse(path: str, what: str = "a symlink") -> UnsafePath:
    return UnsafePath(
        f"{path} is {what} in the working tree; gitmem never follows one where it keeps memory",
        hint=f"replace it with a real file or folder (git rm --cached {path!r}) and try again",
    )


def _parts(path: str) -> list[str]:
    parts = path.split("/")
    if not path or any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(f"not a plain relative path: {path!r}")
    return parts


@contextlib.contextmanager
def folder(root: Path, parts: list[str], *, create: bool) -> Iterator[int | None]:
    """A descriptor of ``root/parts...`` reached without following a symlink.

    Yields None when a folder is missing and ``create`` is false.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts):
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    yield None
                    return
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    where = "/".join(parts[: i + 1])
                    what = "a symlink" if os.path.islink(root / where) else "not a folder"
                    raise _refuse(where, what) from None
                raise
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def _check_leaf(fd: int, name: str, path: str) -> os.stat_result | None:
    """Refuse a symlink or anything but a file at ``name``; an empty folder is removed
    (a file may take the place of a folder a commit emptied, as in git)."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if _is_file(st.st_mode):
        return st
    if (st.st_mode & 0o170000) == 0o040000:
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=fd)
            return None
    raise _refuse(path, "a symlink" if _is_link(st.st_mode) else "not a regular file")


def _is_file(mode: int) -> bool:
    return (mode & 0o170000) == 0o100000


def _is_link(mode: int) -> bool:
    return (mode & 0o170000) == 0o120000


def read(root: Path, path: str) -> bytes | None:
    """The bytes of ``root/path``, None when it is missing; UnsafePath on a symlink."""
    *dirs, name = _parts(path)
    with folder(root, dirs, create=False) as fd:
        if fd is None:
            return None
        try:
            f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refuse(path) from None
            raise
        if not _is_file(os.fstat(f).st_mode):  # a folder opens too, and fdopen refuses it
            os.close(f)
            raise _refuse(path, "not a regular file")
        with os.fdopen(f, "rb") as fh:
            return fh.read()


def stat(root: Path, path: str) -> os.stat_result | None:
    """lstat of ``root/path`` through real folders only (None when missing)."""
    *dirs, name = _parts(path)
    with folder(root, dirs, create=False) as fd:
        if fd is None:
            return None
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None


def write(root: Path, path: str, data: bytes, *, executable: bool = False) -> os.stat_result:
    """Replace ``root/path`` with ``data`` (folders made as needed); the new file's stat.

    An executable file stays executable, as git keeps a file's mode across edits.

    The bytes go to a temporary file beside the target first, which a rename then puts
    in place: a reader sees the old file or the new one, never half of one. A killed
    writer can leave only that temporary file, named ``.<name>.gitmem-tmp``, which
    ``clean_temporaries`` removes.
    """
    *dirs, name = _parts(path)
    with folder(root, dirs, create=True) as fd:
        assert fd is not None
        old = _check_leaf(fd, name, path)
        executable = executable or bool(old and old.st_mode & 0o100)
        mode = 0o777 if executable else 0o666
        tmp = temporary_name(name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        f = os.open(tmp, flags, mode, dir_fd=fd)
        try:
            with os.fdopen(f, "wb") as fh:
                fh.write(data)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise
        return os.stat(name, dir_fd=fd, follow_symlinks=False)


def temporary_name(name: str) -> str:
    return f".{name}.gitmem-tmp"


def clean_temporaries(root: Path, path: str) -> None:
    """Remove a temporary file a killed ``write`` of ``path`` left behind."""
    *dirs, name = _parts(path)
    with folder(root, dirs, create=False) as fd:
        if fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary_name(name), dir_fd=fd)


def remove(root: Path, path: str) -> None:
    """Delete ``root/path`` and the folders it leaves empty, as git does."""
    *dirs, name = _parts(path)
    with folder(root, dirs, create=False) as fd:
        if fd is None:
            return
        _check_leaf(fd, name, path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fd)
    for depth in range(len(dirs), 0, -1):
        with folder(root, dirs[: depth - 1], create=False) as fd:
            if fd is None:
                return
            try:
                os.rmdir(dirs[depth - 1], dir_fd=fd)
            except OSError:
                return  # not empty, or gone
