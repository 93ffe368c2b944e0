"""Shared progress-bar pieces (rich)."""
from __future__ import annotations

import threading

from rich.progress import Progress, ProgressColumn
from rich.text import Text

# Seconds between progress lines when stderr is not a terminal (a log file of a background job).
LOG_INTERVAL = 30.0


class RateColumn(ProgressColumn):
    """Items per second, e.g. `812 sent/s`."""

    def __init__(self, unit: str = "it"):
        super().__init__()
        self.unit = unit

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text(f"- {self.unit}/s")
        return Text(f"{speed:,.0f} {self.unit}/s")


def progress_bar(label: str, total: int | None, *, completed: int = 0, rate: str | None = None,
                 extra: str | None = None, **fields):
    """The one progress bar of xlingua, started, on stderr: LABEL [bar] done/total [EXTRA]
    [RATE/s] time. `extra` is a rich format over the task (e.g. "loss {task.fields[loss]}",
    with `loss="-"` given as a field). Returns (progress, task id); call progress.stop() at the end."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn()]
    if extra:
        columns.append(TextColumn(extra))
    if rate:
        columns += [RateColumn(rate), TimeRemainingColumn()]
    else:
        columns.append(TimeElapsedColumn())
    console = Console(stderr=True)
    # The same test rich uses to decide whether it can redraw a bar in place.
    make = Progress if console.is_interactive or console.is_jupyter else _LogProgress
    progress = make(*columns, console=console)
    task = progress.add_task("", total=total, completed=completed, **fields)
    progress.start()
    return progress, task


class _LogProgress(Progress):
    """A bar for a log file: rich redraws a bar only on an interactive terminal (or Jupyter) and
    otherwise prints it once, at the end, so a background job's log would show nothing while it
    runs. This prints the bar as one line every LOG_INTERVAL seconds instead, and turns off rich's
    own refresh thread, which would redraw (unseen) ten times a second."""

    _ticker: threading.Thread | None = None

    def __init__(self, *columns, **kwargs):
        super().__init__(*columns, auto_refresh=False, **kwargs)
        self._done = threading.Event()

    def start(self) -> None:
        super().start()
        self._ticker = threading.Thread(target=self._tick, daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._done.wait(LOG_INTERVAL):
            with self._lock:
                table = self.make_tasks_table(self.tasks)
            self.console.print(table)

    def stop(self) -> None:
        self._done.set()
        if self._ticker:
            self._ticker.join()
        super().stop()
