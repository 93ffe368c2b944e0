"""A tiny BiLSTM student distilled from a tiny teacher on a toy parallel corpus: the loss falls,
its vectors move towards the teacher's, resuming is exact, and the run loads as laser:DIR."""
import gzip

import numpy as np
import pytest
import torch

from xlingua import load_encoder
from xlingua.encoders.base import Encoder
from xlingua.laser.distill import center_targets, encode_pairs, pad_both, read_distill_pairs
from xlingua.laser.trainer import LaserTrainConfig, train_laser
from xlingua.encoders.laser_vocab import EOS, PAD

WORDS = {"en": ["one", "two", "three", "red", "blue", "cat", "dog", "house"],
         "de": ["eins", "zwei", "drei", "rot", "blau", "Katze", "Hund", "Haus"],
         "fr": ["un", "deux", "trois", "rouge", "bleu", "chat", "chien", "maison"]}


class ToyTeacher(Encoder):
    """Bag of words: each word a fixed random 12-d vector shared by its translations, a sentence their sum."""
    name = "toy-teacher"
    dim = 12
    normalized = False

    def __init__(self):
        rng = np.random.default_rng(7)
        vectors = rng.standard_normal((8, self.dim))
        self.table = {w: vectors[i] for words in WORDS.values() for i, w in enumerate(words)}
        self.calls = 0

    def _encode_batch(self, texts, lang):
        self.calls += len(texts)
        return np.stack([sum((self.table[w] for w in t.split()), np.zeros(self.dim)) for t in texts])

    def fingerprint(self):
        return "toy-teacher-v1"


def toy_lines(lang, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        idx = rng.integers(0, 8, rng.integers(1, 4))
        out.append((" ".join(WORDS[lang][i] for i in idx), " ".join(WORDS["en"][i] for i in idx)))
    return out


@pytest.fixture
def toy_shared(tmp_path, monkeypatch):
    root = tmp_path / "shared" / "corpora" / "l10n"
    root.mkdir(parents=True)
    for seed, lang in enumerate(("de", "fr")):
        with gzip.open(root / f"{lang}-en.train.tsv.gz", "wt", encoding="utf-8") as f:
            f.write("".join(f"{x}\t{e}\n" for x, e in toy_lines(lang, 150, seed)))
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    return tmp_path / "shared"


def _cfg(**kw):
    base = dict(objective="distill", langs=["de", "fr"], l10n_pairs=0, general=False, multi30k=False,
                vocab_size=40, embed_dim=16, hidden=6, dropout=0.0, lr=1e-2, batch_size=32, temperature=1.0,
                max_steps=120, checkpoint_every=1000, log_every=10)
    base.update(kw)
    return LaserTrainConfig(**base)


def teacher_cosine(enc, teacher, pairs):
    s = enc.encode([p[0] for p in pairs])
    t = teacher.encode([p[1] for p in pairs])
    s /= np.linalg.norm(s, axis=1, keepdims=True)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    return float((s * t).sum(1).mean())


def test_student_moves_towards_teacher(tmp_path, toy_shared):
    teacher, judge = ToyTeacher(), ToyTeacher()
    out = tmp_path / "run"
    kw = dict(show_progress=False, teacher_encoder=teacher, teacher_cache=tmp_path / "cache")
    train_laser(_cfg(max_steps=0), out, **kw)
    held_out = toy_lines("de", 60, seed=99) + toy_lines("fr", 60, seed=98)
    before = teacher_cosine(load_encoder(f"laser:{out}"), judge, held_out)
    log = train_laser(_cfg(), out, **kw)
    after = teacher_cosine(load_encoder(f"laser:{out}"), judge, held_out)
    hist = log["history"]
    assert log["steps"] == 120 and hist[-1]["loss"] < 0.5 * hist[0]["loss"]
    assert after > before + 0.3 and after > 0.7
    # The teacher saw each distinct English sentence once; the second run read them from the cache.
    english = {e for lang in ("de", "fr") for _, e in toy_lines(lang, 150, ["de", "fr"].index(lang))}
    assert log["data"]["english_sentences"] == len(english) and teacher.calls == len(english)
    assert log["teacher"] == {"spec": "e5-small", "dim": 12, "fingerprint": "toy-teacher-v1", "centered": False}
    # 2 x 6 BiLSTM states = the teacher's 12 dims: no projection
    assert load_encoder(f"laser:{out}").config.proj_dim == 0


def test_wider_student_gets_a_projection_and_resumes_exactly(tmp_path, toy_shared):
    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    full = train_laser(_cfg(hidden=10, dropout=0.2, max_steps=8), tmp_path / "a", **kw)
    train_laser(_cfg(hidden=10, dropout=0.2, max_steps=4), tmp_path / "b", **kw)
    resumed = train_laser(_cfg(hidden=10, dropout=0.2, max_steps=8), tmp_path / "b", **kw)
    assert full["steps"] == resumed["steps"] == 8
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["model"]
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["model"]
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-6)
    enc = load_encoder(f"laser:{tmp_path / 'a'}")
    assert enc.config.proj_dim == 12 and enc.dim == 12 and enc.encode(["zwei Katze"]).shape == (1, 12)


def test_pairs_pad_both_and_exclusion(tmp_path, toy_shared):
    pairs = read_distill_pairs(False, [], ["de", "fr"], 0, False, [], exclude_langs=["fr"])
    assert len(pairs) == 150 and {p[2] for p in pairs} == {"de"}
    tokens, lengths = pad_both([np.array([5, 6, 7], dtype=np.int32), []], [[8], np.array([9, 10])])
    # rows 0-1 the xx side, rows 2-3 English; an empty side becomes a lone EOS
    assert tokens.tolist() == [[5, 6, 7], [EOS, PAD, PAD], [8, PAD, PAD], [9, 10, PAD]]
    assert lengths.tolist() == [3, 1, 1, 2]

    class Pieces:  # one piece per character
        def encode(self, texts):
            return [[ord(c) for c in t] for t in texts]

    kept, dropped = encode_pairs(Pieces(), [("abc", "ab", "de"), ("abcdef", "a", "de"), ("", "a", "de"),
                                            ("ba", "ab", "fr")], 4, chunk=2)
    assert dropped == 2 and [(a.tolist(), b.tolist(), e, l) for a, b, e, l in kept] == [
        ([97, 98, 99], [97, 98], "ab", "de"), ([98, 97], [97, 98], "ab", "fr")]
    assert kept[0][1] is kept[1][1]  # one array per distinct English sentence
    kept, dropped = encode_pairs(Pieces(), [("abcdef", "a", "de"), ("x", "abcdefg", "fr"), ("", "a", "de")], 4,
                                 truncate=True)
    assert dropped == 1 and [(a.tolist(), b.tolist()) for a, b, _, _ in kept] == [
        ([97, 98, 99, 100], [97]), ([120], [97, 98, 99, 100])]


def test_unknown_objective_and_bad_settings_are_refused_up_front():
    with pytest.raises(ValueError, match="objective must be one of translation, distill"):
        LaserTrainConfig(objective="mlm")
    with pytest.raises(ValueError, match="metric must be mse or cosine"):
        LaserTrainConfig(objective="distill", metric="l1")
    with pytest.raises(ValueError, match="temperature must be positive"):
        LaserTrainConfig(objective="distill", temperature=0)


def test_train_command_refuses_unknown_objective(tmp_path):
    from typer.testing import CliRunner

    from xlingua.cli import app

    res = CliRunner().invoke(app, ["laser", "train", "--out", str(tmp_path / "r"), "--objective", "mlm"])
    assert res.exit_code == 2 and "objective must be one of translation, distill" in res.output
    assert not (tmp_path / "r").exists()


def test_centred_targets_hand_case():
    # two unit vectors at cosine 0.6; each minus their mean, renormalized
    t = torch.tensor([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0]])
    centred, mean = center_targets(t)
    torch.testing.assert_close(mean, torch.tensor([0.8, 0.4, 0.0]))
    # (0.2, -0.4, 0) / sqrt(0.2) and (-0.2, 0.4, 0) / sqrt(0.2): now opposite (cosine -1, was 0.6)
    r = 0.2 ** 0.5
    torch.testing.assert_close(centred, torch.tensor([[0.2 / r, -0.4 / r, 0.0], [-0.2 / r, 0.4 / r, 0.0]]))


def test_centred_student_learns(tmp_path, toy_shared):
    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    log = train_laser(_cfg(center_teacher=True), tmp_path / "run", **kw)
    hist = log["history"]
    assert log["teacher"]["centered"] is True and hist[-1]["loss"] < 0.5 * hist[0]["loss"]


def test_checkpoint_without_a_later_setting_resumes_with_its_default(tmp_path, toy_shared):
    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    train_laser(_cfg(max_steps=4), tmp_path / "run", **kw)
    path = tmp_path / "run" / "checkpoint.pt"
    saved = torch.load(path, weights_only=False)
    del saved["config"]["center_teacher"]  # as written before the setting existed
    torch.save(saved, path)
    assert train_laser(_cfg(max_steps=6), tmp_path / "run", **kw)["steps"] == 6
    with pytest.raises(Exception, match="center_teacher: False -> True"):
        train_laser(_cfg(max_steps=8, center_teacher=True), tmp_path / "run", **kw)


def test_checkpoint_from_before_truncation_keeps_dropping_long_pairs(tmp_path, toy_shared):
    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    train_laser(_cfg(max_steps=4, max_len=6), tmp_path / "run", **kw)
    path = tmp_path / "run" / "checkpoint.pt"
    saved = torch.load(path, weights_only=False)
    del saved["config"]["truncate"]  # as written when long pairs were dropped
    torch.save(saved, path)
    log = train_laser(_cfg(max_steps=6, max_len=6), tmp_path / "run", **kw)
    fresh = train_laser(_cfg(max_steps=2, max_len=6), tmp_path / "new", **kw)
    assert log["steps"] == 6 and log["train_config"]["truncate"] is False
    assert fresh["train_config"]["truncate"] is True
    assert log["dropped_over_max_len"] > fresh["dropped_over_max_len"] == 0
