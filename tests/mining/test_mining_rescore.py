"""Two-stage mining: the first model's candidates over a margin threshold, re-scored by a second
model's margin over the candidates' re-embedded first-stage neighbours; cached and resumable."""
import gzip

import numpy as np
import pytest
from mining_toy import toy_corpus, write_lines

from xlingua.mining import MineConfig, mine
from xlingua.mining.rescore import plan_candidates, rescore_candidates
from xlingua.mining.toy import CharNgramEncoder


class Counting(CharNgramEncoder):
    def __init__(self, fail_after=None, **kw):
        super().__init__(**kw)
        self.seen = 0
        self.fail_after = fail_after

    def _encode_batch(self, texts, lang):
        if self.fail_after is not None and self.seen >= self.fail_after:
            raise KeyboardInterrupt("killed")
        self.seen += len(texts)
        return super()._encode_batch(texts, lang)


def _read(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


# 3 sources, 3 targets, k = 2: each row's two nearest (cosine, row), best first
FWD = (np.array([[0.9, 0.5], [0.6, 0.5], [0.8, 0.7]], np.float32), np.array([[0, 1], [1, 2], [2, 0]]))
BWD = (np.array([[0.9, 0.7], [0.6, 0.5], [0.8, 0.5]], np.float32), np.array([[0, 2], [1, 0], [2, 1]]))


def test_candidates_are_the_list_pairs_over_the_first_stage_margin():
    # statistics: src (0.7, 0.55, 0.75), tgt (0.8, 0.55, 0.65); ratio = cos / mean of the two
    plan = plan_candidates(FWD, BWD, k=2, margin="ratio", min_score=1.1)
    # (0,0): 0.9/0.75 = 1.2; (2,2): 0.8/0.7 = 1.143; (1,1): 0.6/0.55 = 1.091 < 1.1; the rest lower
    assert list(zip(plan["src"].tolist(), plan["tgt"].tolist())) == [(0, 0), (2, 2)]
    assert np.allclose(plan["score"], [0.9 / 0.75, 0.8 / 0.7])
    # each kept sentence with its first-stage neighbours: source 0's (0, 1), source 2's (2, 0);
    # target 0's sources (0, 2), target 2's (2, 1)
    assert plan["tgt_rows"].tolist() == [0, 1, 2] and plan["src_rows"].tolist() == [0, 1, 2]
    assert plan_candidates(FWD, BWD, 2, "ratio", 1.1, keep_at_most=1)["src"].tolist() == [0]
    assert len(plan_candidates(FWD, BWD, 2, "ratio", 9.0)["score"]) == 0


def test_second_score_is_the_strong_models_margin_among_the_re_embedded_rows():
    plan = plan_candidates(FWD, BWD, k=2, margin="ratio", min_score=1.1)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 8)).astype(np.float32)
    y = rng.normal(size=(3, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    s, a, b = rescore_candidates(plan, x, y, 3, 3, k=2, margin="ratio", mode="union")
    c = x @ y.T  # every row was re-embedded: the statistics are the top-2 means among all three
    stat_x = {i: np.sort(c[i])[-2:].mean() for i in (0, 2)}
    stat_y = {j: np.sort(c[:, j])[-2:].mean() for j in (0, 2)}
    want = {(i, i): c[i, i] / ((stat_x[i] + stat_y[i]) / 2) for i in (0, 2)}
    got = dict(zip(zip(a.tolist(), b.tolist()), s.tolist()))
    assert got.keys() == want.keys()
    assert all(np.isclose(got[p], want[p], atol=1e-6) for p in want)
    assert list(s) == sorted(s, reverse=True)


def _mine(tmp_path, first, second, **cfg):
    src, tgt, truth = toy_corpus()
    tmp_path.mkdir(parents=True, exist_ok=True)
    sp, tp = write_lines(tmp_path / "src.txt", src), write_lines(tmp_path / "tgt.txt", tgt)
    out = tmp_path / "pairs.tsv.gz"
    config = MineConfig("en", "en", shard_size=5, **cfg)
    summary = mine(sp, tp, out, config, tmp_path / "wd", encoder=first, rescore_encoder=second,
                   show_progress=False)
    return summary, _read(out), (src, tgt, truth)


def test_two_stages_find_the_truth_and_embed_only_the_plan(tmp_path):
    second = Counting(dim=256)
    summary, rows, (src, tgt, truth) = _mine(tmp_path, CharNgramEncoder(dim=32, n=1), second, candidate_threshold=0.0)
    r = summary["rescore"]
    assert second.seen == r["embedded_src"] + r["embedded_tgt"]
    top = {(src.index(row[1]), tgt.index(row[2])) for row in rows[: len(truth)]}
    assert top == truth
    again = _mine(tmp_path, CharNgramEncoder(dim=32, n=1), Counting(dim=256), candidate_threshold=0.0)
    assert again[0]["timings"]["rescore"]["cached"] and again[1] == rows


def test_a_higher_first_stage_threshold_re_embeds_fewer_sentences(tmp_path):
    low = _mine(tmp_path / "low", CharNgramEncoder(dim=32, n=1), Counting(dim=256), candidate_threshold=0.0)[0]["rescore"]
    high = _mine(tmp_path / "high", CharNgramEncoder(dim=32, n=1), Counting(dim=256), candidate_threshold=1.05)[0]["rescore"]
    assert high["candidates"] < low["candidates"]
    assert high["embedded_src"] + high["embedded_tgt"] < low["embedded_src"] + low["embedded_tgt"]


def test_a_killed_rescore_resumes_to_the_same_pairs(tmp_path, monkeypatch):
    monkeypatch.setattr("xlingua.mining.rescore.CHUNK", 4)
    whole = _mine(tmp_path / "whole", CharNgramEncoder(dim=32, n=1), Counting(dim=256), candidate_threshold=0.0)[1]
    with pytest.raises(KeyboardInterrupt):
        _mine(tmp_path / "cut", CharNgramEncoder(dim=32, n=1), Counting(fail_after=8, dim=256), candidate_threshold=0.0)
    chunks = list((tmp_path / "cut" / "wd" / "rescore").glob("*/src_*.npy"))
    assert chunks and not list((tmp_path / "cut" / "wd" / "rescore").glob("*/pairs.npz"))
    second = Counting(dim=256)
    summary, rows, _ = _mine(tmp_path / "cut", CharNgramEncoder(dim=32, n=1), second, candidate_threshold=0.0)
    assert rows == whole
    r = summary["rescore"]
    assert 0 < second.seen < r["embedded_src"] + r["embedded_tgt"]  # the finished chunks were kept


def test_two_stages_write_what_the_second_margin_accepts_by_default(tmp_path):
    from xlingua.mining.rescore import THRESHOLD

    summary, rows, _ = _mine(tmp_path, CharNgramEncoder(dim=32, n=1), Counting(dim=256), candidate_threshold=0.0)
    assert summary["threshold"] == THRESHOLD
    assert rows and all(float(r[0]) >= THRESHOLD for r in rows)
    assert summary["rescore"]["kept"] > len(rows)  # the mode chose more; the margin kept these


def test_keep_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="keep must be in"):
        MineConfig("en", "en", rescore="bundled", keep=1.5).validate()


def test_identified_as_checks_reliable_languages_only():
    from xlingua.data.langid import identified_as

    texts = ["Das ist ein ganz normaler deutscher Satz über das Wetter.",
             "This is an ordinary English sentence about the weather."]
    assert identified_as(texts, "de") == [True, False]
    assert identified_as(texts, "en") == [False, True]
    assert identified_as(texts, "xx-unknown") == [True, True]


def test_in_memory_two_stages_pick_what_the_pipeline_picks(tmp_path):
    from xlingua.mining.memory import two_stage_rows

    summary, rows, (src, tgt, truth) = _mine(tmp_path, CharNgramEncoder(dim=32, n=1), Counting(dim=256),
                                             candidate_threshold=0.0, lid=False, threshold=0.0)
    (s, a, b), plan = two_stage_rows(src, tgt, CharNgramEncoder(dim=32, n=1), Counting(dim=256), 0.0)
    assert [(src[i], tgt[j]) for i, j in zip(a, b)] == [(r[1], r[2]) for r in rows]
    # the pipeline stores re-embedded vectors in float16: scores agree to about 1e-4
    assert np.allclose(s, [float(r[0]) for r in rows], atol=1e-3)


@pytest.mark.parametrize("shard_size", [3, 7])
def test_two_stages_give_the_same_pairs_whatever_the_shard_size(tmp_path, shard_size):
    src, tgt, _ = toy_corpus()
    sp, tp = write_lines(tmp_path / "src.txt", src), write_lines(tmp_path / "tgt.txt", tgt)

    def run(size, name):
        out = tmp_path / f"{name}.tsv.gz"
        mine(sp, tp, out, MineConfig("en", "en", shard_size=size, candidate_threshold=0.0, threshold=0.0),
             tmp_path / f"wd_{name}", encoder=CharNgramEncoder(dim=32, n=1), rescore_encoder=CharNgramEncoder(dim=256),
             show_progress=False)
        return _read(out)

    assert run(shard_size, "sharded") == run(1000, "whole")
