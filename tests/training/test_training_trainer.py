"""The trainer end to end on a tiny BERT: every objective trains, logs, plots and saves a
model that sentence-transformers loads; config and data errors are clear."""
import json

import numpy as np
import pytest
import torch

from xlingua.training.config import config_from_dict, load_config
from xlingua.data.examples import BatchSampler, load_examples, read_pairs
from xlingua.training.model import SentenceModel
from xlingua.training.trainer import Trainer


def base_config(model_dir, out, tasks, **kw):
    cfg = {"model": str(model_dir), "output_dir": str(out), "tasks": tasks, "max_steps": 4,
           "batch_size": 4, "max_seq_length": 16, "lr": 1e-3, "warmup_steps": 1, "log_every": 1,
           "seed": 3}
    cfg.update(kw)
    return config_from_dict(cfg)


def test_all_objectives_train_log_plot_and_save(tiny_model_dir, pairs_file, xnli_dir, tmp_path):
    text = tmp_path / "story.txt"
    text.write_text("The cat runs. The dog eats! A small house is red.\n\nThe car is blue. The cat sleeps. The dog runs.\n")
    tasks = [
        {"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)},
         "options": {"hard_negatives": 1, "margin": 0.1}},
        {"name": "nli", "objective": "nli", "data": {"type": "xnli", "langs": ["en", "de"], "data_dir": str(xnli_dir)},
         "options": {"hidden": 8}},
        {"name": "next", "objective": "response_ranking", "data": {"type": "ordered_text", "paths": [str(text)]},
         "options": {"hidden": 8}},
        {"name": "dueam", "objective": "dueam", "data": {"type": "dueam_weak", "pairs": ["en-de"], "data_dir": str(xnli_dir)}},
        {"name": "one", "objective": "onealigner", "data": {"type": "tsv", "path": str(pairs_file)}, "options": {"layer": 1}},
    ]
    cfg = base_config(tiny_model_dir, tmp_path / "run", tasks, max_steps=5, freeze=["word_embeddings"])
    trainer = Trainer(cfg)
    word_emb = trainer.model.model.embeddings.word_embeddings.weight.clone()
    head0 = trainer.tasks[1].objective.head[0].weight.clone()
    final = trainer.train(show_progress=False)
    records = [json.loads(l) for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    losses = [r for r in records if "loss" in r]
    assert [r["task"] for r in losses] == ["tr", "nli", "next", "dueam", "one"]  # cycled, one step each
    assert all(np.isfinite(r["loss"]) for r in losses)
    assert (tmp_path / "run" / "training.png").stat().st_size > 0
    assert len(json.loads((tmp_path / "run" / "hard_negatives.tr.json").read_text())) == 16
    assert torch.equal(trainer.model.model.embeddings.word_embeddings.weight, word_emb)  # frozen
    assert not torch.equal(trainer.tasks[1].objective.head[0].weight, head0)  # NLI head trained

    from sentence_transformers import SentenceTransformer

    texts = ["the red cat", "das blaue auto ist klein"]
    ours = SentenceModel.load(str(final)).encode(texts).numpy()
    theirs = SentenceTransformer(str(final), device="cpu").encode(texts)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_prefix_round_trips_and_is_used_by_sentence_transformers(tiny_model_dir, tmp_path):
    model = SentenceModel.load(str(tiny_model_dir))
    model.prefix = "query: "
    out = model(["the cat"], token_layer=1)
    # [CLS] q ##u ##e ##r ##y : the cat [SEP]: the mask keeps the text tokens, prefix included
    n = len(model.encoder.tok.content_ids(["the cat"])[0])
    assert n == 8 and out["token_mask"].tolist() == [[0] + [1] * n + [0]]
    model.save(tmp_path / "m")
    again = SentenceModel.load(str(tmp_path / "m"))
    assert again.prefix == "query: "
    from sentence_transformers import SentenceTransformer

    theirs = SentenceTransformer(str(tmp_path / "m"), device="cpu").encode(["the cat"])
    np.testing.assert_allclose(again.encode(["the cat"]).numpy(), theirs, atol=1e-5)
    model.prefix = ""
    assert not np.allclose(model.encode(["the cat"]).numpy(), theirs, atol=1e-3)


def test_proportional_sampling_and_early_stopping(tiny_model_dir, pairs_file, tmp_path, monkeypatch):
    tasks = [{"name": "big", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)}, "weight": 9},
             {"name": "small", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file), "limit": 4}}]
    cfg = base_config(tiny_model_dir, tmp_path / "run", tasks, sampling="proportional", max_steps=8)
    trainer = Trainer(cfg)
    picks = [trainer.pick_task(s) for s in range(400)]
    # weight x size: 9 * 16 vs 1 * 4 -> 97.3 % big
    assert 0.93 < picks.count(0) / 400 < 1.0
    assert picks == [trainer.pick_task(s) for s in range(400)]  # a function of the step only

    # early stopping: a dev score that never improves after the first evaluation

    scores = iter([50.0, 40.0, 40.0, 40.0, 40.0])

    class FakeEval:
        main_score = "mean"

        def __call__(self, model):
            return {"mean": next(scores)}

    cfg = base_config(tiny_model_dir, tmp_path / "run2", tasks, max_steps=20, eval_every=2, early_stopping_patience=2)
    t = Trainer(cfg)
    t.evaluators = [FakeEval()]
    t.train(show_progress=False)
    assert t.step == 4 and t.best == 50.0
    assert (tmp_path / "run2" / "best" / "modules.json").exists()


def test_config_errors_name_file_and_key(tmp_path, tiny_model_dir):
    path = tmp_path / "bad.yaml"
    path.write_text(f"model: {tiny_model_dir}\noutput_dir: x\nlearning_rate: 1\ntasks: []\n")
    with pytest.raises(ValueError, match=r"bad\.yaml.*learning_rate"):
        load_config(path)
    path.write_text("model: m\noutput_dir: x\ntasks:\n  - {name: a, objective: magic, data: {type: tsv, path: p}}\n")
    with pytest.raises(ValueError, match="unknown objective 'magic'"):
        load_config(path)
    path.write_text("model: m\noutput_dir: x\nlr: 2e-5\ntasks:\n  - {name: a, objective: nli, data: {type: tsv, path: p}}\n")
    assert load_config(path).lr == pytest.approx(2e-5)


def test_data_readers(tmp_path, xnli_dir):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nonly one column\n")
    with pytest.raises(ValueError, match=r"bad\.tsv:2"):
        read_pairs(bad)
    weak = load_examples({"type": "dueam_weak", "pairs": ["en-de", "de-en"], "data_dir": str(xnli_dir)})
    en = load_examples({"type": "xnli", "langs": ["en"], "data_dir": str(xnli_dir)})
    de = load_examples({"type": "xnli", "langs": ["de"], "data_dir": str(xnli_dir)})
    assert weak[:6] == [(e[0], d[1]) for e, d in zip(en, de)]  # premise en, hypothesis de, no label
    assert weak[6:] == [(d[0], e[1]) for e, d in zip(en, de)]
    unsup = load_examples({"type": "dueam_unsupervised", "langs": ["en", "de"], "data_dir": str(xnli_dir)})
    assert all(p in [(e[0], e[1]) for e in en + de] for p in unsup) and len(unsup) == 6
    with pytest.raises(ValueError, match="unknown key"):
        load_examples({"type": "tsv", "path": str(bad), "colums": 2})


def test_batch_sampler_epochs_and_state():
    s = BatchSampler(10, seed=1)
    first = [s.next(4).tolist() for _ in range(2)]
    assert len(set(first[0] + first[1])) == 8  # no repeats within an epoch
    state = s.state_dict()
    rest = [s.next(4).tolist() for _ in range(3)]  # the 2-example tail is skipped: new epoch
    assert state == {"epoch": 0, "pos": 8} and s.epoch == 2
    assert rest[0] + rest[1] != first[0] + first[1]  # a fresh order each epoch
    t = BatchSampler(10, seed=1)
    t.load_state_dict(state)
    assert [t.next(4).tolist() for _ in range(3)] == rest


def test_model_spec_goes_through_the_one_encoder_parser(tiny_model_dir):
    """SentenceModel.load reads specs with encoders.load_encoder; untrainable kinds say so."""
    assert SentenceModel.load(str(tiny_model_dir)).dim == 32
    with pytest.raises(ValueError, match="loads as TransformerBF16Encoder, which cannot be trained"):
        SentenceModel.load(f"bf16:{tiny_model_dir}")


def test_resume_refuses_a_changed_config_unless_overridden(tiny_model_dir, pairs_file, tmp_path, capsys):
    from xlingua.data.text import InputError

    tasks = [{"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)}}]
    out = tmp_path / "run"
    Trainer(base_config(tiny_model_dir, out, tasks, max_steps=2, checkpoint_every=2)).train(show_progress=False)
    changed = base_config(tiny_model_dir, out, tasks, max_steps=4, checkpoint_every=2, lr=5e-4)
    with pytest.raises(InputError, match=r"checkpoint\.pt: the settings differ .*lr: 0\.001 -> 0\.0005; "
                                         r"max_steps: 2 -> 4\).*--override lr,max_steps"):
        Trainer(changed).train(resume=True, show_progress=False)
    with pytest.raises(InputError, match=r"seed cannot change when resuming"):
        Trainer(base_config(tiny_model_dir, out, tasks, max_steps=2, checkpoint_every=2, seed=4)).train(
            resume=True, show_progress=False, override=["seed"])
    trainer = Trainer(changed)
    assert trainer.load_checkpoint(override=["lr", "max_steps"]) and trainer.step == 2
    # the new lr applies from here on: warm-up is over, linear decay over the new max_steps
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(5e-4 * (1 - 1 / 3))
    trainer.train(show_progress=False)
    assert trainer.step == 4
    capsys.readouterr()
    Trainer(base_config(tiny_model_dir, tmp_path / "fresh", tasks, max_steps=1)).train(resume=True, show_progress=False)
    assert f"no checkpoint in {tmp_path / 'fresh'} to resume from: starting at step 0" in capsys.readouterr().err


def test_bad_bytes_in_training_data_name_file_and_line(tmp_path):
    from xlingua.data.text import InputError

    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"a\tb\nc \xff\td\n")
    with pytest.raises(InputError, match=r"bad\.tsv:2: invalid UTF-8 at byte 2 of the line$"):
        read_pairs(bad)
    bad.write_bytes(b"a\tb\nc\x00\td\n")
    with pytest.raises(InputError, match=r"bad\.tsv:2: NUL byte"):
        read_pairs(bad)
    yaml = tmp_path / "bad.yaml"
    yaml.write_bytes(b"model: m\noutput_dir: x # caf\xe9\n")
    with pytest.raises(InputError, match=r"bad\.yaml:2: invalid UTF-8 at byte 19 of the line"):
        load_config(yaml)


def test_resume_of_a_checkpoint_that_holds_no_config_goes_on(tiny_model_dir, pairs_file, tmp_path):
    """Checkpoints written before they held their config (no "config" key) still resume from
    the command line, with a one-line note, to the weights of an unbroken run."""
    from safetensors.torch import load_file
    from typer.testing import CliRunner

    from xlingua.cli import app

    tasks = [{"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)}}]
    kw = {"max_steps": 4, "checkpoint_every": 2}
    whole = Trainer(base_config(tiny_model_dir, tmp_path / "whole", tasks, **kw))
    whole.train(show_progress=False)

    class Kill(Exception):
        pass

    def kill_at_3(step):
        if step == 3:
            raise Kill

    out = tmp_path / "old"
    with pytest.raises(Kill):
        Trainer(base_config(tiny_model_dir, out, tasks, **kw)).train(on_step=kill_at_3, show_progress=False)
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    del state["config"]  # the older format: everything else is the same
    torch.save(state, out / "checkpoint.pt")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(json.dumps(base_config(tiny_model_dir, tmp_path / "elsewhere", tasks, **kw).to_dict()))

    # overriding a setting the old checkpoint never recorded is refused, saying why
    refused = CliRunner().invoke(app, ["train", str(recipe), "-o", str(out), "--resume", "--override", "model,lr"])
    assert refused.exit_code == 2
    assert f"{out / 'checkpoint.pt'}: predates config checks, so it did not record model and they cannot be " \
        "overridden" in refused.stderr

    result = CliRunner().invoke(app, ["train", str(recipe), "-o", str(out), "--resume"])
    assert result.exit_code == 0, result.output
    assert f"note: {out / 'checkpoint.pt'} predates config checks: resuming without comparing settings" in result.stderr
    assert "no checkpoint" not in result.stderr
    ours, theirs = load_file(out / "final" / "model.safetensors"), load_file(tmp_path / "whole" / "final" / "model.safetensors")
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
    # the next checkpoint holds the config, so the run after this one is checked
    assert torch.load(out / "checkpoint.pt", weights_only=False)["config"]["lr"] == 1e-3
