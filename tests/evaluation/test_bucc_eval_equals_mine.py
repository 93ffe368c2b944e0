"""`xlingua eval bucc` and `xlingua mine --calibrate` on the same slice of the real BUCC
data with the bundled model: for the same k, margin and mode they select the same pairs, so
their F1 at the best threshold is the same. (Mining stores vectors as float16; on this slice
the rounding moves no pair across another.)"""
import numpy as np
import pytest

from xlingua.data.benchmarks import read_bucc
from xlingua.evaluation import runner
from xlingua.mining import MineConfig, mine
from xlingua.encoders.base import Encoder
from xlingua.similarity.select import MODES

pytestmark = pytest.mark.shared

LIMIT = 60


class Memo(Encoder):
    """The bundled model, each text embedded once: both commands see the very same vectors."""

    def __init__(self):
        from xlingua.encoders.loading import load_encoder

        self.inner = load_encoder("bundled:torch")
        self.name, self.dim, self.seen = "bundled-memo", self.inner.dim, {}

    def _encode_batch(self, texts, lang):
        todo = [t for t in texts if t not in self.seen]
        if todo:
            self.seen.update(zip(todo, self.inner.encode(todo, batch_size=len(todo))))
        return np.stack([self.seen[t] for t in texts])


@pytest.fixture(scope="module")
def enc():
    return Memo()


@pytest.fixture(scope="module")
def bucc_slice(benchmarks, tmp_path_factory):
    """The sentences and gold pairs `eval --limit` keeps, written as mining inputs."""
    data = read_bucc("zh", "dev", benchmarks)
    gold_part = data.gold[:LIMIT]
    src_ids = sorted({a for a, _ in gold_part} | set(sorted(data.src)[:LIMIT]))
    tgt_ids = sorted({b for _, b in gold_part} | set(sorted(data.tgt)[:LIMIT]))
    d = tmp_path_factory.mktemp("bucc")
    (d / "zh.tsv").write_text("".join(f"{i}\t{data.src[i]}\n" for i in src_ids), encoding="utf-8")
    (d / "en.tsv").write_text("".join(f"{i}\t{data.tgt[i]}\n" for i in tgt_ids), encoding="utf-8")
    kept = [(a, b) for a, b in data.gold if a in set(src_ids) and b in set(tgt_ids)]
    (d / "gold.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in kept), encoding="utf-8")
    return d, len(kept)


@pytest.mark.parametrize("k,margin", [(4, "ratio"), (2, "distance")])
def test_eval_bucc_and_mine_give_the_same_f1(benchmarks, bucc_slice, enc, tmp_path, k, margin):
    d, n_gold = bucc_slice
    res = runner.run(enc, ["bucc"], data_dir=str(benchmarks), limit=LIMIT, show_progress=False,
                     options=[f"k={k}", f"margin={margin}"], echo=lambda *_: None)
    rows = res["tasks"]["bucc"]["rows"]
    f1s = set()
    for mode in MODES:
        s = mine(d / "zh.tsv", d / "en.tsv", tmp_path / f"{mode}.tsv.gz",
                 MineConfig("zh", "en", margin=margin, k=k, mode=mode, check_lang=False),
                 workdir=tmp_path / "work", encoder=enc, calibrate=d / "gold.tsv", show_progress=False)
        row, cal = rows[f"zh-en {mode}"], s["calibration"]
        assert row["gold"] == cal["gold"] == n_gold
        assert row["f1 best"] == pytest.approx(100 * cal["f1"], abs=1e-9), mode
        assert row["p best"] == pytest.approx(100 * cal["precision"], abs=1e-9), mode
        assert row["threshold best"] == pytest.approx(cal["threshold"], rel=2e-3), mode
        f1s.add(round(row["f1 best"], 6))
    # a real comparison: the model finds most translations
    assert max(f1s) > 60.0
