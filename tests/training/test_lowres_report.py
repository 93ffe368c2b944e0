"""`xlingua extend-report --lowres`: retrieval error on hand-made vectors (checked by hand), Bible
and non-Bible apart where a language has both; the command on a toy corpus with static-small;
a bad line refused naming file:line before any model loads."""
import json

import numpy as np
from typer.testing import CliRunner

from tests.gz_files import write_gz
from xlingua.cli import app
from xlingua.data.lowres import Pair
from xlingua.training.extend.lowres_report import format_lowres_report, lowres_report

E = np.eye(4)


class Table:
    """An encoder that looks each text's vector up."""

    def __init__(self, vectors):
        self.vectors = vectors

    def encode(self, texts, lang=None):
        return np.array([self.vectors[t] for t in texts])


def test_errors_by_hand():
    # ee: two Bible pairs and two news pairs. x1 leans towards y0, so x1 finds y0 (1 of 4 wrong
    # xx->pivot, 1 of the 2 Bible ones); every pivot sentence finds its own translation.
    # gd: two Bible pairs, each sentence nearest the other's translation: all wrong.
    ee = [Pair("ee", f"x{i}", f"y{i}", "en" if i < 2 else "fr", "bible" if i < 2 else "mafand") for i in range(4)]
    gd = [Pair("gd", f"g{i}", f"h{i}", "en", "bible") for i in range(2)]
    vectors = {"x0": E[0], "y0": E[0], "x1": E[0] + 0.1 * E[1], "y1": E[1], "x2": E[2], "y2": E[2],
               "x3": E[3], "y3": E[3], "g0": E[0], "h0": E[1], "g1": E[1], "h1": E[0]}
    report = lowres_report(Table(vectors), {"ee": ee, "gd": gd})
    assert report["langs"]["ee"] == {
        "pairs": 4, "xx->pivot": 25.0, "pivot->xx": 0.0, "pivots": ["en", "fr"],
        "domains": {"bible": {"pairs": 2, "xx->pivot": 50.0, "pivot->xx": 0.0},
                    "non-bible": {"pairs": 2, "xx->pivot": 0.0, "pivot->xx": 0.0}}}
    assert report["langs"]["gd"]["domains"] == {"bible": {"pairs": 2, "xx->pivot": 100.0, "pivot->xx": 100.0}}
    assert report["mean"] == {"langs": 2, "xx->pivot": 62.5, "pivot->xx": 50.0}
    assert report["domains"] == {"bible": {"langs": 2, "xx->pivot": 75.0, "pivot->xx": 50.0},
                                 "non-bible": {"langs": 1, "xx->pivot": 0.0, "pivot->xx": 0.0}}
    table = format_lowres_report(report).splitlines()
    assert table[2].split() == ["ee", "4", "en+fr", "25.0", "0.0"]
    assert table[3].split() == ["bible", "2", "50.0", "0.0"] and table[5].split()[0] == "gd"
    assert table[-3].split() == ["mean", "(2", "langs)", "62.5", "50.0"]


def toy_corpus(root):
    """ee (Bible en + news fr) and ttq (Bible), the news built from words static-small reads."""
    words = ["water", "house", "river", "market", "school", "doctor", "farmer", "rain", "road", "child"]
    news = [f"the {a} and the {b}" for a in words for b in words if a != b]
    write_gz(root / "mafand" / "ee-fr.tsv.gz", [f"{s}\tle {s}\n" for s in news])
    write_gz(root / "bible" / "ee-en.tsv.gz", [f"{s} in verse {i}\t{s} verse {i}\n" for i, s in enumerate(news[:60])])
    write_gz(root / "bible" / "ttq-en.tsv.gz", [f"{s} {i}\t{s} {i}\n" for i, s in enumerate(news[:50])])


def test_command_on_a_toy_corpus(tmp_path, monkeypatch):
    toy_corpus(tmp_path / "shared" / "corpora" / "lowres")
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    out = tmp_path / "report.json"
    result = CliRunner().invoke(app, ["extend-report", "--lowres", "-m", "static-small", "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())["report"]
    assert list(report["langs"]) == ["ee", "ttq"]
    ee = report["langs"]["ee"]
    assert ee["pairs"] == 15 and ee["pivots"] == ["en", "fr"]  # a tenth of 90 news + 60 verses
    assert {d: r["pairs"] for d, r in ee["domains"].items()} == {"bible": 6, "non-bible": 9}
    assert report["langs"]["ttq"]["pairs"] == 5 and report["mean"]["langs"] == 2
    assert all(0 <= r[k] <= 100 for r in report["langs"].values() for k in ("xx->pivot", "pivot->xx"))
    assert "mean (2 langs)" in result.output and "mean bible (2 langs)" in result.output


def test_bad_line_is_one_error_before_the_model_loads(tmp_path, monkeypatch):
    root = tmp_path / "shared" / "corpora" / "lowres"
    toy_corpus(root)
    write_gz(root / "bible" / "ttq-en.tsv.gz", ["a\tb\n", "a\tb\tc\n"])
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    result = CliRunner().invoke(app, ["extend-report", "--lowres", "-m", "no-such-model"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {root / 'bible' / 'ttq-en.tsv.gz'}:2: expected `non_pivot<TAB>pivot`, got 'a\\tb\\tc'"]
    toy_corpus(root)
    result = CliRunner().invoke(app, ["extend-report", "--lowres", "--lang", "xx", "-m", "no-such-model"])
    assert result.exit_code == 2 and "no low-resource corpus file for language(s) ['xx']" in result.output
