"""`xlingua extend --lowres` on a tiny BERT and a toy low-resource corpus: the recipe trains the
laser3 task on the corpus's train pairs (French pivots included) and chooses its step on the
low-resource dev slices beside the watched original languages; the reports hold the low-resource
dev report before and after; a bad line is one error naming file:line before anything runs."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.gz_files import write_gz
from tests.tiny_models import make_tiny_e5_dir
from tests.training.conftest import make_tiny_model_dir
from tests.training.test_extend import options, reversed_words, sentences, shifted, toy_shared  # noqa: F401
from xlingua.cli import app
from xlingua.data.examples import load_examples
from xlingua.data.lowres import dev_by_language, read_lowres
from xlingua.encoders.loading import load_encoder
from xlingua.training.extend.lowres_report import lowres_report
from xlingua.training.extend.run import build_config, check, extend

FRENCH = {"red": "rouge", "blue": "bleu", "green": "vert", "small": "petit", "big": "grand",
          "cat": "chat", "dog": "chien", "house": "maison", "car": "voiture"}


def french(en: str) -> str:
    return " ".join(FRENCH.get(w, w) for w in en.replace("the ", "le ").split())


def toy_lowres(root):
    """ee: 60 Bible verses (English) and 60 MAFAND pairs (French); kab: 50 of the same verses."""
    verses = [en for en, _ in sentences("the {a1} {n1} is on the {a2} {n2}", "")][::7][:60]
    news = [french(en) for en, _ in sentences("the {a1} {n1} and the {a2} {n2}", "")][::5][:60]
    write_gz(root / "bible" / "ee-en.tsv.gz", [f"{reversed_words(en)}\t{en}\n" for en in verses])
    write_gz(root / "mafand" / "ee-fr.tsv.gz", [f"{reversed_words(fr)}\t{fr}\n" for fr in news])
    write_gz(root / "bible" / "kab-en.tsv.gz", [f"{shifted(en)}\t{en}\n" for en in verses[:50]])
    return root


@pytest.fixture
def lowres_shared(toy_shared):
    """The toy general corpus (de, bho, xx) and beside it the toy low-resource corpus."""
    return toy_lowres(toy_shared.parent / "lowres")


def test_the_lowres_recipe_trains_on_train_pairs_and_watches_both_corpora(lowres_shared, tmp_path):
    opts = options(tmp_path, "model", langs=[], lowres=True, mix=0.3, sts=0.0)
    langs, files = check(opts)
    assert (langs, files) == (["ee", "kab"], {})
    config = build_config(opts, langs, files, "model", "model", None)
    tasks = {t.name: t for t in config.tasks}
    assert tasks["new"].data == {"type": "lowres", "langs": ["ee", "kab"]}
    assert tasks["new"].objective == "laser3" and tasks["keep"].data["langs"] == ["bho", "de", "xx"]
    assert (config.eval.general_langs, config.eval.lowres_langs, config.eval.select) == (["de", "bho"], ["ee", "kab"], "mean")
    examples = load_examples(tasks["new"].data)
    dev = {(p.text, p.pivot) for p in read_lowres(split="dev")}
    assert examples and not dev & {e[:2] for e in examples}
    # the French side stands where English stands
    assert {e[2] for e in examples} == {"ee", "kab"} and any(e[1].startswith("le ") for e in examples)
    assert check(options(tmp_path, "model", langs=["kab"], lowres=True, mix=0.0, sts=0.0))[0] == ["kab"]
    with pytest.raises(ValueError, match=r"no low-resource corpus file for language\(s\) \['xx'\]"):
        check(options(tmp_path, "model", langs=["xx"], lowres=True))
    with pytest.raises(ValueError, match="give one of them"):
        check(options(tmp_path, "model", langs=["ee"], lowres=True, pairs=str(tmp_path / "mine.tsv")))


def test_a_lowres_run_chooses_on_non_bible_figures_and_reports_before_and_after(lowres_shared, tmp_path):
    model = make_tiny_model_dir(tmp_path / "tiny")
    lines = []
    report = extend(options(tmp_path, model, langs=[], lowres=True, mix=0.3, sts=0.0, max_steps=6, eval_every=3,
                            checkpoint_every=3), echo=lines.append, show_progress=False)
    run = tmp_path / "run"
    dev = dev_by_language(["ee", "kab"])
    assert json.loads((run / "dev_before.json").read_text())["lowres"] == report["lowres"]["before"]
    assert report["lowres"]["before"] == lowres_report(load_encoder(str(model)), dev)
    assert report["lowres"]["after"] == lowres_report(load_encoder(report["model"]), dev)
    assert list(report["after"]) == ["de", "bho"] and report["langs"] == ["ee", "kab"]
    assert report["lowres"]["after"]["langs"]["ee"]["domains"]["non-bible"]["pairs"] == 6
    assert any(line.startswith("after: dev retrieval error %, low-resource") for line in lines)

    records = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    evals = [r["eval"] for r in records if "eval" in r]
    assert len(evals) == 3  # the start model, then every 3 steps
    found = max(evals, key=lambda e: e["mean"])  # the step best/ holds (a tie keeps the earlier)
    # the dev choice: every watched language, ee by its MAFAND pairs alone; the whole slices logged beside
    assert found["mean"] == pytest.approx(np.mean([found[k] for k in ("general_de", "general_bho", "lowres_ee",
                                                                      "lowres_kab")]))
    assert found["lowres"] == pytest.approx((found["lowres_ee"] + found["lowres_kab"]) / 2)
    assert found["lowres all"] == pytest.approx((found["lowres_ee all"] + found["lowres_kab all"]) / 2)
    assert found["lowres_kab"] == found["lowres_kab all"]  # Bible alone: its whole slice
    after = report["lowres"]["after"]["langs"]
    assert found["lowres_kab all"] == pytest.approx(100 - (after["kab"]["xx->pivot"] + after["kab"]["pivot->xx"]) / 2,
                                                    abs=0.01)


def test_spare_known_keeps_the_corpus_languages_not_trained_split_as_before(lowres_shared, tmp_path):
    # gd writes as kab does (some of its words): training kab alone must leave gd, which the model
    # reads as it is, split as before
    gd = [shifted(f"the red cat runs to the {w} {i}") for i in range(10) for w in ("red", "cat")]
    write_gz(lowres_shared / "bible" / "gd-en.tsv.gz", [f"{x}\tgd {i}\n" for i, x in enumerate(gd)])
    start = make_tiny_e5_dir(tmp_path / "tiny", ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß", "▁the", "▁a"])
    base = load_encoder(str(start)).tokenizer.content_ids(gd)
    extend(options(tmp_path, start, langs=["kab"], lowres=True, new_pieces=60, max_steps=2, spare_known=True,
                   rows_only=True, mix=0.0, sts=0.0), echo=lambda *_: None, show_progress=False)
    spared = load_encoder(str(tmp_path / "run" / "start"))
    assert spared.tokenizer.content_ids(gd) == base
    kab = [p.text for p in read_lowres(["kab"], root=lowres_shared)]
    assert sum(map(len, spared.tokenizer.content_ids(kab))) < sum(map(len, load_encoder(str(start)).tokenizer.content_ids(kab)))


def test_extend_lowres_command_runs_without_the_general_corpus(tmp_path, monkeypatch):
    toy_lowres(tmp_path / "shared" / "corpora" / "lowres")
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    model = make_tiny_model_dir(tmp_path / "tiny")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["extend", "--lowres", "--lang", "ee", "--model", str(model), "-o", str(out),
                                   "--mix", "0", "--sts", "0", "--max-steps", "2"])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    assert report["langs"] == ["ee"] and report["before"] == report["after"] == {}
    assert list(report["lowres"]["before"]["langs"]) == list(report["lowres"]["after"]["langs"]) == ["ee"]
    assert json.loads((out / "dev_before.json").read_text())["lowres"]["mean"]["langs"] == 1
    assert "before: dev retrieval error %, low-resource" in res.output


def test_a_bad_lowres_line_is_one_error_naming_file_and_line(tmp_path, monkeypatch):
    root = toy_lowres(tmp_path / "shared" / "corpora" / "lowres")
    bad = root / "mafand" / "ee-fr.tsv.gz"
    write_gz(bad, ["un\tone\n", "pas de tabulation\n"])
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["extend", "--lowres", "--model", "no-such-model", "-o", str(out), "--mix", "0",
                                   "--sts", "0"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [f"error: {bad}:2: expected `non_pivot<TAB>pivot`, "
                                               "got 'pas de tabulation'"]
    assert not out.exists()
    res = CliRunner().invoke(app, ["extend", "-o", str(out), "--mix", "0", "--sts", "0"])
    assert res.exit_code == 2 and "name at least one --lang" in res.output


def test_a_routed_student_trains_on_the_new_languages_alone_and_is_reported_beside_its_teacher(lowres_shared, tmp_path):
    from xlingua.encoders.routed import RoutedEncoder

    opts = options(tmp_path, "model", langs=[], lowres=True, routed=True, mix=0.0, sts=0.0)
    langs, files = check(opts)
    config = build_config(opts, langs, files, "student", "teacher", None)
    assert [t.name for t in config.tasks] == ["new"] and config.tasks[0].options["student_english"] is False
    # nothing but the new languages is watched, and their pivot side is the teacher's
    assert (config.eval.general_langs, config.eval.lowres_langs, config.eval.pivot_model) == ([], ["ee", "kab"], "teacher")
    for bad in (dict(mix=0.3), dict(sts=0.2), dict(rank_against="student")):
        with pytest.raises(ValueError, match="--routed trains a student that only embeds the new languages"):
            check(options(tmp_path, "model", langs=[], lowres=True, routed=True, **{"mix": 0.0, "sts": 0.0, **bad}))

    model = make_tiny_model_dir(tmp_path / "tiny")
    report = extend(options(tmp_path, model, langs=[], lowres=True, routed=True, mix=0.0, sts=0.0, max_steps=6,
                            eval_every=3, checkpoint_every=3), echo=lambda *_: None, show_progress=False)
    teacher, student = load_encoder(str(model)), load_encoder(report["model"])
    routed = RoutedEncoder(teacher, student, ["ee", "kab"])
    dev = dev_by_language(["ee", "kab"])
    assert report["lowres"]["after"] == lowres_report(routed, dev)
    english = [p.pivot for p in dev["kab"]]
    assert np.array_equal(routed.encode(english, lang="en"), teacher.encode(english))
    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    last = [r["eval"] for r in records if "eval" in r][-1]
    assert set(k for k in last if k.startswith("general")) == set()
    # the trainer scored the student's side against the teacher's pivots, as the routed model reads them
    after = report["lowres"]["after"]["langs"]["kab"]
    best = max((r["eval"] for r in records if "eval" in r), key=lambda e: e["mean"])
    assert best["lowres_kab all"] == pytest.approx(100 - (after["xx->pivot"] + after["pivot->xx"]) / 2, abs=0.01)


def test_a_pivot_model_embeds_the_pivot_side_once_for_every_evaluation(lowres_shared, tmp_path):
    from xlingua.training.config import EvalConfig
    from xlingua.training.evaluate import DevEvaluator
    from xlingua.training.evaluators import dev_accuracy

    teacher_dir = make_tiny_model_dir(tmp_path / "teacher", seed=0)
    student = load_encoder(str(make_tiny_model_dir(tmp_path / "student", seed=1)))
    teacher = load_encoder(str(teacher_dir))
    found = DevEvaluator(EvalConfig(lowres_langs=["kab"], pivot_model=str(teacher_dir)))(student)
    pairs = dev_by_language(["kab"])["kab"]
    xs, ys = [p.text for p in pairs], [p.pivot for p in pairs]
    assert found["lowres_kab all"] == pytest.approx(dev_accuracy(student.encode(xs), teacher.encode(ys)))
    alone = DevEvaluator(EvalConfig(lowres_langs=["kab"]))(student)
    assert alone["lowres_kab all"] == pytest.approx(dev_accuracy(student.encode(xs), student.encode(ys)))
    assert found["lowres_kab all"] != alone["lowres_kab all"]


def test_sources_limit_the_training_pairs_and_leave_the_dev_slices_whole(lowres_shared, tmp_path):
    opts = options(tmp_path, "model", langs=[], lowres=True, mix=0.0, sts=0.0, sources=["bible"])
    langs, files = check(opts)
    data = build_config(opts, langs, files, "model", "model", None).tasks[0].data
    assert data == {"type": "lowres", "langs": ["ee", "kab"], "sources": ["bible"]}
    examples = load_examples(data)
    bible = {(p.text, p.pivot) for p in read_lowres(split="train") if p.source == "bible"}
    assert examples and {e[:2] for e in examples} == bible
    assert all(not e[1].startswith("le ") for e in examples)  # no MAFAND (French) pair
    for bad, message in ((dict(sources=["news"]), "unknown low-resource source"), (dict(sources=[]), "unknown low-resource source"),
                         (dict(sources=["bible"], lowres=False, langs=["xx"]), "needs --lowres")):
        with pytest.raises(ValueError, match=message):
            check(options(tmp_path, "model", **{"langs": [], "lowres": True, "mix": 0.0, "sts": 0.0, **bad}))
    res = CliRunner().invoke(app, ["extend", "--lowres", "--routed", "--sources", "bible,bogus", "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--sources: unknown low-resource source(s) ['bogus']" in res.output


def test_a_started_student_begins_from_the_given_weights_beside_the_unchanged_teacher(lowres_shared, tmp_path):
    from xlingua.training.config import EvalConfig
    from xlingua.training.evaluate import DevEvaluator

    teacher = make_tiny_model_dir(tmp_path / "teacher", seed=0)
    start = make_tiny_model_dir(tmp_path / "start", seed=1)
    with pytest.raises(FileNotFoundError, match="not a model directory"):
        check(options(tmp_path, teacher, langs=["kab"], lowres=True, routed=True, mix=0.0, sts=0.0, start=str(tmp_path)))
    with pytest.raises(ValueError, match="takes no --new-pieces"):
        check(options(tmp_path, teacher, langs=["kab"], lowres=True, routed=True, mix=0.0, sts=0.0, start=str(start),
                      new_pieces=10))
    report = extend(options(tmp_path, teacher, langs=["kab"], lowres=True, routed=True, mix=0.0, sts=0.0,
                            start=str(start), max_steps=2, eval_every=2, checkpoint_every=2),
                    echo=lambda *_: None, show_progress=False)
    assert (report["start"], report["teacher"]) == (str(start), str(teacher))
    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    first = next(r["eval"] for r in records if r.get("step") == 0 and isinstance(r.get("eval"), dict) and "mean" in r["eval"])
    judge = DevEvaluator(EvalConfig(lowres_langs=["kab"], pivot_model=str(teacher)))
    # step 0 is the start model read against the teacher's pivots, not the teacher itself
    assert first["lowres_kab all"] == pytest.approx(judge(load_encoder(str(start)))["lowres_kab all"])
    assert first["lowres_kab all"] != pytest.approx(judge(load_encoder(str(teacher)))["lowres_kab all"])


def test_general_pairs_add_the_general_corpus_pairs_and_dev_slices_of_the_same_languages(lowres_shared, tmp_path):
    from tests.training.test_extend import write
    from xlingua.data.general import read_general

    general = lowres_shared.parent / "general"
    seed = sentences("a {a1} {n1} runs to the {a2} {n2}", "")
    write(general / "nllb-seed" / "kab-en.tsv.gz", [(shifted(en), en) for en, _ in seed])
    opts = options(tmp_path, "model", langs=[], lowres=True, routed=True, mix=0.0, sts=0.0, general_pairs=True)
    langs, files = check(opts)
    config = build_config(opts, langs, files, "student", "teacher", None)
    # kab alone has general-corpus pairs: its train split joins the task, its dev slice the dev choice
    assert config.tasks[0].data == [{"type": "lowres", "langs": ["ee", "kab"]}, {"type": "general", "langs": ["kab"]}]
    assert (config.eval.general_langs, config.eval.lowres_langs) == (["kab"], ["ee", "kab"])
    examples = {e[:2] for e in load_examples(config.tasks[0].data)}
    general_train = {(p.text, p.english) for p in read_general(["kab"])}
    general_dev = {(p.text, p.english) for p in read_general(["kab"], split="dev")}
    assert general_train <= examples and not general_dev & examples
    without = build_config(options(tmp_path, "model", langs=[], lowres=True, routed=True, mix=0.0, sts=0.0),
                           langs, files, "student", "teacher", None)
    assert without.tasks[0].data == {"type": "lowres", "langs": ["ee", "kab"]} and without.eval.general_langs == []
    assert not without.tasks[0].one_language
    one = build_config(options(tmp_path, "model", langs=[], lowres=True, routed=True, mix=0.0, sts=0.0,
                               one_language_batches=True), langs, files, "student", "teacher", None)
    assert one.tasks[0].one_language and one.tasks[0].temperature == without.tasks[0].temperature
    with pytest.raises(ValueError, match="--general-pairs .* needs --lowres"):
        check(options(tmp_path, "model", langs=["xx"], general_pairs=True))


def test_general_pairs_without_the_general_corpus_say_how_to_train_without_them(tmp_path, monkeypatch):
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "nothing"))
    toy_lowres(tmp_path / "nothing" / "corpora" / "lowres")
    with pytest.raises(FileNotFoundError, match="--general-pairs trains on the general corpus: .*leaving out "
                                                "--general-pairs trains without it"):
        check(options(tmp_path, "model", langs=[], lowres=True, routed=True, mix=0.0, sts=0.0, general_pairs=True))
