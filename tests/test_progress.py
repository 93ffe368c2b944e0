"""The progress bar on a log file: a line while the job runs, not only at the end."""
import time

import pytest
from rich.progress import Progress

from xlingua import progress as progress_mod
from xlingua.progress import _LogProgress, progress_bar


def test_bar_on_a_log_file_prints_lines_while_running(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "LOG_INTERVAL", 0.05)
    bar, task = progress_bar("embed toy", 10, rate="sent")
    bar.update(task, completed=3)
    deadline = time.monotonic() + 10
    seen = ""
    while "3/10" not in seen and time.monotonic() < deadline:
        time.sleep(0.05)
        seen += capsys.readouterr().err
    bar.update(task, completed=10)
    bar.stop()
    end = capsys.readouterr().err
    assert "embed toy" in seen and "3/10" in seen  # before stop
    assert "10/10" in end
    assert not bar._ticker.is_alive()
    assert bar.live._refresh_thread is None  # rich's own 10 Hz redraw is off in a log


@pytest.mark.parametrize("interactive, kind", [("1", Progress), ("0", _LogProgress)])
def test_a_bar_redraws_in_place_only_where_rich_can(monkeypatch, interactive, kind):
    # a terminal that cannot redraw in place (TERM=dumb, TTY_INTERACTIVE=0) gets the log lines
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("TTY_INTERACTIVE", interactive)
    bar, _ = progress_bar("x", 3)
    bar.stop()
    assert type(bar) is kind
