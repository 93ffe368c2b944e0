"""The progress line a multi-item step prints: done/total, the rate, the time left."""
from xlingua.mining.runner import rate_line


def test_rate_line_gives_rate_and_time_left():
    assert rate_line(300_000, 1_000_000, 125.0, "rows") == "300,000/1,000,000 rows, 2,400.0 rows/s, about 4m52s left"


def test_rate_line_when_nothing_is_done_yet():
    assert rate_line(0, 10, 0.0, "items") == "0/10 items, 0.0 items/s, about 0m00s left"
