"""A LASER student on a static encoder's pieces (`init: static:DIR`): the pieces map to the
student's ids, its embedding starts from the static vectors, and the run trains and loads."""
import json

import numpy as np
import pytest
import torch
from safetensors.numpy import save_file

from xlingua import load_encoder
from xlingua.encoders.laser_vocab import UNK
from xlingua.encoders.static import StaticPieces
from xlingua.laser.trainer import start_embedding, train_laser
from tests.laser.test_laser_distill import ToyTeacher, _cfg, toy_shared  # noqa: F401  (fixture)


@pytest.fixture
def static_dir(tmp_path):
    """A static encoder on a word-level tokenizer ("local"): rows for "cat", "dog", "rot", "chat"."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    root = tmp_path / "static"
    root.mkdir()
    words = ["[PAD]", "[UNK]", "cat", "dog", "rot", "chat", "house"]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]").save_pretrained(str(root))
    vectors = np.arange(4 * 16, dtype=np.float32).reshape(4, 16) / 10 - 3
    save_file({"vectors": vectors, "token_ids": np.array([2, 3, 4, 5], dtype=np.int32)}, str(root / "vectors.safetensors"))
    (root / "static.json").write_text(json.dumps({"tokenizer": "local"}))
    return root


def test_pieces_are_static_rows_after_the_four_specials(static_dir):
    pieces = StaticPieces(static_dir)
    assert pieces.get_piece_size() == 8
    # cat -> row 0 -> id 4; rot -> row 2 -> id 6; "house" and "Hund" have no row -> UNK
    assert pieces.encode(["cat rot", "house Hund"]) == [[4, 6], [UNK, UNK]]


def test_embedding_starts_from_the_static_vectors(static_dir):
    embed = torch.nn.Embedding(8, 16)
    before = embed.weight[:4].clone()
    start_embedding(embed, static_dir)
    vectors = np.arange(4 * 16, dtype=np.float32).reshape(4, 16) / 10 - 3
    scale = 4.0 / np.linalg.norm(vectors, axis=1).mean()  # sqrt(16) / mean row norm
    assert np.allclose(embed.weight[4].detach().numpy(), vectors[0] * scale, atol=1e-5)  # "cat"
    assert torch.equal(embed.weight[:4], before)
    with pytest.raises(ValueError, match="set embed_dim=16"):
        start_embedding(torch.nn.Embedding(8, 12), static_dir)


def test_student_on_static_pieces_trains_and_loads(static_dir, tmp_path, toy_shared):  # noqa: F811
    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    out = tmp_path / "run"
    log = train_laser(_cfg(init=f"static:{static_dir}", max_steps=40), out, **kw)
    assert log["history"][-1]["loss"] < log["history"][0]["loss"]
    assert (out / "pieces.safetensors").exists() and not (out / "spm.model").exists()
    enc = load_encoder(f"laser:{out}")
    assert enc.sp.encode(["chat dog"]) == [[7, 5]] and enc.encode(["chat dog"]).shape == (1, 12)


def test_init_names_the_shipped_static_encoder_or_a_directory(static_dir, tmp_path):
    from xlingua.encoders.model_packages import installed
    from xlingua.laser.config import LaserTrainConfig
    from xlingua.laser.prepare import static_init_dir

    assert static_init_dir(f"static:{static_dir}") == static_dir
    assert static_init_dir("static-small") == installed()["static-small"]
    with pytest.raises(ValueError, match="init must be empty \\(random\\), static:DIR or one of static-small, got 'bundled'"):
        LaserTrainConfig(objective="distill", init="bundled")
    with pytest.raises(ValueError, match="is for the distill objective"):
        LaserTrainConfig(objective="translation", init="static-small")


def test_frozen_embedding_keeps_the_static_vectors_while_the_bilstm_learns(static_dir, tmp_path, toy_shared):  # noqa: F811
    from xlingua.laser.config import LaserTrainConfig

    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    out = tmp_path / "run"
    log = train_laser(_cfg(init=f"static:{static_dir}", freeze_embedding=True, max_steps=40), out, **kw)
    assert log["history"][-1]["loss"] < log["history"][0]["loss"]
    state = torch.load(out / "encoder.pt", map_location="cpu", weights_only=False)
    weight = state["state"]["embed.weight"]
    start = torch.nn.Embedding(weight.shape[0], weight.shape[1])
    start_embedding(start, static_dir)
    assert torch.equal(weight[4:], start.weight[4:].detach())  # the static rows, as they started
    with pytest.raises(ValueError, match="freeze_embedding keeps a static encoder's vectors: it needs init"):
        LaserTrainConfig(objective="distill", freeze_embedding=True)
