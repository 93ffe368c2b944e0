"""benchmarks/routes.py: a language routes only when the student is better on each of its
non-Bible dev sets; Bible-only languages stay; a file that is not a routed report exits 2."""
import json

from tests.benchmark_script import load_benchmark

routes = load_benchmark("routes")


def lang(xp, px, domains=None):
    row = {"pairs": 10, "xx->pivot": xp, "pivot->xx": px}
    if domains:
        row["domains"] = {k: {"pairs": 5, "xx->pivot": a, "pivot->xx": b} for k, (a, b) in domains.items()}
    return row


def gen(xe, ex):
    return {"pairs": 10, "xx->en": xe, "en->xx": ex}


REPORT = {
    "before": {"bm": gen(24.0, 24.0), "om": gen(25.0, 21.0)},
    "after": {"bm": gen(28.0, 30.0), "om": gen(22.0, 18.0)},
    "lowres": {
        "before": {"langs": {
            "bm": lang(23, 24, {"non-bible": (23, 24)}),
            "om": lang(10, 9, {"non-bible": (10, 9)}),
            "ku": lang(13, 14, {"non-bible": (13, 14)}),
            "dik": lang(75, 73, {"bible": (75, 73)}),
        }},
        "after": {"langs": {
            "bm": lang(12, 9, {"non-bible": (12, 9)}),     # better on news, worse on the general slice
            "om": lang(7, 6, {"non-bible": (7, 6)}),       # better on both
            "ku": lang(13, 14, {"non-bible": (13, 14)}),   # a tie is not better
            "dik": lang(20, 17, {"bible": (20, 17)}),      # Bible alone: stays
        }},
    },
}


def test_a_language_routes_only_when_better_on_every_non_bible_set():
    rows = {r["lang"]: r for r in routes.routes(REPORT)}
    assert {l for l, r in rows.items() if r["routed"]} == {"om"}
    assert rows["bm"]["sets"] == {"lowres non-Bible": (23.5, 10.5), "general": (24.0, 29.0)}
    assert rows["dik"]["sets"] == {}


def test_the_command_prints_the_route_and_refuses_another_file(tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(REPORT), encoding="utf-8")
    assert routes.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("--route om") and "| bm | 23.5 -> 10.5 | 24.0 -> 29.0 | no |" in out
    path.write_text(json.dumps({"model": "x"}), encoding="utf-8")
    assert routes.main([str(path)]) == 2
    assert f"{path}: not a routed low-resource run's report" in capsys.readouterr().err
