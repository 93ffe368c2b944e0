"""ov-int8's calibration texts: the project's own writing, in every language the engines are
measured on, and none of them a sentence of the l10n files (train or dev) the engines are measured
or any student is trained on."""
import json
from collections import Counter
from importlib import resources

from xlingua.data.examples import read_pairs
from xlingua.encoders.openvino import CALIBRATION, calibration_texts


def _shipped() -> dict:
    return json.loads(resources.files("xlingua.data").joinpath(CALIBRATION).read_text(encoding="utf-8"))


def test_the_sample_has_eight_texts_in_each_l10n_language_and_english_beside_them(corpora):
    shipped = _shipped()
    # every language with l10n dev pairs (the Swahili files are empty)
    langs = {f.name.split("-")[0] for f in corpora.glob("*-en.dev.tsv.gz") if read_pairs(f, limit=1)}
    counts = Counter(shipped["langs"])
    assert len(shipped["langs"]) == len(shipped["texts"]) == len(calibration_texts())
    assert set(counts) == langs | {"en"} and len(langs) == 28
    assert {counts[lang] for lang in langs} == {8} and counts["en"] == 3 * len(langs)
    assert len(set(shipped["texts"])) == len(shipped["texts"])
    assert "Apache-2.0" in shipped["source"]


def test_no_text_is_copied_from_the_l10n_files(corpora):
    texts = {t.strip() for t in calibration_texts()}
    found = {s.strip() for f in sorted(corpora.glob("*-en.*.tsv.gz")) for pair in read_pairs(f)
             for s in pair if s.strip() in texts}
    assert not found
