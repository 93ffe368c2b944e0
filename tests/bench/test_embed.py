"""`xlingua bench embed` on a tiny model: a bf16 path timed against its own fp32 reference."""
import json

import pytest

from tests.encoders.test_hf_encoder import TEXTS, tiny_dir  # noqa: F401  (fixture)
from xlingua.bench import embed


def test_bench_times_bf16_dir_against_its_fp32_reference(tiny_dir, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(embed, "sample_sentences", lambda n, seed: (TEXTS * 4)[:n])
    report = embed.run_bench(n=12, rounds=3, paths=[f"bf16:{tiny_dir}"], out_dir=tmp_path,
                             reference=str(tiny_dir), peak_seconds=0.05)
    rows = {r["path"]: r for r in report["rows"]}
    assert list(rows) == [str(tiny_dir), f"bf16:{tiny_dir}"]
    assert rows[str(tiny_dir)]["cosine_min"] == 1.0
    assert 0.99 < rows[f"bf16:{tiny_dir}"]["cosine_min"] < 1.0
    assert report["command"] == f"xlingua bench embed --n 12 --rounds 3 --seed 0 --path bf16:{tiny_dir} --reference {tiny_dir}"
    assert report["sentences_done"] == 12 and report["rounds_done"] == 3
    assert json.loads((tmp_path / "embed_bench.json").read_text())["reference"] == str(tiny_dir)


def test_fraction_of_peak_from_counted_flops(tiny_dir, tmp_path, monkeypatch):  # noqa: F811
    from xlingua.bench.flops import Shapes, total_flops
    from xlingua.bench.peak import available_dtypes
    from xlingua.encoders.loading import load_encoder

    texts = (TEXTS * 4)[:12]
    monkeypatch.setattr(embed, "sample_sentences", lambda n, seed: texts)
    report = embed.run_bench(n=12, rounds=3, paths=[f"bf16:{tiny_dir}"], out_dir=tmp_path,
                             reference=str(tiny_dir), peak_seconds=0.05)
    peak = report["peak_gflop_per_s"]
    assert list(peak) == [d for d in ("fp32", "bf16") if d in available_dtypes()]
    fp32, bf16 = (next(r for r in report["rows"] if r["path"] == p) for p in (str(tiny_dir), f"bf16:{tiny_dir}"))
    enc = load_encoder(str(tiny_dir))
    want = total_flops(Shapes.of(enc.model.config), enc.lengths(texts), enc.max_length)
    assert fp32["dtype"] == "fp32" and bf16["dtype"] == "bf16" and fp32["flops"] == bf16["flops"] == want
    # three significant digits each
    assert fp32["peak_fraction"] == pytest.approx(fp32["gflop_per_s"] / peak["fp32"], rel=2e-2)
    assert (bf16["peak_fraction"] is None) == ("bf16" not in peak)
    assert "of fp32 |" in embed.markdown(report)


@pytest.mark.parametrize("spec", ["laser:student", "use", "static:run/model", "static-small"])
def test_another_model_of_the_same_size_gets_no_cosine(spec, tiny_dir, tmp_path, monkeypatch):  # noqa: F811
    import numpy as np

    from xlingua.encoders.base import Encoder
    from xlingua.encoders.loading import load_encoder

    reference = load_encoder(str(tiny_dir))

    class SameSize(Encoder):  # e.g. a LASER student distilled to the reference's width
        name, dim, normalized = "laser:student", reference.dim, False

        def _encode_batch(self, texts, lang):
            return np.random.default_rng(len(texts)).standard_normal((len(texts), self.dim))

        def fingerprint(self):
            return "student"

    real_load = embed._load
    monkeypatch.setattr(embed, "_load", lambda s: SameSize() if s == spec else real_load(s))
    monkeypatch.setattr(embed, "sample_sentences", lambda n, seed: (TEXTS * 4)[:n])
    report = embed.run_bench(n=8, rounds=2, paths=[spec], out_dir=tmp_path, reference=str(tiny_dir),
                             peak_seconds=0.05)
    rows = {r["path"]: r for r in report["rows"]}
    assert rows[spec]["cosine_mean"] is None and rows[spec]["sentences_per_s"] > 0
    assert rows[spec]["dtype"] is None and rows[spec]["peak_fraction"] is None  # not a BERT-style model
    assert rows[str(tiny_dir)]["cosine_min"] == 1.0


def test_sentence_transformers_peer_loads_the_model_that_embeds_the_defaults_unrouted_text():
    # a routed default's own directory holds a student's weights; text without a language, which
    # the benchmark embeds, goes to the route's innermost default, and so must the peer
    import numpy as np

    from xlingua.encoders.loading import load_encoder

    texts = ["The cat sits on the mat.", "Die Katze sitzt auf der Matte.", "猫はマットの上に座っている。"]
    ours = load_encoder("bundled:torch").encode(texts)
    peer = np.asarray(embed._STEncoder().encode(texts))
    peer /= np.linalg.norm(peer, axis=1, keepdims=True)
    assert (ours * peer).sum(axis=1).min() > 0.999
