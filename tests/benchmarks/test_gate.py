"""benchmarks/gate.py on hand-made eval results: every figure has a tolerance (its measured seed
noise, or one item of its sets, at most 0.3 points and 0.003 for QE Pearson), and a candidate
fails only where a figure falls by more than it; the per-language rules of Tatoeba and of the
dev reports allow 2 points plus each language's own tolerance; set sizes missing from a result
are counted from the benchmark data."""
import json

import pytest

from tests.benchmark_script import load_benchmark

G = load_benchmark("gate")


def eval_result(model, tatoeba=None, sizes=None, sts_cross=76.0, bucc=93.0, gold=400, qe=0.37, xnli=60.0,
                xnli_n=5010):
    """An eval result; `tatoeba` {lang: margin accuracy, both directions}, `sizes` {lang: n}
    (None: no "n" recorded, as in older files; gold and xnli_n likewise)."""
    tatoeba = tatoeba or {"deu": 90.0, "fra": 91.0}
    rows = {}
    for lang, v in tatoeba.items():
        rows[lang] = {"margin xx-en": v, "margin en-xx": v}
        if sizes is not None:
            rows[lang]["n"] = sizes[lang]
    bucc_row = {"f1 best": bucc} | ({"gold": gold} if gold else {})
    xnli_rows = {l: {"accuracy": xnli} | ({"n": xnli_n} if xnli_n else {}) for l in ("en", "de")}
    return {"model": model, "tasks": {
        "tatoeba": {"rows": rows}, "tatoeba:all": {"rows": rows},
        "sts": {"summary": {"sts17_extended cross-lingual spearman": sts_cross,
                            "sts17_extended monolingual spearman": 81.5}},
        "bucc": {"summary": {"zh-en f1 best": bucc}, "rows": {"zh-en max": bucc_row}},
        "qe": {"summary": {"pearson": qe}},
        "xnli": {"summary": {"accuracy": xnli}, "rows": xnli_rows}}}


SIZES = {"deu": 1000, "fra": 1000}


def dev_report(model, pairs=None, **errors):
    pairs = pairs or {}
    return {"model": model, "report": {l: {"pairs": pairs.get(l, 500), "xx->en": e, "en->xx": e}
                                       for l, e in errors.items()}}


def run_gate(tmp_path, monkeypatch, capsys, now, cand, dev=None, extra=()):
    files = []
    for i, doc in enumerate([now, cand, *(dev or [])]):
        files.append(tmp_path / f"{i}.json")
        files[-1].write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    argv = ["gate.py", str(files[0]), str(files[1])] + (["--dev", str(files[2]), str(files[3])] if dev else [])
    monkeypatch.setattr("sys.argv", argv + list(extra))
    with pytest.raises(SystemExit) as exit_:
        G.main()
    out = capsys.readouterr()
    return exit_.value.code, out.out + out.err


def row(out, figure):
    return next(line for line in out.splitlines() if line.startswith(f"| {figure}"))


def test_a_fall_inside_the_tolerance_passes_one_just_outside_fails(tmp_path, monkeypatch, capsys):
    now = eval_result("now", sizes=SIZES)
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES))
    assert code == 0 and "verdict: passes the gate" in out
    # BUCC is deterministic: one gold pair of 400 is 0.25 F1
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, bucc=92.76))
    assert code == 0, out
    assert row(out, "BUCC") == ("| BUCC zh-en F1 (best threshold) | 93.00 | **92.76** | -0.240 | 0.250 | 93.00 "
                                "| 92.00 | pass |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, bucc=92.74))
    assert code == 1 and "verdict: does not pass the gate" in out
    assert row(out, "BUCC").endswith("| -0.260 | 0.250 | 93.00 | 92.00 | **fail** |")
    # QE Pearson, against its fixed gate of 0.260: its measured seed noise, 0.002
    now = eval_result("now", sizes=SIZES, qe=0.262)
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, qe=0.2581))
    assert code == 0 and row(out, "WMT20").endswith("| **0.258** | -0.0039 | 0.0020 | 0.260 | 0.320 | pass |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, qe=0.2579))
    assert code == 1 and row(out, "WMT20").endswith("| **fail** |")


def test_no_tolerance_above_the_caps(tmp_path, monkeypatch, capsys):
    now = eval_result("now", sizes=SIZES)
    # cross-lingual STS's measured noise is 0.32; the gate forgives 0.3 at most
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, sts_cross=75.72))
    assert code == 0 and row(out, "STS2017-extended cross").endswith("| -0.280 | 0.300 | 76.00 | 80.00 | pass |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, sts_cross=75.69))
    assert code == 1 and row(out, "STS2017-extended cross").endswith("| -0.310 | 0.300 | 76.00 | 80.00 | **fail** |")
    # XNLI (noise 0.87) against its fixed gate of 57.2
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES, xnli=57.5),
                         eval_result("cand", sizes=SIZES, xnli=56.95))
    assert code == 0 and row(out, "XNLI").endswith("| 0.300 | 57.20 | 61.00 | pass |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES, xnli=57.5),
                         eval_result("cand", sizes=SIZES, xnli=56.85))
    assert code == 1 and row(out, "XNLI").endswith("| **fail** |")
    # a QE figure of noise 0.01 would still be forgiven 0.003 at most
    qe = next(i for i, f in enumerate(G.FIGURES) if f.name.startswith("WMT20"))
    figures = list(G.FIGURES)
    figures[qe] = figures[qe]._replace(noise=0.01)
    monkeypatch.setattr(G, "FIGURES", tuple(figures))
    now = eval_result("now", sizes=SIZES, qe=0.262)
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, qe=0.2571))
    assert code == 0 and row(out, "WMT20").endswith("| -0.0049 | 0.0030 | 0.260 | 0.320 | pass |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", sizes=SIZES, qe=0.2569))
    assert code == 1 and row(out, "WMT20").endswith("| **fail** |")
    assert G.tolerance(0.87, 0.01) == 0.3 and G.tolerance(0.01, None, G.PEARSON_CAP) == 0.003


def test_tolerance_from_set_sizes(tmp_path, monkeypatch, capsys):
    # Tatoeba-84 on deu (1,000 sentences) and fra (250): a mean over 4 retrieval sets, smallest
    # 250, so one item is 100 / (250 * 4) = 0.1 point
    sizes = {"deu": 1000, "fra": 250}
    now = eval_result("now", sizes=sizes)
    code, out = run_gate(tmp_path, monkeypatch, capsys, now,
                         eval_result("cand", {"deu": 90.0, "fra": 90.82}, sizes))
    assert code == 0, out
    assert row(out, "Tatoeba all 84") == ("| Tatoeba all 84 languages, ratio margin, both directions | 90.50 | "
                                          "**90.41** | -0.090 | 0.100 | 90.50 | 94.50 | pass |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, now,
                         eval_result("cand", {"deu": 90.0, "fra": 90.78}, sizes))
    assert code == 1 and row(out, "Tatoeba all 84").endswith("| -0.110 | 0.100 | 90.50 | 94.50 | **fail** |")
    # Tatoeba-36: the larger of its seed noise (0.01) and one item
    assert row(out, "Tatoeba-36").endswith("| -0.110 | 0.100 | 90.50 | 93.00 | **fail** |")
    assert G.one_item([1000, 1000, 250, 250]) == pytest.approx(0.1)
    assert G.one_item([257]) == pytest.approx(100 / 257)


def test_set_sizes_counted_from_the_data_for_older_results(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    (data / "tatoeba").mkdir(parents=True)
    for lang, n in {"deu": 200, "fra": 500}.items():
        for side in (lang, "eng"):
            (data / "tatoeba" / f"tatoeba.{lang}-eng.{side}").write_text(
                "".join(f"{side} {i}\n" for i in range(n)), encoding="utf-8")
    (data / "bucc2018").mkdir()
    for side in ("zh", "en"):
        (data / "bucc2018" / f"zh-en.dev.{side}").write_text(
            "".join(f"{side}-{i:06d}\t{side} {i}\n" for i in range(500)), encoding="utf-8")
    (data / "bucc2018" / "zh-en.dev.gold").write_text(
        "".join(f"zh-{i:06d}\ten-{i:06d}\n" for i in range(125)), encoding="utf-8")
    (data / "xnli").mkdir()
    for lang in ("en", "de"):
        (data / "xnli" / f"test-{lang}.tsv").write_text("p\th\tentailment\n" * 30, encoding="utf-8")
    old = eval_result("now", gold=None, xnli_n=None)
    sizes = G.set_sizes(old, data)
    assert sizes == {"tatoeba": {"deu": 200, "fra": 500}, "tatoeba:all": {"deu": 200, "fra": 500},
                     "xnli": {"en": 30, "de": 30}, "bucc": 125}
    limited = G.set_sizes({**old, "limit": 100}, data)
    assert limited["tatoeba"] == {"deu": 100, "fra": 100} and limited["bucc"] == 100
    # a new candidate file against the older one: the counted sizes match the recorded ones
    cand = eval_result("cand", sizes={"deu": 200, "fra": 500}, gold=125, xnli_n=30, bucc=92.3)
    code, out = run_gate(tmp_path, monkeypatch, capsys, old, cand, extra=["--data-dir", str(data)])
    # one item: 100 / (200 * 4) = 0.125 on Tatoeba; 100 / 125 = 0.8 on BUCC, capped at 0.3
    assert row(out, "Tatoeba all 84").endswith("| +0.000 | 0.125 | 90.50 | 94.50 | pass |")
    assert code == 1 and row(out, "BUCC").endswith("| -0.700 | 0.300 | 93.00 | 92.00 | **fail** |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, old, eval_result("cand", sizes={"deu": 200, "fra": 400}),
                         extra=["--data-dir", str(data)])
    assert code == 2 and "the two results were read on different sets" in out


def test_the_per_language_tatoeba_rule(tmp_path, monkeypatch, capsys):
    # 250 sentences: one item of the two directions is 100 / 500 = 0.2, so deu may fall 2.2
    sizes = {"deu": 250, "fra": 250}
    now = eval_result("now", sizes=sizes)
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", {"deu": 87.85, "fra": 93.15}, sizes))
    assert code == 0, out
    assert "plus their tolerance below now: none" in out and "| deu | 90.00 | 87.85 | -2.15 | 0.200 | pass |" in out
    code, out = run_gate(tmp_path, monkeypatch, capsys, now, eval_result("cand", {"deu": 87.75, "fra": 93.25}, sizes))
    assert code == 1 and "plus their tolerance below now: deu -2.25" in out
    assert "| deu | 90.00 | 87.75 | -2.25 | 0.200 | **fail** |" in out
    assert row(out, "Tatoeba-36").endswith("| pass |")  # the mean holds: only the language fails


def test_dev_rows_of_the_new_languages(tmp_path, monkeypatch, capsys):
    pairs = {"dz": 499, "bo": 200, "ar": 200, "de": 200}
    now = dev_report("bundled", pairs, dz=78.0, bo=56.0, **{"ace-Arab": 64.0}, ar=1.0, de=0.5)
    better = dev_report("cand", pairs, dz=40.0, bo=30.0, **{"ace-Arab": 30.0}, ar=3.2, de=0.5)
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES),
                         eval_result("cand", sizes=SIZES), [now, better])
    assert code == 0, out
    # tibetan: a mean over dz and bo, both directions, smallest 200 pairs: 100 / 800 = 0.125
    assert row(out, "dev retrieval error, tibetan") == (
        "| dev retrieval error, tibetan (dz, bo), lower is better | 67.00 | **35.00** | -32.000 | 0.125 "
        "| 67.00 (not above) | 30.00 | pass |")
    # arabic-script: ace-Arab alone, 500 pairs both ways: 100 / 1,000
    assert row(out, "dev retrieval error, arabic-script (ace-Arab)").endswith(
        "| 0.100 | 64.00 (not above) | 25.00 | pass |")
    # ar rises 2.2 on 200 pairs: within 2 + 100 / 400
    assert "plus their tolerance above now: none" in out and "| ar | 1.00 | 3.20 | +2.20 | 0.250 | pass |" in out
    slightly_worse = dev_report("cand", pairs, dz=78.1, bo=56.1, **{"ace-Arab": 30.0}, ar=3.3, de=0.5)
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES),
                         eval_result("cand", sizes=SIZES), [now, slightly_worse])
    assert code == 1
    assert row(out, "dev retrieval error, tibetan").endswith(
        "| **67.10** | +0.100 | 0.125 | 67.00 (not above) | 30.00 | pass |")
    assert "plus their tolerance above now: ar +2.30" in out
    assert "| ar | 1.00 | 3.30 | +2.30 | 0.250 | **fail** |" in out
    worse = dev_report("cand", pairs, dz=78.2, bo=56.1, **{"ace-Arab": 30.0}, ar=1.0, de=0.5)
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES),
                         eval_result("cand", sizes=SIZES), [now, worse])
    assert code == 1
    assert row(out, "dev retrieval error, tibetan").endswith(
        "| +0.150 | 0.125 | 67.00 (not above) | 30.00 | **fail** |")
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES),
                         eval_result("cand", sizes=SIZES),
                         [now, dev_report("cand", dz=1.0, **{"ace-Arab": 1.0}, ar=1.0, de=1.0)])
    assert code == 2 and "the two dev reports cover different languages (bo)" in out


def lowres_report(model, **errors):
    langs = {l: {"pairs": 200, "xx->pivot": e, "pivot->xx": e + 2.0, "pivots": ["en"]} for l, e in errors.items()}
    return {"model": model, "corpus": "lowres", "report": {"langs": langs, "mean": {}, "domains": {}}}


def test_the_low_resource_report_is_one_group_and_each_language_is_held_too(tmp_path, monkeypatch, capsys):
    now, cand = lowres_report("bundled", ay=30.0, bm=20.0), lowres_report("cand", ay=10.0, bm=22.5)
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES),
                         eval_result("cand", sizes=SIZES), [now, cand])
    # the mean of both directions: (31 + 21) / 2 -> (11 + 23.5) / 2; one item of 200 pairs, 4 sets
    assert row(out, "dev retrieval error, low-resource (ay, bm)") == (
        "| dev retrieval error, low-resource (ay, bm), lower is better | 26.00 | **17.25** | -8.750 | 0.125 "
        "| 26.00 (not above) | 10.00 | pass |")
    # bm rises 2.5 > 2 + 100 / 400: the group's gain does not cover it
    assert code == 1 and "plus their tolerance above now: bm +2.50" in out
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES),
                         eval_result("cand", sizes=SIZES), [now, dev_report("cand", ay=1.0, bm=1.0)])
    assert code == 2 and "one dev report is of the low-resource corpus (--lowres) and the other is not" in out


def test_unreadable_files_name_themselves(tmp_path, monkeypatch, capsys):
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES),
                         '{"model": "cand",\n  "tasks": [')
    assert code == 2 and out.strip() == f"{tmp_path / '1.json'}:2: not JSON (Expecting value)"
    no_xnli = eval_result("cand", sizes=SIZES)
    del no_xnli["tasks"]["xnli"]
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES), no_xnli)
    assert code == 2 and out.startswith(f"{tmp_path / '1.json'}: no 'xnli' in this result")


def test_dev_reports_read_without_harakat_are_held_beside_those_read_as_written(tmp_path, monkeypatch, capsys):
    now, cand = dev_report("bundled", **{"knc-Arab": 28.0}, ar=1.0), dev_report("cand", **{"knc-Arab": 28.0}, ar=1.0)
    now_s = dev_report("bundled", **{"knc-Arab": 68.0}, ar=1.5) | {"strip_harakat": True}
    cand_s = dev_report("cand", **{"knc-Arab": 40.0}, ar=4.0) | {"strip_harakat": True}
    files = [tmp_path / "now-stripped.json", tmp_path / "cand-stripped.json"]
    for f, doc in zip(files, (now_s, cand_s)):
        f.write_text(json.dumps(doc), encoding="utf-8")
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES), eval_result("cand", sizes=SIZES),
                         [now, cand], extra=["--dev", *map(str, files)])
    assert row(out, "dev retrieval error, arabic-script (knc-Arab)").endswith("| 28.00 (not above) | 25.00 | pass |")
    assert row(out, "dev retrieval error, arabic-script read without harakat (knc-Arab)") == (
        "| dev retrieval error, arabic-script read without harakat (knc-Arab), lower is better | 68.00 | **40.00** "
        "| -28.000 | 0.100 | 68.00 (not above) | 25.00 | pass |")
    # ar read without harakat rises 2.5 on 500 pairs: more than 2 + 100 / 1,000
    assert code == 1 and "plus their tolerance above now: ar (without harakat) +2.50" in out
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now", sizes=SIZES), eval_result("cand", sizes=SIZES),
                         [now, cand_s])
    assert code == 2 and "one dev report reads the text without harakat (--strip-harakat) and the other does not" in out
