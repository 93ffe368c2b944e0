"""The size sweep on a toy general corpus: every size is trained, measured on the dev slice and
timed, the report and picture are written, a rerun measures nothing again, and dev English
sentences never reach training."""
import gzip
import json

import numpy as np
import pytest

from tests.laser.test_laser_distill import WORDS, ToyTeacher
from xlingua.data.general import DEV_SENTENCES, dev_english
from xlingua.bench.laser_sweep import parse_sizes, run_sweep
from xlingua.laser.trainer import LaserTrainConfig


@pytest.fixture
def toy_general(tmp_path, monkeypatch):
    """ntrex de-en and fr-en over the same 300 English sentences (the dev slice takes 200 of them)."""
    rng = np.random.default_rng(3)
    english = set()
    while len(english) < 300:
        english.add(tuple(sorted(rng.integers(0, 8, rng.integers(2, 6)).tolist())))  # distinct bags of words
    root = tmp_path / "shared" / "corpora" / "general" / "ntrex"
    root.mkdir(parents=True)
    for lang in ("de", "fr"):
        with gzip.open(root / f"{lang}-en.tsv.gz", "wt", encoding="utf-8") as f:
            for idx in sorted(english):
                f.write(" ".join(WORDS[lang][i] for i in idx) + "\t" + " ".join(WORDS["en"][i] for i in idx) + "\n")
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    return tmp_path / "shared"


def test_parse_sizes():
    assert parse_sizes("1x192, 3x64") == [(1, 192), (3, 64)]
    with pytest.raises(ValueError, match="not LAYERSxUNITS"):
        parse_sizes("1x")


def test_sweep_trains_measures_and_resumes(tmp_path, toy_general):
    teacher = ToyTeacher()
    base = LaserTrainConfig(objective="distill", langs=[], general=True, multi30k=False, embed_dim=8,
                            dropout=0.0, lr=1e-2, batch_size=16, temperature=1.0, max_steps=4,
                            checkpoint_every=1000, log_every=2, dev_langs=["de", "fr"])
    kw = dict(teacher_encoder=teacher, teacher_cache=tmp_path / "cache", show_progress=False, echo=lambda *_: None)
    report = run_sweep(base, tmp_path / "sweep", [(1, 6), (2, 4)], [30], minutes=5.0, **kw)
    out = tmp_path / "sweep"
    names = [r["name"] for r in report["rows"]]
    assert names == ["L1x6-v30", "L2x4-v30"]
    # training saw only the English sentences outside the dev slice
    log = json.loads((out / "L1x6-v30" / "train_log.json").read_text())
    assert log["data"]["english_sentences"] == 300 - DEV_SENTENCES
    assert len(dev_english()) == DEV_SENTENCES
    # both runs share one vocabulary; the 2 x 4 student is projected to the teacher's 12 dims
    assert (out / "L1x6-v30" / "spm.model").read_bytes() == (out / "L2x4-v30" / "spm.model").read_bytes()
    assert [r["dim"] for r in report["rows"]] == [12, 12]
    for r in report["rows"]:
        assert r["steps"] == 4 and 0 <= r["accuracy"] <= 100 and r["per_cpu_second"] > 0
        assert r["sentences"] == 2 * DEV_SENTENCES + DEV_SENTENCES  # de, fr and English dev sides
    assert report["teacher"]["accuracy"] > 90  # exact translations; only reordered bags of words tie
    for name in ("sweep.json", "sweep.md", "sweep.png"):
        assert (out / name).stat().st_size > 0
    assert "| L2x4-v30 |" in (out / "sweep.md").read_text()
    calls = teacher.calls
    again = run_sweep(base, out, [(1, 6), (2, 4)], [30], minutes=5.0, **kw)
    assert again["rows"] == report["rows"] and teacher.calls == calls


def test_parse_settings_types_and_errors():
    from xlingua.laser.config import parse_settings

    got = parse_settings(["embed_dim=128", "exclude-langs=af, eu", "general=false", "lr=0.01", "teacher=use"])
    assert got == {"embed_dim": 128, "exclude_langs": ["af", "eu"], "general": False, "lr": 0.01, "teacher": "use"}
    assert LaserTrainConfig.distill(**got).langs[:2] == ["am", "ar"]
    with pytest.raises(ValueError, match="not NAME=VALUE"):
        parse_settings(["width=3"])
    with pytest.raises(ValueError, match="expected a int"):
        parse_settings(["embed_dim=wide"])


def test_student_dev_is_an_evaluator_of_retrieval_and_teacher_cosine(tmp_path, toy_general):
    from xlingua.laser.distill import StudentDev, dev_scores
    from xlingua.training.evaluators import dev_accuracy, general_dev_pairs

    teacher = ToyTeacher()
    dev = StudentDev("toy", ["de", "fr"], teacher_encoder=teacher, cache_dir=tmp_path / "cache")
    assert dev.main_score == "accuracy" and dev.greater_is_better
    report = dev.scores(teacher)  # the teacher as its own student: cosine 1 to its targets
    assert report == dev_scores(teacher, "toy", ["de", "fr"], teacher_encoder=teacher, cache_dir=tmp_path / "cache")
    xs, ys = general_dev_pairs(["de"])["de"]
    assert report["languages"]["de"] == {"n": len(xs), "accuracy": dev_accuracy(teacher.encode(xs), teacher.encode(ys)),
                                         "teacher_cosine": pytest.approx(1.0)}
    flat = dev(teacher)
    assert flat["accuracy"] == report["accuracy"] and flat["accuracy fr"] == report["languages"]["fr"]["accuracy"]


def test_eval_every_keeps_the_dev_best_student_and_leaves_training_as_it_was(tmp_path, toy_general):
    from xlingua import load_encoder
    from xlingua.laser.distill import StudentDev
    from xlingua.laser.trainer import train_laser

    teacher = ToyTeacher()
    cfg = dict(objective="distill", langs=[], general=True, multi30k=False, vocab_size=30, embed_dim=8, hidden=6,
               dropout=0.1, lr=1e-2, batch_size=16, temperature=1.0, max_steps=6, checkpoint_every=1000,
               log_every=2, dev_langs=["de", "fr"])
    kw = dict(teacher_encoder=teacher, teacher_cache=tmp_path / "cache", show_progress=False)
    plain = train_laser(LaserTrainConfig(**cfg), tmp_path / "plain", **kw)
    log = train_laser(LaserTrainConfig(**cfg, eval_every=2), tmp_path / "dev", **kw)
    assert log["dev"] == plain["dev"]  # evaluating did not change what was trained
    records = [json.loads(l) for l in (tmp_path / "dev" / "log.jsonl").read_text().splitlines()]
    curve = {r["step"]: r["eval"]["accuracy"] for r in records if "eval" in r}
    assert sorted(curve) == [0, 2, 4, 6]
    best = max(curve, key=lambda s: (curve[s], -s))
    assert log["best"] == {"step": best, "accuracy": curve[best], "encoder": "encoder_best.pt"}
    dev = StudentDev("toy", ["de", "fr"], teacher_encoder=teacher, cache_dir=tmp_path / "cache")
    kept = load_encoder(f"laser:{tmp_path / 'dev'}/encoder_best.pt")
    assert dev(kept)["accuracy"] == pytest.approx(curve[best])
    with pytest.raises(ValueError, match="eval_every scores a distilled student"):
        LaserTrainConfig(eval_every=2)
