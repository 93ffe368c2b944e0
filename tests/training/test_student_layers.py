"""A student of some of its start model's layers (`layers:` of the encoder recipe): it keeps
those layers' weights, renumbered, trains against the full start model as teacher, and records
the layers it came from; bad lists are refused on one line naming the key."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from tests.training.conftest import make_tiny_model_dir
from xlingua.cli import app
from xlingua.training.config import config_from_dict, load_config
from xlingua.training.model import SentenceModel
from xlingua.training.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]
LAYER = re.compile(r"^encoder\.layer\.(\d+)\.(.+)$")


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    """A tiny BERT of 4 layers, the start model of the students here."""
    return make_tiny_model_dir(tmp_path_factory.mktemp("four"), layers=4)


def student_config(model, out, pairs_file, **kw):
    tasks = [{"name": "kd", "objective": "laser3", "data": {"type": "tsv", "path": str(pairs_file)},
              "options": {"teacher": str(model), "teacher_cache": str(Path(out).parent / "teacher_cache")}}]
    cfg = {"model": str(model), "output_dir": str(out), "tasks": tasks, "layers": [0, 2], "max_steps": 3,
           "batch_size": 4, "max_seq_length": 16, "lr": 1e-3, "warmup_steps": 1, "log_every": 1, "seed": 3,
           "freeze": ["word_embeddings"]}
    return config_from_dict({**cfg, **kw})


def as_student(start: dict, layers: list[int]) -> dict:
    """The start model's tensors a student of `layers` keeps, under the student's names."""
    out = {}
    for name, t in start.items():
        m = LAYER.match(name)
        if m is None:
            out[name] = t
        elif int(m[1]) in layers:
            out[f"encoder.layer.{layers.index(int(m[1]))}.{m[2]}"] = t
    return out


def test_student_keeps_the_chosen_layers_renumbered(four, pairs_file, tmp_path):
    start = load_file(four / "model.safetensors")
    trainer = Trainer(student_config(four, tmp_path / "run", pairs_file))
    model = trainer.model.model
    assert len(model.encoder.layer) == 2 and model.config.num_hidden_layers == 2
    assert [b.attention.self.layer_idx for b in model.encoder.layer] == [0, 1]
    state, want = model.state_dict(), as_student(start, [0, 2])
    assert sorted(state) == sorted(want)  # layers 1 and 3 are gone
    assert all(torch.equal(state[k], want[k]) for k in want)
    assert torch.equal(state["encoder.layer.1.output.dense.weight"], start["encoder.layer.2.output.dense.weight"])
    # the teacher is the full start model, all four layers
    task = trainer.tasks[0]
    english = sorted(task._row, key=task._row.get)
    from xlingua.encoders.loading import load_encoder

    np.testing.assert_allclose(task._vectors.numpy(), load_encoder(str(four)).encode(english), atol=1e-6)
    assert not np.allclose(task._vectors.numpy(), trainer.model.encode(english).numpy(), atol=1e-3)

    final = trainer.train(show_progress=False)
    saved = load_file(final / "model.safetensors")
    assert {LAYER.match(k)[1] for k in saved if LAYER.match(k)} == {"0", "1"}
    assert json.loads((final / "config.json").read_text())["num_hidden_layers"] == 2
    assert json.loads((final / "xlingua.json").read_text())["layers_from"] == [0, 2]
    assert torch.equal(saved["embeddings.word_embeddings.weight"], start["embeddings.word_embeddings.weight"])
    assert not torch.equal(saved["encoder.layer.1.output.dense.weight"], start["encoder.layer.2.output.dense.weight"])
    first = json.loads((tmp_path / "run" / "log.jsonl").read_text().splitlines()[0])
    assert first["layers_from"] == [0, 2] and first["config"]["layers"] == [0, 2]

    # trained further, a student keeps its record: a student of it counts from the start model
    again = SentenceModel.load(str(final))
    assert again.layers_from == [0, 2]
    again.keep_layers([1])
    assert again.layers_from == [2]
    assert torch.equal(again.model.encoder.layer[0].output.dense.weight, saved["encoder.layer.1.output.dense.weight"])


def test_a_student_with_its_own_targets_trains_and_caches_the_teachers_vectors_of_its_translations(
        four, pairs_file, tmp_path):
    cfg = student_config(four, tmp_path / "run", pairs_file)
    cfg.tasks[0].options["target"] = "own"
    trainer = Trainer(cfg)
    trainer.train(show_progress=False)
    from xlingua.encoders.cache import EmbeddingCache
    from xlingua.encoders.loading import load_encoder

    teacher = load_encoder(str(four))
    translations = sorted({e[0] for e in trainer.tasks[0].examples})
    cached = EmbeddingCache(teacher.fingerprint(), tmp_path / "teacher_cache").get(translations)
    # three steps of four pairs: the translations the batches held, embedded by the full teacher
    assert 1 <= len(cached) <= 12 and set(cached) <= set(translations)
    texts = sorted(cached)
    np.testing.assert_allclose(np.stack([cached[t] for t in texts]), teacher.encode(texts), atol=1e-6)


@pytest.mark.parametrize("value, said", [
    ("[]", "layers must be a non-empty list of layer indices of the start model, e.g. [0, 4, 8, 11]; got []"),
    ("4", "layers must be a non-empty list of layer indices of the start model, e.g. [0, 4, 8, 11]; got 4"),
    ("[0, 2, 2]", "layers lists layer 2 more than once ([0, 2, 2]); each kept layer appears once"),
    ("[2, 0]", "layers must be in increasing order, got [2, 0] (the kept layers run in the start model's "
               "order: [0, 2])"),
    ("[0, 1.5]", "layers must hold layer indices (whole numbers from 0), got [0, 1.5]"),
    ("[-1, 2]", "layers must hold layer indices (whole numbers from 0), got [-1, 2]"),
])
def test_bad_layer_lists_are_refused_naming_the_file_and_key(value, said, tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_text(f"model: m\noutput_dir: x\nlayers: {value}\n"
                    "tasks:\n  - {name: a, objective: laser3, data: {type: tsv, path: p}}\n")
    with pytest.raises(ValueError) as e:
        load_config(path)
    assert str(e.value) == f"{path}: {said}"


def test_a_layer_past_the_start_model_is_refused_on_one_line(four, pairs_file, tmp_path):
    with pytest.raises(ValueError, match=rf"^model {re.escape(str(four))}: layers: index 4 is out of range; "
                                         r"the start model has 4 layers \(0\.\.3\)$"):
        Trainer(student_config(four, tmp_path / "run", pairs_file, layers=[0, 4]))
    recipe = tmp_path / "r.yaml"
    recipe.write_text(json.dumps(student_config(four, tmp_path / "run", pairs_file, layers=[1, 7]).to_dict()))
    result = CliRunner().invoke(app, ["train", str(recipe)])
    assert result.exit_code == 2
    assert result.stderr == (f"error: model {four}: layers: index 7 is out of range; the start model has 4 "
                             "layers (0..3)\n")
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def test_precision_auto_is_bf16_where_native_else_fp32(monkeypatch):
    from xlingua.encoders import cpu

    data = {"model": "m", "output_dir": "x", "precision": "auto",
            "tasks": [{"name": "a", "objective": "laser3", "data": {"type": "tsv", "path": "p"}}]}
    monkeypatch.setattr(cpu, "native_bf16", lambda: True)
    assert config_from_dict(data).precision == "bf16"
    monkeypatch.setattr(cpu, "native_bf16", lambda: False)
    assert config_from_dict(data).precision == "fp32"  # recorded as chosen: a resume elsewhere sees it


def test_the_mini_recipe_is_a_student_of_the_default(monkeypatch):
    from xlingua.encoders import cpu

    monkeypatch.setattr(cpu, "native_bf16", lambda: False)
    cfg = load_config(ROOT / "configs" / "train_mini.yaml")
    assert cfg.model == "xlingua-small-v2:torch" and cfg.layers == [0, 6, 11] and cfg.precision == "fp32"
    assert (cfg.max_steps, cfg.batch_size, cfg.checkpoint_every) == (4000, 64, 100)
    assert cfg.freeze == ["word_embeddings"] and cfg.eval.general_langs
    [task] = cfg.tasks
    assert task.objective == "laser3" and task.data == {"type": "general"}
    assert task.options["teacher"] == "xlingua-small-v2" and task.options["metric"] == "mse"
    assert task.options["english_weight"] == 1.0 and task.options["ranking_weight"] > 0


def test_a_bf16_run_embeds_its_dev_sets_in_bf16_and_an_fp32_run_in_fp32(tiny_model_dir):
    model = SentenceModel.load(str(tiny_model_dir), max_seq_length=16)
    texts = ["the red cat", "der große hund", "a small house"]
    fp32 = model.encode(texts).numpy()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        under_autocast = model.encoder.encode(texts)
    model.precision = "bf16"
    bf16 = model.encode(texts)
    assert bf16.dtype == torch.float32 and np.array_equal(bf16.numpy(), under_autocast)
    assert not np.array_equal(bf16.numpy(), fp32)
    cosine = (bf16.numpy() * fp32).sum(1) / np.linalg.norm(bf16.numpy(), axis=1) / np.linalg.norm(fp32, axis=1)
    assert cosine.min() > 0.99
