"""benchmarks/arabic_normalise.py: each variant removes exactly its marks and leaves every other
character (Arabic letters, hamza forms, Latin) alone; the encoder cache encodes each distinct text
once; the table reads the mean of both directions."""
import numpy as np

from tests.benchmark_script import load_benchmark

N = load_benchmark("arabic_normalise")

# kasra, fatha, dammatan, sukun, shadda, tatweel, superscript alef; hamza on alef kept
TEXT = "كِتَابٌ مْمّ ـــ هٰذا أمل abc"


def test_each_variant_removes_its_marks_only():
    assert N.normaliser("none")(TEXT) == TEXT
    assert N.normaliser("harakat")(TEXT) == "كتاب مم ـــ هٰذا أمل abc"
    assert N.normaliser("tatweel")(TEXT) == "كِتَابٌ مْمّ  هٰذا أمل abc"
    assert N.normaliser("superscript alef")(TEXT) == "كِتَابٌ مْمّ ـــ هذا أمل abc"
    assert N.normaliser("all three")(TEXT) == "كتاب مم  هذا أمل abc"


class Counting:
    def __init__(self):
        self.seen = []

    def encode(self, texts):
        self.seen += texts
        return np.array([[len(t), 1.0] for t in texts])


def test_cache_encodes_each_text_once():
    inner = Counting()
    enc = N.CachedEncoder(inner)
    a = enc.encode(["x", "yy", "x"])
    b = enc.encode(["yy", "zzz"])
    assert inner.seen == ["x", "yy", "zzz"]
    assert a[:, 0].tolist() == [1, 2, 1] and b[:, 0].tolist() == [2, 3]


def test_table_is_the_mean_of_both_directions():
    row = {"pairs": 10, "changed": 3, "xx->en": 20.0, "en->xx": 10.0}
    results = {"m": {v: {l: dict(row) for l in N.LANGS} for v in N.VARIANTS}}
    line = [l for l in N.table(results).splitlines() if l.startswith("| ar |")][0]
    assert line == "| ar | 10 | 15.0 | 15.0 (3) | 15.0 (3) | 15.0 (3) | 15.0 (3) |"
