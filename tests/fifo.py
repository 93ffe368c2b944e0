"""Real FIFOs that give their data once, for tests of commands reading pipes.

A writer thread opens the FIFO without blocking (retrying while no reader has it open), writes
its data once, with a deadline on every wait, and closes it. After that, until the test ends,
it keeps opening and closing the FIFO, so a reader that opens it again gets end-of-file at once
instead of waiting forever for a writer: a command that reads a pipe twice gets no data the
second time and fails its test rather than hanging it. A writer past its deadline closes what it
holds (the reader sees a cut-off input) and records a TimeoutError; a reader that stops early
(at a bad line) is no error.
"""
from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
import time
from pathlib import Path

DEADLINE_S = 600.0  # generous: a loaded machine is slow (the first model load); a hang is what this guards against


class _Writer(threading.Thread):
    def __init__(self, items: list[tuple[Path, list[bytes]]]):
        super().__init__(daemon=True)
        self.items = items  # (fifo, chunks): chunks are written in turn over all fifos
        self.done = threading.Event()
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        deadline = time.monotonic() + DEADLINE_S
        fds: dict[Path, int] = {}
        try:
            for path, _ in self.items:
                fds[path] = _open_for_writing(path, deadline, self.stop)
            longest = max(len(chunks) for _, chunks in self.items)
            for k in range(longest):
                for path, chunks in self.items:
                    if k < len(chunks):
                        _write(fds[path], chunks[k], deadline)
        except BrokenPipeError:
            pass  # the reader stopped early, as a command does at a bad line
        except BaseException as exc:  # raised when the block ends
            self.error = exc
        finally:
            for fd in fds.values():
                os.close(fd)
            self.done.set()
        while not self.stop.wait(0.05):  # any later open of the fifo reads end-of-file
            for path, _ in self.items:
                with contextlib.suppress(OSError):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def _open_for_writing(path: Path, deadline: float, stop: threading.Event) -> int:
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(fd, False)
            return fd
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        if stop.is_set() or time.monotonic() > deadline:  # the test is over, or stuck
            raise TimeoutError(f"nobody opened {path} for reading")
        time.sleep(0.01)


def _write(fd: int, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        _, ready, _ = select.select([], [fd], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError("the reader stopped reading")
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            continue


@contextlib.contextmanager
def fifos(tmp_path: Path, *datas: bytes, chunk: int | None = None, names=None):
    """FIFOs under `tmp_path` fed `datas` once (see the module docstring); yields their paths.
    With `chunk`, one thread writes them all in turn, `chunk` bytes at a time, as `tee` would
    (a reader that copies one to its end before reading the next never gets there). Raises
    the writer's error, if any, when the block ends."""
    names = names or [f"fifo{i}" for i in range(len(datas))]
    paths = [tmp_path / n for n in names]
    for p in paths:
        os.mkfifo(p)
    if chunk:
        writers = [_Writer([(p, [d[i:i + chunk] for i in range(0, len(d), chunk)] or [b""])
                            for p, d in zip(paths, datas)])]
    else:
        writers = [_Writer([(p, [d])]) for p, d in zip(paths, datas)]
    for w in writers:
        w.start()
    try:
        yield paths
    finally:
        for w in writers:
            w.stop.set()
            w.join(timeout=DEADLINE_S)
    for w in writers:
        assert not w.is_alive(), "a FIFO writer did not finish"
        if w.error is not None:
            raise w.error
