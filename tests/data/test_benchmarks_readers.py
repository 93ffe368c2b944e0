"""Benchmark readers: malformed rows name file:line, missing files name what and where,
and the real files (via the `benchmarks` fixture) have the sizes their publishers state."""
import pytest

from xlingua.data import benchmarks as B


def _w(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_file_names_what_and_where(tmp_path):
    (tmp_path / "tatoeba").mkdir()
    with pytest.raises(FileNotFoundError, match=r"Tatoeba deu side not found: looked for .*tatoeba\.deu-eng\.deu"):
        B.read_tatoeba("deu", tmp_path)
    with pytest.raises(FileNotFoundError, match="benchmark directory not found"):
        B.read_tatoeba("deu", tmp_path / "nowhere")


def test_parallel_files_must_align(tmp_path):
    _w(tmp_path / "tatoeba" / "tatoeba.deu-eng.deu", "a\nb\n")
    _w(tmp_path / "tatoeba" / "tatoeba.deu-eng.eng", "a\n")
    with pytest.raises(B.BenchmarkFormatError, match="has 2 lines but .* has 1"):
        B.read_tatoeba("deu", tmp_path)
    _w(tmp_path / "tatoeba" / "tatoeba.deu-eng.eng", "a\n \n")
    with pytest.raises(B.BenchmarkFormatError, match=r"tatoeba\.deu-eng\.eng:2: empty sentence"):
        B.read_tatoeba("deu", tmp_path)


def test_sts_extended_bad_row_and_bad_score(tmp_path):
    p = _w(tmp_path / "sts17_extended" / "STS.en-de.txt", "a\tb\t1.0\nc\td\n")
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:2: expected 3 tab-separated columns"):
        B.read_sts17_extended("en-de", tmp_path)
    _w(p, "a\tb\t1.0\nc\td\tsix\n")
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:2: expected a number, got 'six'"):
        B.read_sts17_extended("en-de", tmp_path)
    _w(p, "a\tb\t7\n")
    with pytest.raises(B.BenchmarkFormatError, match=r":1: score '7' outside \[0, 5\]"):
        B.read_sts17_extended("en-de", tmp_path)


def test_sts17_input_and_gold_must_match_except_the_known_track6(tmp_path):
    inp = tmp_path / "sts17" / "STS2017.eval.v1.1"
    gs = tmp_path / "sts17" / "STS2017.gs"
    _w(inp / "STS.input.track1.ar-ar.txt", "a\tb\nc\td\n")
    _w(gs / "STS.gs.track1.ar-ar.txt", "1.0\n")
    with pytest.raises(B.BenchmarkFormatError, match="has 2 pairs but .* has 1 scores"):
        B.read_sts17("track1.ar-ar", tmp_path)
    _w(inp / "STS.input.track6.tr-en.txt", "a\tb\n" * 500)
    _w(gs / "STS.gs.track6.tr-en.txt", "2\n" * 250)
    pairs = B.read_sts17("track6.tr-en", tmp_path)
    assert len(pairs) == 250 and "first 250" in pairs.note and (pairs.lang1, pairs.lang2) == ("tr", "en")


def test_stsb_takes_columns_5_to_7_and_ignores_source_columns(tmp_path):
    _w(tmp_path / "stsb" / "stsbenchmark" / "sts-test.csv",
       "g\tf\t2012\t1\t2.5\tA girl.\tA kid.\n"
       "g\tf\t2016\t2\t3\tOne.\tTwo.\tsrc a\tsrc b\n"
       "g\tf\t2016\t3\t3\tonly six\n")
    with pytest.raises(B.BenchmarkFormatError, match=r"sts-test\.csv:3: expected at least 7"):
        B.read_stsb("test", tmp_path)


def test_stsb_multi_mt_csv_quotes_and_bad_row(tmp_path):
    p = _w(tmp_path / "stsb_multi_mt" / "stsb-de-dev.csv", '"Ein Mann, der tanzt.",Ein Mann.,4.5\nnur,zwei\n')
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:2: expected 3 CSV fields"):
        B.read_stsb_multi_mt("de", "dev", tmp_path)
    _w(p, '"Ein Mann, der tanzt.",Ein Mann.,4.5\n')
    pairs = B.read_stsb_multi_mt("de", "dev", tmp_path)
    assert pairs.s1 == ["Ein Mann, der tanzt."] and pairs.score == [4.5]


def test_mlqe_header_and_rows(tmp_path):
    d = tmp_path / "mlqe" / "en-de"
    p = _w(d / "test20.ende.df.short.tsv", "index\toriginal\ttranslation\tz_mean\n0\tHi.\tHallo.\t0.5\n1\tBye.\n")
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:3: expected 4 tab-separated columns, got 2"):
        B.read_mlqe("en-de", data_dir=tmp_path)
    _w(p, "index\toriginal\ttranslation\n")
    with pytest.raises(B.BenchmarkFormatError, match=r":1: header lacks column 'z_mean'"):
        B.read_mlqe("en-de", data_dir=tmp_path)


HEADER = "index\toriginal\ttranslation\tscores\tmean\tz_scores\tz_mean\tmodel_scores\n"


@pytest.mark.parametrize("split", ["dev", "train"])
def test_mlqe_dev_and_train_splits_read_z_mean_and_reject_bad_rows(tmp_path, split):
    p = _w(tmp_path / "mlqe" / "ro-en" / f"{split}.roen.df.short.tsv",
           HEADER + "0\tBuna.\tHello.\t[90, 80]\t85.0\t[0.1, 0.3]\t0.2\t-0.1\n"
                    "1\tPa.\tBye.\t[10]\t10.0\t[-1.5]\t-1.5\t-0.9\n")
    qe = B.read_mlqe("ro-en", split, tmp_path)
    assert (qe.s1, qe.s2, qe.score, qe.lang1, qe.lang2) == (["Buna.", "Pa."], ["Hello.", "Bye."], [0.2, -1.5], "ro", "en")
    _w(p, HEADER + "0\tBuna.\tHello.\t[90]\t90\t[0.1]\t0.1\t0\n1\tPa.\tBye.\t[10]\t10\t[x]\tn/a\t0\n")
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:3: expected a number, got 'n/a'"):
        B.read_mlqe("ro-en", split, tmp_path)
    _w(p, HEADER + "0\tBuna.\t \t[90]\t90\t[0.1]\t0.1\t0\n")
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:2: empty translation"):
        B.read_mlqe("ro-en", split, tmp_path)
    _w(p, HEADER + "0\tBuna.\tHello.\t0.1\n")
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:2: expected 8 tab-separated columns, got 4"):
        B.read_mlqe("ro-en", split, tmp_path)


def test_mlqe_unknown_split(tmp_path):
    with pytest.raises(ValueError, match=r"unknown WMT20 QE split 'test21'; choose from \('train', 'dev', 'test20'\)"):
        B.read_mlqe("ro-en", "test21", tmp_path)


def test_bucc_duplicate_ids_and_dangling_gold(tmp_path):
    b = tmp_path / "bucc2018"
    _w(b / "zh-en.dev.zh", "zh-1\t一\nzh-2\t二\n")
    _w(b / "zh-en.dev.en", "en-1\tone\nen-1\tuno\n")
    _w(b / "zh-en.dev.gold", "zh-1\ten-1\n")
    with pytest.raises(B.BenchmarkFormatError, match=r"zh-en\.dev\.en:2: duplicate id 'en-1'"):
        B.read_bucc("zh", data_dir=tmp_path)
    _w(b / "zh-en.dev.en", "en-1\tone\n")
    _w(b / "zh-en.dev.gold", "zh-1\ten-1\nzh-3\ten-1\n")
    with pytest.raises(B.BenchmarkFormatError, match=r"zh-en\.dev\.gold:2: gold pair \(zh-3, en-1\) names an id absent"):
        B.read_bucc("zh", data_dir=tmp_path)


def test_xnli_carriage_return_before_label(tmp_path):
    p = _w(tmp_path / "xnli" / "test-de.tsv", "P1\tH1\r\tentailment\nP2\tH2\tmaybe\n")
    with pytest.raises(B.BenchmarkFormatError, match=rf"{p}:2: expected premise"):
        B.read_xnli_split("de", "test", tmp_path)
    _w(p, "P1\tH1\r\tentailment\n")
    (pair,) = B.read_xnli_split("de", "test", tmp_path)
    assert (pair.premise, pair.hypothesis, pair.label) == ("P1", "H1", 0)
    # the training-side reader is the same reader (it once split on "\r" and failed here)
    from xlingua.data.nli import read_xnli

    assert read_xnli("de", "test", tmp_path) == [pair]


def test_trec_and_sst2_labels(tmp_path):
    _w(tmp_path / "senteval" / "TREC" / "train_5500.label", "NUM:date When was it ?\nXYZ:foo What ?\n")
    with pytest.raises(B.BenchmarkFormatError, match=r"train_5500\.label:2: unknown TREC class 'XYZ'"):
        B.read_trec("train", tmp_path)
    _w(tmp_path / "senteval" / "SST" / "binary" / "sentiment-test", "good film \t1\nbad \t2\n")
    with pytest.raises(B.BenchmarkFormatError, match=r"sentiment-test:2: SST2 label must be 0 or 1"):
        B.read_sst2("test", tmp_path)


# ---- the real files ---------------------------------------------------------------------

def test_real_benchmark_sizes(benchmarks):
    assert len(B.tatoeba_langs(benchmarks)) == 84
    xx, en = B.read_tatoeba("deu", benchmarks)
    assert len(xx) == len(en) == 1000
    assert [len(B.read_sts17(t, benchmarks)) for t in B.sts17_tracks(benchmarks)] == [250] * 7
    assert len(B.sts17_extended_pairs(benchmarks)) == 10
    assert len(B.read_stsb("test", benchmarks)) == 1379
    assert len(B.read_stsb_multi_mt("de", "dev", benchmarks)) == 1500
    assert [len(B.read_mlqe(p, data_dir=benchmarks)) for p in B.MLQE_PAIRS] == [1000] * 6
    assert [len(B.read_mlqe(p, "dev", benchmarks)) for p in B.MLQE_PAIRS] == [1000] * 6
    assert [len(B.read_mlqe(p, "train", benchmarks)) for p in B.MLQE_PAIRS] == [7000] * 6
    bucc = B.read_bucc("zh", data_dir=benchmarks)
    assert (len(bucc.src), len(bucc.tgt), len(bucc.gold)) == (8624, 13589, 257)
    assert len(B.read_xnli_split("ar", "test", benchmarks)) == 5010
    from xlingua.data.nli import read_xnli_langs

    assert {len(v) for v in read_xnli_langs(["en", "ur"], "test", benchmarks).values()} == {5010}
    assert len(B.read_trec("test", benchmarks).texts) == 500
    assert len(B.read_senteval_binary("MR", benchmarks).texts) == 10662
    assert len(B.read_multi30k("fr", data_dir=benchmarks)) == 1000
