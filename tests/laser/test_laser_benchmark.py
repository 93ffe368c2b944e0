"""benchmarks/laser.py's bookkeeping: per-language Tatoeba accuracy as the mean of both
directions, the seen/unseen split read from a student's training log."""
import json

from tests.benchmark_script import load_benchmark


def test_tatoeba_row_means_both_directions_per_group():
    mod = load_benchmark("laser")
    result = {"tasks": {"tatoeba": {"rows": {
        "deu": {"margin xx-en": 90.0, "margin en-xx": 80.0},
        "afr": {"margin xx-en": 60.0, "margin en-xx": 70.0},
        "kaz": {"margin xx-en": 10.0, "margin en-xx": 30.0}}}}}
    row = mod.tatoeba_row(result, ["deu", "afr", "kaz", "jpn"], "margin",
                          {"seen": ["deu"], "unseen": ["afr", "kaz"]})
    assert row["deu"] == 85.0 and row["afr"] == 65.0 and row["kaz"] == 20.0 and "jpn" not in row
    assert row["seen:avg"] == 85.0 and row["unseen:avg"] == 42.5
    assert row["seen:n"] == 1 and row["unseen:n"] == 2


def test_training_languages_come_from_the_run_log(tmp_path):
    mod = load_benchmark("laser")
    (tmp_path / "train_log.json").write_text(json.dumps({"data": {"pairs_per_language": {"de": 5, "nl": 3}}}))

    class Student:
        path = tmp_path

    class Other:
        pass

    assert mod.training_languages(Student()) == {"de", "nl"}
    assert mod.training_languages(Other()) is None
