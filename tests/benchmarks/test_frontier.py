"""benchmarks/frontier.py: the frontier file it reads, and the picture it draws."""
import json
from pathlib import Path

import pytest

from tests.benchmark_script import load_benchmark

frontier = load_benchmark("frontier")
ROOT = Path(__file__).resolve().parents[2]


def point(model, speed, run="r", **tatoeba):
    return {"model": model, "run": run, "sentences_per_s": speed, "tatoeba36": tatoeba or {"mean": 50.0},
            "quality": {"page": "docs/results.md", "command": "xlingua eval -m x tatoeba"}}


RUN = {"cpu": "a CPU", "sentences": "10 sentences", "page": "docs/results.md", "command": "xlingua bench embed"}


def write(tmp_path, points, runs=None):
    path = tmp_path / "frontier.json"
    path.write_text(json.dumps({"runs": runs or {"r": RUN}, "points": points}), encoding="utf-8")
    return path


def test_mean_of_both_directions_or_as_recorded():
    assert frontier.tatoeba_mean({"xx-en": 91.2, "en-xx": 91.0}) == pytest.approx(91.1)
    assert frontier.tatoeba_mean({"mean": 44.2}) == 44.2


def test_shipped_frontier_names_pages_that_exist():
    runs, points = frontier.load_frontier(frontier.DATA)
    pages = [r["page"] for r in runs.values()] + [p["quality"]["page"] for p in points]
    for page in pages:
        assert (ROOT / page.partition("#")[0]).is_file(), page


def rises_of(points):
    # 4 points of height per accuracy point, 100 points of width per decade of speed
    return {p["model"]: rise for rise, p in frontier.label_rises(points, pts_per_unit=4, pts_per_decade=100)}


def test_labels_apart_in_x_do_not_stack():
    a, b, c = point("a", 10, mean=91.0), point("b", 1000, mean=91.5), point("c", 100, mean=60.0)
    assert rises_of([a, b, c]) == {"c": 8, "b": 8, "a": 8}


def test_labels_of_one_row_over_the_same_x_stack_rightmost_lowest():
    # "a long label" runs 0.55 * 7 * 12 = 46 points right of x = 100, over b's label at x = 108
    a, b = point("a long label", 10, mean=91.0), point("b", 12, mean=91.5)
    # b at 91.5 * 4 + 8 = 374; a would sit at 91.0 * 4 + 8 = 372, within 11 of it: 374 + 11 - 364
    assert rises_of([a, b]) == {"b": 8, "a long label": 21}


def test_a_label_clears_the_row_below_it():
    # rows apart (1.5 > band 1) but labels 6 points apart at the lowest rise: the upper one moves up
    c, d = point("c", 100, mean=60.0), point("d", 100, mean=61.5)
    assert rises_of([c, d]) == {"c": 8, "d": 13}


def test_unknown_run_names_file_and_point(tmp_path):
    path = write(tmp_path, [point("m", 5.0, run="elsewhere")])
    with pytest.raises(frontier.FrontierError, match=r"frontier.json: point 0 \(m\): unknown run 'elsewhere'"):
        frontier.load_frontier(path)


def test_one_direction_alone_is_refused(tmp_path):
    path = write(tmp_path, [point("m", 5.0, **{"xx-en": 90.0})])
    with pytest.raises(frontier.FrontierError, match="needs 'mean' or both"):
        frontier.load_frontier(path)


def test_bad_file_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "frontier.json"
    path.write_text("{", encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["frontier.py", "--data", str(path), "--png", str(tmp_path / "f.png")])
    with pytest.raises(SystemExit) as exit_:
        frontier.main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}:") and "\n" not in err
    assert not (tmp_path / "f.png").exists()


def test_draws_a_png(tmp_path):
    png = tmp_path / "f.png"
    frontier.draw({"r": RUN}, [point("a", 10, mean=90.0), point("b", 2000, mean=60.0)], png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.png"]
