"""WiSE-FT weight mixing: the mixed tensors on a hand-computed case, the ends of the range, and
mismatched models refused naming the file."""
from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file, save_file

from xlingua.training.mix import mix_weights

WEIGHTS = "model.safetensors"


def _model(path, **tensors):
    path.mkdir()
    save_file({k: torch.tensor(v) for k, v in tensors.items()}, str(path / WEIGHTS))
    (path / "config.json").write_text('{"trained": true}')
    return path


def test_mix_is_base_plus_alpha_times_the_change(tmp_path):
    trained = _model(tmp_path / "trained", w=[[1.0, 3.0]], b=[10.0])
    base = _model(tmp_path / "base", w=[[0.0, 1.0]], b=[2.0])
    out = mix_weights(trained, base, 0.25, tmp_path / "mix")
    got = load_file(str(out / WEIGHTS))
    assert got["w"].tolist() == [[0.25, 1.5]] and got["b"].tolist() == [4.0]
    assert (out / "config.json").read_text() == '{"trained": true}'  # the trained model's other files
    assert load_file(str(mix_weights(trained, base, 1.0, tmp_path / "one") / WEIGHTS))["b"].tolist() == [10.0]
    assert load_file(str(mix_weights(trained, base, 0.0, tmp_path / "zero") / WEIGHTS))["b"].tolist() == [2.0]


def test_mismatched_models_are_refused(tmp_path):
    trained = _model(tmp_path / "trained", w=[[1.0, 3.0]])
    with pytest.raises(ValueError, match=r"base/model.safetensors: w is \(1, 2\), \(2,\)|w is \(1, 2\), \(2,\) in"):
        mix_weights(trained, _model(tmp_path / "base", w=[1.0, 2.0]), 0.5, tmp_path / "mix")
    with pytest.raises(ValueError, match=r"lacks 1 tensor\(s\) of .*other/model.safetensors \(e.g. \['v'\]\)"):
        mix_weights(trained, _model(tmp_path / "other", w=[[1.0, 3.0]], v=[1.0]), 0.5, tmp_path / "mix")
    # a tensor only the trained model has (a pooler it added) is kept as trained
    pooled = _model(tmp_path / "pooled", w=[[1.0, 3.0]], pooler=[4.0])
    got = load_file(str(mix_weights(pooled, _model(tmp_path / "b2", w=[[0.0, 1.0]]), 0.5, tmp_path / "p") / WEIGHTS))
    assert got["pooler"].tolist() == [4.0] and got["w"].tolist() == [[0.5, 2.0]]
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
        mix_weights(trained, trained, 1.5, tmp_path / "mix")
    assert not (tmp_path / "mix").exists()
