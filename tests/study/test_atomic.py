"""The atomic writer: the target is the old file or the whole new one, never a part or a mix."""

import multiprocessing
import os
from pathlib import Path

import pytest

from cellopt.study.atomic import atomic_open, atomic_path, atomic_write, save_figure, temporary_path

#: Bytes each concurrent writer writes (more than any pipe or file buffer, so a shared
#: temporary file would interleave).
PAYLOAD_BYTES = 1 << 20


def leftovers(folder: Path) -> list[str]:
    """Hidden files in `folder` (temporary files and their side files)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_writes_text_and_binary_exactly(tmp_path: Path) -> None:
    text, data = tmp_path / "a.csv", tmp_path / "b.bin"
    assert atomic_write(text, lambda f: f.write("x,y\n1,ü\r\n")) == text
    atomic_write(data, lambda f: f.write(b"\x00\r\n\xff"), "wb")
    assert text.read_bytes() == "x,y\n1,ü\r\n".encode()  # UTF-8, newlines as written
    assert data.read_bytes() == b"\x00\r\n\xff"
    atomic_write(text, lambda f: f.write("new\n"))  # replaces
    assert text.read_text(encoding="utf-8") == "new\n" and leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), ValueError("bad row"),
                                   KeyboardInterrupt()], ids=["disk-full", "bug", "ctrl-c"])
def test_failure_mid_write_keeps_the_old_file_and_no_temporary(tmp_path: Path, error: BaseException) -> None:
    target = tmp_path / "table.csv"
    target.write_text("old\n", encoding="utf-8")
    seen = []

    def half(f):
        f.write("new, half")
        f.flush()
        seen.append(Path(f.name))
        assert seen[0].read_text(encoding="utf-8") == "new, half" and seen[0].parent == tmp_path
        raise error

    with pytest.raises(type(error)):
        atomic_write(target, half)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert not seen[0].exists() and leftovers(tmp_path) == []


def test_an_os_error_names_the_target_with_the_same_errno(tmp_path: Path) -> None:
    target = tmp_path / "table.csv"

    def full(f):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left") as exc:
        atomic_write(target, full)
    assert exc.value.errno == 28 and exc.value.filename == str(target)
    missing = tmp_path / "no" / "such" / "folder" / "t.csv"
    with pytest.raises(FileNotFoundError) as exc:  # the subclass is kept
        atomic_write(missing, lambda f: f.write("x"))
    assert exc.value.filename == str(missing)
    assert not target.exists() and leftovers(tmp_path) == []


def test_a_writer_library_error_without_errno_gets_the_target_and_a_cause(tmp_path: Path,
                                                                         monkeypatch) -> None:
    """rasterio's "Write failed" is an OSError with no errno and no file: it becomes a
    WriteError naming the target, with the chained messages and the cause they name (or,
    naming none, the cause the disk shows); nested atomic paths name the outer target."""
    import errno

    from rasterio.errors import RasterioIOError

    from cellopt.study.atomic import WriteError

    target = tmp_path / "map.tif"

    def failing(cause: str):
        try:
            raise RuntimeError(cause)
        except RuntimeError as err:
            raise RasterioIOError("Write failed. See previous exception for details.") from err

    with pytest.raises(WriteError) as exc, atomic_path(target, keep_suffix=True) as tmp:
        tmp.write_bytes(b"half")
        failing("_tiffWriteProc: No space left on device")
    assert (exc.value.errno, exc.value.filename) == (errno.ENOSPC, str(target))
    assert exc.value.strerror == ("No space left on device (GDAL: RasterioIOError: Write failed.; "
                                  "RuntimeError: _tiffWriteProc: No space left on device)")
    with pytest.raises(WriteError) as exc, atomic_path(target, keep_suffix=True) as outer, \
            atomic_path(outer, keep_suffix=True) as inner:
        inner.write_bytes(b"half")
        failing("TIFFAppendToStrip:Write error at scanline 36")
    assert exc.value.errno == errno.EIO and exc.value.filename == str(target)
    assert exc.value.strerror.startswith("could not write the file (GDAL: RasterioIOError")
    real = os.statvfs  # the same failure on a full disk
    monkeypatch.setattr(os, "statvfs", lambda p: os.statvfs_result((4096, 4096, 10, 0, 0,
                                                                    *real(p)[5:])))
    with pytest.raises(WriteError) as exc, atomic_path(target, keep_suffix=True) as tmp:
        tmp.write_bytes(b"half")
        failing("TIFFAppendToStrip:Write error at scanline 36")
    assert exc.value.errno == errno.ENOSPC
    assert exc.value.strerror.startswith("No space left on device: 0 bytes free on its disk (GDAL")
    assert not target.exists() and leftovers(tmp_path) == []
    with pytest.raises(OSError) as exc, atomic_path(target) as tmp:  # not a library: as it was
        raise OSError("no errno")
    assert exc.value.errno is None and str(exc.value) == "no errno"


def test_temporary_names_are_hidden_beside_the_target_and_unique(tmp_path: Path) -> None:
    target = tmp_path / "results.gpkg"
    names = {temporary_path(target) for _ in range(50)}
    assert len(names) == 50
    for name in names:
        assert name.parent == tmp_path and name.name.startswith(".results.gpkg.")
        assert name.name.endswith(".tmp") and f".{os.getpid()}." in name.name
    kept = temporary_path(target, keep_suffix=True)
    assert kept.name.startswith(".results.") and kept.name.endswith(".tmp.gpkg")
    assert not any(p.exists() for p in [*names, kept])


def test_atomic_open_and_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "meta.json"
    with atomic_open(target) as f:
        f.write("{}")
        assert not target.exists()  # nothing moves before the block ends
    assert target.read_text(encoding="utf-8") == "{}"
    for mode in ("a", "r", "w+", "x"):
        with pytest.raises(ValueError, match="mode"):
            with atomic_open(target, mode):
                pass
    assert target.read_text(encoding="utf-8") == "{}" and leftovers(tmp_path) == []


def test_atomic_path_for_writers_that_take_a_path(tmp_path: Path) -> None:
    target = tmp_path / "results.gpkg"
    target.write_bytes(b"old")
    with atomic_path(target, keep_suffix=True) as tmp:
        assert tmp.suffix == ".gpkg" and not tmp.exists()
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new" and leftovers(tmp_path) == []

    with pytest.raises(RuntimeError, match="driver failed"), atomic_path(target, keep_suffix=True) as tmp:
        tmp.write_bytes(b"half")
        Path(f"{tmp}-journal").write_bytes(b"journal")  # as SQLite leaves beside a database
        raise RuntimeError("driver failed")
    assert target.read_bytes() == b"new" and leftovers(tmp_path) == []

    with pytest.raises(FileNotFoundError) as exc, atomic_path(target):
        pass  # the writer wrote nothing: the move fails, naming the target
    assert exc.value.filename == str(target) and target.read_bytes() == b"new"


def test_save_figure_writes_a_png(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    try:
        path = save_figure(fig, tmp_path / "f.png", dpi=50)
    finally:
        plt.close(fig)
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and leftovers(tmp_path) == []


def _write_in_step(target: str, fill: bytes, barrier, names) -> None:
    """Write PAYLOAD_BYTES of `fill` to `target`, pausing halfway until every writer is halfway."""

    def write(f):
        half = PAYLOAD_BYTES // 2
        f.write(fill * half)
        f.flush()
        names.put(f.name)
        barrier.wait(timeout=120)  # every writer now has its temporary file open, half written
        f.write(fill * (PAYLOAD_BYTES - half))

    atomic_write(target, write, "wb")


@pytest.mark.slow
def test_concurrent_processes_each_write_a_whole_file(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    n = 3
    barrier, names = ctx.Barrier(n), ctx.Queue()
    target = tmp_path / "index.csv"
    fills = [bytes([ord("a") + i]) for i in range(n)]
    procs = [ctx.Process(target=_write_in_step, args=(str(target), fill, barrier, names)) for fill in fills]
    for p in procs:
        p.start()
    tmp_names = {names.get(timeout=300) for _ in range(n)}
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * n
    assert len(tmp_names) == n  # one temporary file each, all open at the same time
    data = target.read_bytes()
    assert data in {fill * PAYLOAD_BYTES for fill in fills}  # one writer's whole file, not a mix
    assert leftovers(tmp_path) == []
