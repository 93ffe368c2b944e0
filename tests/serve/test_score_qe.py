"""/score with qe: the QE model's column and what scored it; refused for empty sides and for a
model the QE heads were not trained on."""
from __future__ import annotations

import numpy as np

from tests.qe.test_qe_train import PAIRS, ToyEncoder, write_toy_mlqe
from tests.serve.conftest import request
from xlingua.qe.train import QEConfig, train
from xlingua.serve import ServeConfig, create_app
from xlingua.similarity.qe_head import QEModel


def test_score_with_qe(tmp_path, tiny_encoder):
    write_toy_mlqe(tmp_path, ToyEncoder(), n=(40, 20))
    train(QEConfig(pairs=PAIRS, held_out=(), candidates=("ridge+cos+len",)), tmp_path / "run",
          encoder=tiny_encoder, data_dir=tmp_path, log=lambda line: None)
    app = create_app(tiny_encoder, ServeConfig("tiny", qe_model=str(tmp_path / "run")))
    src, tgt = ["the red cat", "a dog"], ["die rote katze", "der hund"]
    r = request(app, "POST", "/score", json={"src": src, "tgt": tgt, "qe": True, "src_lang": "ro",
                                             "tgt_lang": "en"})
    assert r.status_code == 200, r.text
    body = r.json()
    model = QEModel.load(tmp_path / "run" / "model")
    want = model.predict(tiny_encoder.encode(src), tiny_encoder.encode(tgt), src, tgt, "ro-en")
    np.testing.assert_allclose(body["qe"], want, atol=1e-5)
    assert body["qe_route"].startswith("qe: ro-en scored by the head trained on all the trained pairs")
    assert "qe" not in request(app, "POST", "/score", json={"src": src, "tgt": tgt}).json()

    r = request(app, "POST", "/score", json={"src": ["ok", "fine"], "tgt": ["gut", " "], "qe": True})
    assert r.status_code == 400 and r.json()["error"]["param"] == "tgt[1]"

    other = create_app(tiny_encoder, ServeConfig("tiny", qe_model=str(tmp_path / "nowhere")))
    r = request(other, "POST", "/score", json={"src": src, "tgt": tgt, "qe": True})
    assert r.status_code == 422 and r.json()["error"]["param"] == "qe"
    assert "qe is not available for model 'tiny'" in r.json()["error"]["message"]
