"""benchmarks/non_bible_dev.py: each language's non-Bible sets pooled by pairs, Bible-only
languages left out, the mean's fall from A to B; a file that is not a report exits 2 naming it."""
import json

from tests.benchmark_script import load_benchmark

non_bible_dev = load_benchmark("non_bible_dev")


def low(news):
    """A low-resource report: ee with 100 news pairs at `news` and 300 Bible pairs, dik Bible only."""
    return {"langs": {
        "ee": {"pairs": 400, "xx->pivot": 0, "pivot->xx": 0, "domains": {
            "bible": {"pairs": 300, "xx->pivot": 50.0, "pivot->xx": 50.0},
            "non-bible": {"pairs": 100, "xx->pivot": news, "pivot->xx": news}}},
        "dik": {"pairs": 500, "xx->pivot": 70, "pivot->xx": 70, "domains": {
            "bible": {"pairs": 500, "xx->pivot": 70.0, "pivot->xx": 70.0}}}}}


def gen(ntrex_out, ntrex_in):
    return {"ee": {"pairs": 300, "xx->en": ntrex_out, "en->xx": ntrex_in}}


def test_pooled_by_pairs_without_the_bible():
    # (100 * 20 + 300 * 8) / 400 = 11; the Bible pairs and the Bible-only language count nowhere
    assert non_bible_dev.figures(low(20.0), gen(6.0, 10.0)) == {"ee": 11.0}


def test_the_command_prints_the_fall_and_refuses_a_file_that_is_not_a_report(tmp_path, capsys):
    paths = []
    for i, report in enumerate((low(20.0), gen(6.0, 10.0), low(12.0), gen(6.0, 10.0))):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps({"model": "m", "report": report}), encoding="utf-8")
    assert non_bible_dev.main([str(p) for p in paths]) == 0
    out = capsys.readouterr().out
    # B: (100 * 12 + 300 * 8) / 400 = 9
    assert "| ee | 11.00 | 9.00 |" in out and out.rstrip().endswith("fall from A to B: 2.00")
    paths[3].write_text("{}", encoding="utf-8")
    assert non_bible_dev.main([str(p) for p in paths]) == 2
    assert f"error: {paths[3]}: not an extend-report JSON" in capsys.readouterr().err
