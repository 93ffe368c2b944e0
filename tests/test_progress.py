"""The progress bar on a log file: a line while the job runs, not only at the end."""
import time

from xlingua import progress as progress_mod
from xlingua.progress import progress_bar


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
