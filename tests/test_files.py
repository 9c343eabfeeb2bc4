"""Safe output writing (ranklearn._files) on real symlinks, FIFOs, character devices and modes."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from ranklearn._files import same_file, write_output, write_outputs
from ranklearn import _files as F
from ranklearn.io import load_model
from ranklearn.models import LambdaMART


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_new_file_gets_the_umask_mode(tmp_path, umask_022):
    target = tmp_path / "new.txt"
    write_output(target, b"abc\n")
    assert target.read_bytes() == b"abc\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt"]  # no temporary file left


def test_new_file_follows_another_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_output(tmp_path / "f", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o640


def test_existing_file_keeps_its_mode_and_is_replaced_atomically(tmp_path, umask_022):
    target = tmp_path / "shared.model"
    target.write_bytes(b"old")
    target.chmod(0o664)
    inode = target.stat().st_ino
    write_output(target, b"new content")
    assert target.read_bytes() == b"new content"
    assert stat.S_IMODE(target.stat().st_mode) == 0o664
    assert target.stat().st_ino != inode  # a rename: readers of the old file kept it whole


def test_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.txt"
    real.write_bytes(b"old")
    real.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_output(link, b"new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new" and stat.S_IMODE(real.stat().st_mode) == 0o640


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    write_output(link, b"x")
    assert link.is_symlink() and (tmp_path / "target").read_bytes() == b"x"


def test_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "scores.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, b"1.5\n2.5\n")
    reader.join(timeout=10)
    assert received == [b"1.5\n2.5\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.fifo"]


def test_dev_null_stays_a_character_device():
    before = os.lstat("/dev/null")
    write_output("/dev/null", b"scores\n")
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino and after.st_mode == before.st_mode


def test_dash_is_standard_output(capfd):
    write_output("-", b"0.5\n")
    assert capfd.readouterr().out == "0.5\n"
    assert not Path("-").exists()


def test_several_files_are_all_written_or_none(tmp_path):
    data, query = tmp_path / "out.lgb", tmp_path / "out.lgb.query"
    query.mkdir()  # the second output cannot be written
    with pytest.raises(IsADirectoryError) as info:
        write_outputs({data: b"1 1:0.5\n", query: b"1\n"})
    assert info.value.filename == str(query)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.lgb.query"]
    data.write_bytes(b"old")
    with pytest.raises(IsADirectoryError):
        write_outputs({data: b"new", query: b"1\n"})
    assert data.read_bytes() == b"old"


def test_write_into_a_kernel_file_names_the_real_cause():
    # issue 16: this said "no such directory: /proc"
    with pytest.raises(OSError) as info:
        write_output("/proc/version", b"x")
    assert info.value.filename == "/proc/version"
    assert "no such directory" not in str(info.value)
    assert info.value.errno in (13, 5, 1)  # EACCES (users), EIO (root), EPERM


def test_new_file_where_none_can_be_created_says_so():
    with pytest.raises(FileNotFoundError) as info:
        write_output("/proc/ranklearn-test-output", b"x")
    assert info.value.filename == "/proc/ranklearn-test-output"
    assert "new files cannot be created in this folder: /proc" in info.value.strerror


def test_missing_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        write_output(tmp_path / "nowhere" / "f.txt", b"x")
    assert info.value.filename == str(tmp_path / "nowhere" / "f.txt")
    assert f"no such directory: {tmp_path / 'nowhere'}" in info.value.strerror


def test_same_file_sees_through_links_and_spellings(tmp_path):
    real = tmp_path / "a.txt"
    real.write_text("x")
    (tmp_path / "link").symlink_to(real)
    assert same_file(real, tmp_path / "link")
    assert same_file(real, f"{tmp_path}/../{tmp_path.name}/./a.txt")
    assert not same_file(real, tmp_path / "missing")


# --- model files written through a crash or an interrupt ---------------------------------------
@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_crash_during_write_keeps_the_previous_file(model_path, tmp_path, monkeypatch, where):
    target = tmp_path / "model.json"
    target.write_bytes(model_path.read_bytes())
    before = target.read_bytes()
    model = LambdaMART.load(model_path)
    model.trees_ = model.trees_[:1]  # a different model, so a half-written file would show

    class Crash(RuntimeError):
        pass

    def crash(*args, **kwargs):
        raise Crash(where)

    if where == "replace":
        monkeypatch.setattr(F.os, "replace", crash)
    elif where == "fsync":
        monkeypatch.setattr(F.os, "fsync", crash)
    else:
        real_fdopen = os.fdopen

        class HalfWriter:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

            def write(self, data):
                self.fh.write(data[: len(data) // 2])
                raise Crash("disk full")

            def __getattr__(self, name):
                return getattr(self.fh, name)

        monkeypatch.setattr(F.os, "fdopen", lambda fd, mode: HalfWriter(real_fdopen(fd, mode)))
    with pytest.raises(Crash):
        model.save(target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"], "a temporary file was left behind"
    assert len(load_model(target).trees_) == 4


def test_keyboard_interrupt_during_write_leaves_no_temp_file(model_path, tmp_path, monkeypatch):
    target = tmp_path / "model.json"

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(F.os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        LambdaMART.load(model_path).save(target)
    assert list(tmp_path.iterdir()) == []


def test_write_errors_name_the_target_not_the_temp_file(model_path, tmp_path):
    model = LambdaMART.load(model_path)
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        model.save(tmp_path / "d")
    assert info.value.filename == str(tmp_path / "d")
    with pytest.raises(FileNotFoundError) as info:
        model.save(tmp_path / "nowhere" / "m.json")
    assert info.value.filename == str(tmp_path / "nowhere" / "m.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


@pytest.mark.parametrize("name", ["new/", "existing.txt/"])
def test_a_name_ending_in_slash_is_a_folder_never_a_file(tmp_path, name):
    (tmp_path / "existing.txt").write_text("old")
    for attempt in (lambda: write_output(f"{tmp_path}/{name}", b"x"), lambda: F.check_writable(f"{tmp_path}/{name}")):
        with pytest.raises(NotADirectoryError, match="ends with /"):
            attempt()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.txt"]
    assert (tmp_path / "existing.txt").read_text() == "old"


def test_a_long_name_fits_with_its_temporary_file(tmp_path):
    target = tmp_path / ("a" * 250)  # the file system's limit is 255 bytes a name
    write_output(target, b"x")
    assert target.read_bytes() == b"x" and len(list(tmp_path.iterdir())) == 1


def test_a_write_protected_file_is_refused(tmp_path, monkeypatch):
    target = tmp_path / "kept.txt"
    target.write_text("old")
    real_access = os.access
    # root may write anything, so the test plays a user without write permission on this file
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == target else real_access(p, mode))
    for attempt in (lambda: write_output(target, b"new"), lambda: F.check_writable(target)):
        with pytest.raises(PermissionError, match="write-protected") as info:
            attempt()
        assert info.value.filename == str(target)
    assert target.read_text() == "old" and len(list(tmp_path.iterdir())) == 1


def test_check_writable_names_a_folder_where_no_file_can_be_made(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(F.tempfile, "TemporaryFile", refuse)
    with pytest.raises(PermissionError) as info:
        F.check_writable(tmp_path / "out.txt")
    assert info.value.filename == str(tmp_path / "out.txt")
    assert f"cannot write here (Permission denied: {tmp_path})" in info.value.strerror
    F.check_writable("-")  # standard output needs no folder
    with pytest.raises(FileNotFoundError, match="no such directory"):
        monkeypatch.undo()
        F.check_writable(tmp_path / "nowhere" / "out.txt")


def test_closed_standard_output_is_an_error_not_a_crash(monkeypatch):
    monkeypatch.setattr("sys.stdout", None)
    with pytest.raises(OSError, match="is closed") as info:
        write_output("-", b"x")
    assert info.value.filename == "standard output"


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "//dev/stdout", "LINK", "LOG"])
@pytest.mark.parametrize("redirect", [">", ">>"])
def test_dev_stdout_redirected_to_a_file_keeps_what_it_holds(tmp_path, name, redirect):
    """Opening /dev/stdout anew would truncate the file the shell redirected it to, and renaming
    over it (a symlink to /dev/stdout, or the log file itself, resolve to a regular file) would
    replace it: every name of standard output is written through fd 1."""
    import subprocess
    import sys

    out = tmp_path / "log.txt"
    out.write_text("EARLIER\n")
    (tmp_path / "link").symlink_to("/dev/stdout")
    name = {"LINK": str(tmp_path / "link"), "LOG": str(out)}.get(name, name)
    code = f"from ranklearn._files import writes_stdout, write_output; assert writes_stdout({name!r}); write_output({name!r}, b'x\\n')"
    shell = f"(echo HEADER; {sys.executable} -c \"{code}\") {redirect} {out}"
    subprocess.run(["sh", "-c", shell], check=True, timeout=120)
    assert out.read_text() == ("EARLIER\n" if redirect == ">>" else "") + "HEADER\nx\n"


def test_standard_output_without_a_byte_buffer(monkeypatch, capfd):
    """A notebook's or redirect_stdout's text stream: "-" writes text to it, /dev/stdout to fd 1."""
    import io
    import sys

    text = io.StringIO()
    monkeypatch.setattr(sys, "stdout", text)
    write_output("-", b"to the stream\n")
    assert text.getvalue() == "to the stream\n"
    write_output("/dev/stdout", b"to fd 1\n")
    assert capfd.readouterr().out == "to fd 1\n"


def test_a_name_too_long_is_named_as_given(tmp_path):
    name = tmp_path / ("a" * 300)
    for attempt in (lambda: write_output(name, b"x"), lambda: F.check_writable(name)):
        with pytest.raises(OSError) as info:
            attempt()
        assert info.value.filename == str(name) and "too long" in str(info.value)


def test_is_special_and_writes_stdout(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    assert F.is_special("-") and F.is_special("/dev/null") and F.is_special(tmp_path / "fifo")
    assert not F.is_special(tmp_path / "new.txt") and not F.is_special("/dev/shm/ranklearn-new-file")
    (tmp_path / "old.txt").write_text("x")
    assert not F.is_special(tmp_path / "old.txt")
    assert F.writes_stdout("-") and not F.writes_stdout(tmp_path / "old.txt")


def test_dev_stdout_with_standard_output_closed_says_so():
    import subprocess
    import sys

    code = "from ranklearn._files import write_output; write_output('/dev/stdout', b'x')"
    proc = subprocess.run(["sh", "-c", f'{sys.executable} -c "{code}" >&-'], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "file descriptor 1 is closed: '/dev/stdout'" in proc.stderr, proc.stderr


def test_reads_stdin_is_the_regular_file_standard_input_reads(tmp_path):
    # a terminal is stdin and stdout at once: writing it destroys no input (review of the check)
    data = tmp_path / "in.txt"
    data.write_text("1 qid:1 1:0.5\n")
    other = tmp_path / "other.txt"
    other.write_text("x")
    saved = os.dup(0)
    try:
        fd = os.open(data, os.O_RDONLY)
        os.dup2(fd, 0)
        os.close(fd)
        assert F.reads_stdin(data) and F.reads_stdin("/dev/stdin") and not F.reads_stdin(other)
        assert not F.reads_stdin("-")
        try:
            leader, follower = os.openpty()
        except OSError:
            return  # no pseudo-terminal here: the regular-file half is checked
        os.dup2(follower, 0)
        assert not F.reads_stdin(os.ttyname(follower))
        os.close(leader)
        os.close(follower)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
