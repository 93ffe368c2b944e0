"""benchmarks/routes.py: a language routes when its non-Bible dev sets, pooled by pairs, are
better than the comparison's (the start model, or the default's own reports with --against);
Bible-only languages stay unless their whole slice falls by a given margin; a file that is not a routed report exits 2 naming it."""
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
    "before": {"bm": gen(24.0, 24.0), "om": gen(25.0, 21.0), "yo": gen(15.0, 15.0)},
    "after": {"bm": gen(28.0, 30.0), "om": gen(22.0, 18.0), "yo": gen(14.0, 15.0)},
    "lowres": {
        "before": {"langs": {
            "bm": lang(23, 24, {"non-bible": (23, 24)}),
            "om": lang(10, 9, {"non-bible": (10, 9)}),
            "ku": lang(13, 14, {"non-bible": (13, 14)}),
            "yo": lang(12, 12, {"non-bible": (12, 12)}),
            "dik": lang(75, 73, {"bible": (75, 73)}),
        }},
        "after": {"langs": {
            "bm": lang(12, 9, {"non-bible": (12, 9)}),     # news far better, general slice worse: pooled better
            "om": lang(7, 6, {"non-bible": (7, 6)}),       # better on both
            "ku": lang(13, 14, {"non-bible": (13, 14)}),   # a tie is not better
            "yo": lang(14, 14, {"non-bible": (14, 14)}),   # general slice better, news worse by more: pooled worse
            "dik": lang(20, 17, {"bible": (20, 17)}),      # Bible alone: stays
        }},
    },
}


def test_a_language_routes_when_its_pooled_non_bible_error_falls():
    rows = {r["lang"]: r for r in routes.routes(REPORT)}
    assert {l for l, r in rows.items() if r["routed"]} == {"bm", "om"}
    assert rows["bm"]["sets"] == {"lowres non-Bible": (23.5, 10.5), "general": (24.0, 29.0)}
    # 5 news pairs and 10 general ones: (5 * 23.5 + 10 * 24) / 15 and (5 * 10.5 + 10 * 29) / 15
    assert rows["bm"]["pooled"] == (23.5 * 5 / 15 + 24 * 10 / 15, 10.5 * 5 / 15 + 29 * 10 / 15)
    assert rows["yo"]["pooled"] == (14.0, (5 * 14 + 10 * 14.5) / 15)
    assert rows["dik"]["sets"] == {} and rows["dik"]["pooled"] == (None, None)


def test_against_the_default_replaces_the_start_models_figures():
    # the default already reads om's news at 6.5 and its general slice at 15: the student's
    # 6.5 and 20 are no better, so om stays on the default's encoder
    default_low = {"langs": {**REPORT["lowres"]["before"]["langs"], "om": lang(7, 6, {"non-bible": (7, 6)})}}
    default_gen = {**REPORT["before"], "om": gen(15.0, 15.0)}
    rows = {r["lang"]: r for r in routes.routes(REPORT, default_low, default_gen)}
    assert rows["om"]["sets"] == {"lowres non-Bible": (6.5, 6.5), "general": (15.0, 20.0)}
    assert {l for l, r in rows.items() if r["routed"]} == {"bm"}


def test_the_command_prints_the_route_and_refuses_another_file(tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(REPORT), encoding="utf-8")
    assert routes.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("--route bm,om")
    assert "| bm | 23.5 -> 10.5 | 24.0 -> 29.0 | 23.83 -> 22.83 | yes |" in out
    low, general = tmp_path / "low.json", tmp_path / "general.json"
    low.write_text(json.dumps({"model": "d", "corpus": "lowres", "report": {"langs": {
        **REPORT["lowres"]["before"]["langs"], "om": lang(7, 6, {"non-bible": (7, 6)})}}}), encoding="utf-8")
    general.write_text(json.dumps({"model": "d", "report": {**REPORT["before"], "om": gen(15.0, 15.0)}}), encoding="utf-8")
    assert routes.main([str(path), "--against", str(low), "--against-general", str(general)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("--route bm")
    general.write_text(json.dumps({"model": "d", "report": {"bm": gen(1.0, 1.0)}}), encoding="utf-8")
    assert routes.main([str(path), "--against", str(low), "--against-general", str(general)]) == 2
    assert f"error: {general}: not a routed low-resource run's report, or lacks what it needs (KeyError('no figures for om, yo'))" in capsys.readouterr().err
    general.write_text(json.dumps({"model": "d"}), encoding="utf-8")
    assert routes.main([str(path), "--against", str(low), "--against-general", str(general)]) == 2
    assert f"error: {general}: not a routed low-resource run's report" in capsys.readouterr().err
    path.write_text(json.dumps({"model": "x"}), encoding="utf-8")
    assert routes.main([str(path)]) == 2
    assert f"error: {path}: not a routed low-resource run's report" in capsys.readouterr().err


def test_a_bible_only_language_routes_only_on_a_fall_as_large_as_asked(tmp_path, capsys):
    # dik: (75 + 73) / 2 = 74 -> (20 + 17) / 2 = 18.5, a fall of 55.5
    rows = {r["lang"]: r for r in routes.routes(REPORT, bible_only_fall=55.5)}
    assert rows["dik"]["bible"] == (74.0, 18.5) and rows["dik"]["routed"]
    assert "bible" not in rows["bm"] and rows["bm"]["routed"]
    assert not {r["lang"]: r for r in routes.routes(REPORT, bible_only_fall=55.6)}["dik"]["routed"]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(REPORT), encoding="utf-8")
    assert routes.main([str(path), "--bible-only-fall", "5"]) == 0
    out = capsys.readouterr().out
    assert "| dik | - | - | - | yes (Bible only: 74.00 -> 18.50) |" in out
    assert out.rstrip().endswith("--route bm,dik,om")
