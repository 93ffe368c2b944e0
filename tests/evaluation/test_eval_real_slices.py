"""Tasks on small slices of the real benchmark files with a hashed character n-gram encoder
(no model): German-English Tatoeba shares names and cognates, STSb pairs share words, so a
working pipeline scores far above chance; a misaligned one would sit at chance."""
import pytest

from xlingua.evaluation import runner
from xlingua.mining.toy import CharNgramEncoder


@pytest.fixture(scope="module")
def result(benchmarks):
    return runner.run(CharNgramEncoder(dim=256), ["tatoeba:deu,fra", "sts:stsb", "qe:ro-en"],
                      data_dir=str(benchmarks), limit=60, show_progress=False, echo=lambda *_: None)


def test_tatoeba_slice_far_above_chance(result):
    t = result["tasks"]["tatoeba:deu,fra"]
    assert [r["n"] for r in t["rows"].values()] == [60, 60]
    assert t["summary"]["acc cosine xx-en"] > 8.0      # chance is 1/60
    assert 0.0 <= t["summary"]["acc margin en-xx"] <= 100.0


def test_stsb_slice_correlates(result):
    t = result["tasks"]["sts:stsb"]
    assert t["rows"]["stsb.test"]["n"] == 60
    assert t["summary"]["stsb spearman"] > 20.0


def test_qe_slice(result):
    t = result["tasks"]["qe:ro-en"]
    assert list(t["rows"]) == ["ro-en"] and t["rows"]["ro-en"]["n"] == 60
    assert -1.0 <= t["summary"]["pearson"] <= 1.0
