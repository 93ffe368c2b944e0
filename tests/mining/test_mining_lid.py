"""Two-stage mining identifies every line's language first (mining.lid): the other languages'
lines are never embedded, kept lines keep their line numbers, and the step resumes."""
import gzip

import numpy as np
import pytest
from mining_toy import write_lines

from xlingua.mining import MineConfig, mine
from xlingua.mining.corpus import ShardedCorpus, ShardStep, shard_config
from xlingua.mining.lid import LidConfig, LidStep
from xlingua.mining.runner import Runner
from xlingua.mining.toy import CharNgramEncoder

GERMAN = ["Der alte Fischer hat das blaue Boot am Samstag repariert.",
          "Meine jüngere Schwester pflanzt im Frühling Tomaten im Garten.",
          "Ein müder Student hat gestern Abend den letzten Zug verpasst.",
          "Unsere neue Nachbarin hat die Küche gelb gestrichen.",
          "Der Bäcker aus dem Dorf backt sein Brot vor der Morgendämmerung."]
ENGLISH = ["The old fisherman repaired the blue boat on Saturday.",
           "My younger sister plants tomatoes in the garden in spring.",
           "A tired student missed the last train yesterday evening.",
           "Our new neighbour painted the kitchen yellow.",
           "The village baker bakes his bread before dawn."]
FRENCH = ["Le vieux pêcheur a réparé le bateau bleu samedi dernier.",
          "Les marchés financiers ont fermé en hausse vendredi soir.",
          "Nous avons mangé une excellente soupe à l'oignon hier."]


def _lid(tmp_path, lines, lang, shard_size, workers=1):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = write_lines(tmp_path / f"{lang}.txt", lines)
    runner = Runner(show_progress=False)
    shards = runner.run(ShardStep(shard_config(path, lang, shard_size, False, check_lang=False), tmp_path / "wd"), "shard")
    return LidStep(LidConfig(shards, workers=workers), tmp_path / "wd"), runner


def test_only_the_sides_language_is_kept_with_its_line_numbers(tmp_path):
    # German at lines 2, 4, 5, 7, 9 among French and English; shards of 3 lines re-packed to 3
    lines = [FRENCH[0], GERMAN[0], ENGLISH[0], GERMAN[1], GERMAN[2], FRENCH[1], GERMAN[3], ENGLISH[1], GERMAN[4]]
    step, runner = _lid(tmp_path, lines, "de", shard_size=3)
    out = runner.run(step, "lid")
    corpus = ShardedCorpus(out)
    assert out.sizes == (3, 2) and out.sentences == 5 and out.lines == 9 and not out.has_ids
    assert corpus.all_ids() == ["2", "4", "5", "7", "9"]
    assert corpus.lookup(np.arange(5))[0] == GERMAN


def test_several_processes_keep_the_same_lines(tmp_path):
    lines = (GERMAN + ENGLISH + FRENCH) * 3
    one = _lid(tmp_path / "one", lines, "en", shard_size=100, workers=1)
    two = _lid(tmp_path / "two", lines, "en", shard_size=100, workers=2)
    ids = [ShardedCorpus(r.run(s, "lid")).all_ids() for s, r in (one, two)]
    assert ids[0] == ids[1] == [str(i + 1) for i, t in enumerate(lines) if t in ENGLISH]


def test_a_killed_step_identifies_only_the_shards_left(tmp_path, monkeypatch):
    import xlingua.data.langid as langid

    calls = []
    real = langid.identified_as

    def counting(texts, lang):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")
        return real(texts, lang)

    monkeypatch.setattr(langid, "identified_as", counting)
    lines = GERMAN + ENGLISH
    step, runner = _lid(tmp_path, lines, "de", shard_size=4)
    with pytest.raises(KeyboardInterrupt):
        runner.run(step, "lid")
    assert not step.done() and calls == [4, 4]
    out = runner.run(step, "lid")
    assert calls == [4, 4, 4, 2]  # the first shard's mask was kept
    assert ShardedCorpus(out).all_ids() == ["1", "2", "3", "4", "5"]


def test_a_side_without_a_line_of_its_language_is_an_error_naming_the_file(tmp_path):
    step, runner = _lid(tmp_path, ENGLISH, "de", shard_size=10)
    with pytest.raises(ValueError, match=r"de\.txt: none of its 5 sentences is identified as 'de'"):
        runner.run(step, "lid")


def test_two_stages_mine_only_identified_lines_and_calibrate_on_line_numbers(tmp_path):
    src = [FRENCH[0], GERMAN[0], ENGLISH[2], GERMAN[1], GERMAN[2], FRENCH[1], GERMAN[3], GERMAN[4]]
    tgt = [ENGLISH[4], GERMAN[0], ENGLISH[0], FRENCH[2], ENGLISH[1], ENGLISH[2], ENGLISH[3]]
    sp, tp = write_lines(tmp_path / "de.txt", src), write_lines(tmp_path / "en.txt", tgt)
    gold = tmp_path / "gold.tsv"
    gold.write_text("2\t3\n4\t5\n5\t6\n7\t7\n8\t1\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv.gz"
    first, second, seen = CharNgramEncoder(dim=32, n=1), CharNgramEncoder(dim=256), []
    for enc in (first, second):
        enc._encode_batch = lambda texts, lang, _f=enc._encode_batch: seen.extend(texts) or _f(texts, lang)
    summary = mine(sp, tp, out, MineConfig("de", "en", shard_size=3, candidate_threshold=0.0), tmp_path / "wd",
                   encoder=first, rescore_encoder=second, calibrate=gold, show_progress=False)
    assert summary["identified"] == {"src": 5, "tgt": 5}
    assert summary["src"]["sentences"] == 8 and summary["tgt"]["sentences"] == 7
    assert sorted(seen[:10]) == sorted(GERMAN + ENGLISH)  # the first model, both sides
    assert not set(seen) & set(FRENCH)
    assert summary["calibration"]["gold_pairs_not_in_corpora"] == 0
    with gzip.open(out, "rt", encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t")[1:] for line in f]
    assert all(a in GERMAN and b in ENGLISH for a, b in pairs)


def test_without_lid_every_line_is_mined(tmp_path):
    src = [FRENCH[0], GERMAN[0], GERMAN[1]]
    tgt = [ENGLISH[0], FRENCH[1], ENGLISH[1]]
    sp, tp = write_lines(tmp_path / "de.txt", src), write_lines(tmp_path / "en.txt", tgt)
    summary = mine(sp, tp, tmp_path / "p.tsv.gz", MineConfig("de", "en", candidate_threshold=0.0, lid=False),
                   tmp_path / "wd", encoder=CharNgramEncoder(dim=32, n=1), rescore_encoder=CharNgramEncoder(dim=64),
                   show_progress=False)
    assert summary["identified"] is None and not (tmp_path / "wd" / "lid").exists()


def test_one_stage_identifies_lines_only_when_asked(tmp_path):
    src = [FRENCH[0], GERMAN[0], GERMAN[1], FRENCH[1]]
    tgt = [ENGLISH[0], FRENCH[2], ENGLISH[1]]
    sp, tp = write_lines(tmp_path / "de.txt", src), write_lines(tmp_path / "en.txt", tgt)
    for lid, mined in ((None, set(src + tgt)), (True, set(GERMAN[:2] + ENGLISH[:2]))):
        seen, enc = [], CharNgramEncoder(dim=64)
        enc._encode_batch = lambda texts, lang, _f=enc._encode_batch: seen.extend(texts) or _f(texts, lang)
        summary = mine(sp, tp, tmp_path / f"p{lid}.tsv.gz", MineConfig("de", "en", lid=lid), tmp_path / f"wd{lid}",
                       encoder=enc, show_progress=False)
        assert set(seen) == mined
        assert summary["identified"] == (None if lid is None else {"src": 2, "tgt": 2})
        with gzip.open(tmp_path / f"p{lid}.tsv.gz", "rt", encoding="utf-8") as f:
            pairs = {tuple(line.rstrip("\n").split("\t")[1:]) for line in f}
        if lid:
            assert pairs == {(GERMAN[0], ENGLISH[0]), (GERMAN[1], ENGLISH[1])}
