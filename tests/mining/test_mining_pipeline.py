import gzip

import numpy as np
import pytest
from mining_toy import toy_corpus, write_lines

from xlingua.mining import MineConfig, load_summary, mine
from xlingua.mining.toy import CharNgramEncoder
from xlingua.similarity import score_matrix
from xlingua.similarity.cosine import cosine_matrix, normalize_rows

ENC = CharNgramEncoder(dim=256)


def _read(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


@pytest.fixture
def toy(tmp_path):
    src, tgt, truth = toy_corpus()
    return (write_lines(tmp_path / "src.txt", src), write_lines(tmp_path / "tgt.txt", tgt),
            src, tgt, truth)


def _pairs(rows, src, tgt):
    return {(src.index(r[1]), tgt.index(r[2])) for r in rows}


@pytest.mark.parametrize("mode", ["forward", "backward", "intersect", "max", "union"])
def test_toy_corpus_known_answer(tmp_path, toy, mode):
    sp, tp, src, tgt, truth = toy
    out = tmp_path / "pairs.tsv.gz"
    summary = mine(sp, tp, out, MineConfig("en", "en", mode=mode, shard_size=5), tmp_path / "wd",
                   encoder=ENC, show_progress=False)
    rows = _read(out)
    scores = [float(r[0]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    top = _pairs(rows[:10], src, tgt)
    if mode in ("intersect", "max"):
        assert top == truth  # the 10 hidden pairs, ranked above everything else
    else:
        assert truth <= _pairs(rows, src, tgt)
    assert summary["written"] == len(rows)
    pairs = [(r[1], r[2]) for r in rows]
    assert len(set(pairs)) == len(pairs)  # no pair twice, also in union mode
    if mode == "forward":
        assert len(rows) == 12 and len({r[1] for r in rows}) == 12
    if mode == "backward":
        assert len(rows) == 16 and len({r[2] for r in rows}) == 16
    if mode in ("intersect", "max"):  # 1-1 alignments
        assert len({r[1] for r in rows}) == len({r[2] for r in rows}) == len(rows) <= 12
    if mode == "union":
        assert 16 <= len(rows) <= 28


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute", "csls", "inbatch"])
def test_scores_from_knn_equal_dense_similarity_functions(tmp_path, toy, margin):
    sp, tp, src, tgt, _ = toy
    out = tmp_path / "o.tsv.gz"
    # k = corpus size: the kNN candidates are every sentence, so dense = sharded result
    mine(sp, tp, out, MineConfig("en", "en", margin=margin, k=4, mode="forward", shard_size=7),
         tmp_path / "wd", encoder=ENC, show_progress=False)
    x = normalize_rows(ENC.encode(src).astype(np.float16))
    y = normalize_rows(ENC.encode(tgt).astype(np.float16))
    dense = score_matrix(x, y, margin, k=4, alpha=0.5)
    # forward mode keeps each source's best of its 4 nearest neighbours by cosine
    cos = cosine_matrix(x, y)
    nn = np.argsort(-cos, axis=1, kind="stable")[:, :4]
    best = {i: (dense[i, nn[i]].max(), nn[i][np.argmax(dense[i, nn[i]])]) for i in range(len(src))}
    for row in _read(out):
        i, j = src.index(row[1]), tgt.index(row[2])
        assert j == best[i][1]
        assert float(row[0]) == pytest.approx(best[i][0], abs=2e-5)


def test_threshold_and_summary(tmp_path, toy):
    sp, tp, *_ = toy
    out = tmp_path / "o.tsv.gz"
    s = mine(sp, tp, out, MineConfig("en", "en", threshold=1.0), tmp_path / "wd", encoder=ENC,
             show_progress=False)
    rows = _read(out)
    assert rows and all(float(r[0]) >= 1.0 for r in rows)
    saved = load_summary(out)
    assert saved["written"] == len(rows) == s["written"] and saved["threshold"] == 1.0
    assert saved["candidates"] >= len(rows)
    assert {"shard_src", "embed_src", "knn_fwd", "knn_bwd", "score", "select", "write"} <= set(saved["timings"])
    for stage in saved["timings"].values():  # CPU time too: the load-proof timing
        assert 0 <= stage["cpu_seconds"] and 0 <= stage["seconds"] and "cached" in stage
    assert saved["peak_rss_mb"] > 0 and saved["src"]["sentences"] == 12


def test_ids_are_kept_and_calibration_finds_the_f1_best_threshold(tmp_path, toy):
    _, _, src, tgt, truth = toy
    sp = write_lines(tmp_path / "s.tsv", src, [f"s{i}" for i in range(len(src))])
    tp = write_lines(tmp_path / "t.tsv", tgt, [f"t{j}" for j in range(len(tgt))])
    gold = tmp_path / "gold.tsv"
    gold.write_text("".join(f"s{i}\tt{j}\n" for i, j in sorted(truth)))
    out = tmp_path / "o.tsv.gz"
    s = mine(sp, tp, out, MineConfig("en", "en"), tmp_path / "wd", encoder=ENC, calibrate=gold,
             show_progress=False)
    c = s["calibration"]
    assert (c["precision"], c["recall"], c["f1"]) == (1.0, 1.0, 1.0)
    rows = _read(out)
    assert {(r[3], r[4]) for r in rows} == {(f"s{i}", f"t{j}") for i, j in truth}
    assert all(src[int(r[3][1:])] == r[1] for r in rows)


def test_approximate_index_reports_recall(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{n}" for n in range(300)]
    src = [" ".join(rng.choice(words, 6)) for _ in range(400)]
    tgt = [s + " ." for s in src[:200]] + [" ".join(rng.choice(words, 6)) for _ in range(200)]
    sp, tp = write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt)
    out = tmp_path / "o.tsv.gz"
    s = mine(sp, tp, out, MineConfig("en", "en", index="IVF8,Flat", nprobe=2, mode="forward",
                                     check_lang=False),
             tmp_path / "wd", encoder=CharNgramEncoder(dim=32), show_progress=False)
    r = s["index"]["fwd"]["recall"]
    assert s["settings"]["index"] == "IVF8,Flat" and r["queries"] == 400
    assert 0.0 < r["recall@1"] <= 1.0 and 0.0 < r["recall@4"] <= 1.0
    # nprobe is a search setting: a second run reuses the trained indexes, searches anew
    s2 = mine(sp, tp, out, MineConfig("en", "en", index="IVF8,Flat", nprobe=8, mode="forward",
                                      check_lang=False),
              tmp_path / "wd", encoder=CharNgramEncoder(dim=32), show_progress=False)
    assert s2["timings"]["index_tgt"]["cached"] and not s2["timings"]["knn_fwd"]["cached"]
    assert s2["index"]["fwd"]["recall"]["recall@1"] == 1.0  # all 8 lists probed = exact


def test_two_encoders_score_the_mean_of_their_cosines(tmp_path, toy):
    sp, tp, src, tgt, _ = toy
    a, b = CharNgramEncoder(dim=64, n=3), CharNgramEncoder(dim=32, n=2)
    out = tmp_path / "o.tsv.gz"
    s = mine(sp, tp, out, MineConfig("en", "en", margin="absolute", mode="forward"),
             tmp_path / "wd", encoder=[a, b], show_progress=False)
    assert s["settings"]["encoder"] == "char3gram-64,char2gram-32" and "combine_src" in s["timings"]
    unit = lambda e, t: normalize_rows(e.encode(t).astype(np.float16))  # noqa: E731
    mean_cos = (cosine_matrix(unit(a, src), unit(a, tgt)) + cosine_matrix(unit(b, src), unit(b, tgt))) / 2
    for row in _read(out):
        i, j = src.index(row[1]), tgt.index(row[2])
        assert float(row[0]) == pytest.approx(mean_cos[i].max(), abs=2e-3)  # float16 storage
        assert mean_cos[i, j] == pytest.approx(mean_cos[i].max(), abs=2e-3)


@pytest.mark.parametrize("show_progress", [False, True])
def test_show_progress_false_draws_nothing(tmp_path, toy, capfd, show_progress):
    sp, tp, *_ = toy
    mine(sp, tp, tmp_path / "pairs.tsv.gz", MineConfig("en", "en", shard_size=5), tmp_path / "wd",
         encoder=ENC, show_progress=show_progress)
    out, err = capfd.readouterr()
    if show_progress:
        assert "embed" in err + out  # the capture sees what a run draws
    else:
        assert out == "" and err == ""
