"""`xlingua qe train` on toy MLQE-PE files: every candidate fitted and compared on dev, the best
kept, each pair held out in turn; `xlingua score --qe` with the trained model, its routes, its
one-line errors; `qe ship` checksums and probe scores, and a corrupted copy refused."""
from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from xlingua.cli import app
from xlingua.qe.train import CANDIDATES, QEConfig, train
from xlingua.similarity.qe_head import ANY, QEModel

PAIRS = ("en-de", "ro-en", "si-en")
HEADER = "index\toriginal\ttranslation\tscores\tmean\tz_scores\tz_mean\tmodel_scores"


class ToyEncoder:
    """Each text's vector was drawn when the toy data was made: a translation's vector is its
    source's plus noise that grows as its gold score falls."""
    name = "toy"
    dim = 16

    def __init__(self):
        self.vectors: dict[str, np.ndarray] = {}

    def encode(self, texts, lang=None, **_):
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)

    def fingerprint(self):
        return "toy-encoder"


def write_toy_mlqe(root, encoder: ToyEncoder, n=(120, 60), seed=0):
    rng = np.random.default_rng(seed)
    for pair in PAIRS:
        src, tgt = pair.split("-")
        (root / "mlqe" / pair).mkdir(parents=True)
        for split, rows in zip(("train", "dev"), n):
            lines = [HEADER]
            for i in range(rows):
                z = float(rng.normal())
                s, t = f"{pair} {split} source {i}", f"{pair} {split} translation {i}"
                encoder.vectors[s] = rng.normal(size=16)
                encoder.vectors[t] = encoder.vectors[s] + rng.normal(scale=np.exp(-z), size=16)
                lines.append(f"{i}\t{s}\t{t}\t[50]\t50\t[{z}]\t{z}\t-0.5")
            (root / "mlqe" / pair / f"{split}.{src}{tgt}.df.short.tsv").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("qe")
    enc = ToyEncoder()
    write_toy_mlqe(root, enc)
    config = QEConfig(pairs=PAIRS, held_out=("ro-en", "si-en"),
                      candidates=("per-pair-ridge", "ridge+cos+len", "per-pair-ridge+cos+len"))
    report = train(config, root / "run", encoder=enc, data_dir=root, log=lambda line: None)
    return root, enc, report


def test_every_candidate_is_compared_on_dev_and_the_best_is_kept(trained):
    root, enc, report = trained
    assert report["train_pairs"] == 3 * 120 and report["dev_pairs"] == 3 * 60
    names = ["cosine", "per-pair-ridge", "ridge+cos+len", "per-pair-ridge+cos+len"]
    assert list(report["dev"]) == names
    for r in report["dev"].values():
        assert r["mean"] == pytest.approx(np.mean([r[p] for p in PAIRS]))
    best = max(names[1:], key=lambda n: report["dev"][n]["mean"])
    assert report["chosen"] == best
    # the toy's gold follows the distance of the two vectors: the supervised heads find it
    assert report["dev"][best]["mean"] > 0.5
    model = QEModel.load(root / "run" / "model")
    per_pair = CANDIDATES[best][0]
    assert set(model.heads) == ({*PAIRS, ANY} if per_pair else {ANY})
    assert model.fingerprint == "toy-encoder" and model.info["pairs"] == list(PAIRS)
    md = (root / "run" / "report.md").read_text()
    assert f"| {best} (chosen) |" in md and "| held-out pair (dev) |" in md


def test_each_held_out_pair_is_scored_by_a_head_that_never_saw_it(trained):
    root, enc, report = trained
    assert list(report["held_out"]) == ["ro-en", "si-en"]
    means = report["held_out_mean"]
    assert means["head"] == pytest.approx(np.mean([h["head"] for h in report["held_out"].values()]))
    assert report["unseen"] == ("head" if means["head"] >= means["cosine"] else "cosine")
    assert QEModel.load(root / "run" / "model").unseen == report["unseen"]


def test_unknown_candidates_and_held_out_pairs_are_refused():
    with pytest.raises(ValueError, match="unknown candidate 'svm'"):
        QEConfig(candidates=("svm",))
    with pytest.raises(ValueError, match="held_out pair 'fr-en' is not among pairs"):
        QEConfig(pairs=("en-de",), held_out=("fr-en",))


@pytest.fixture(scope="module")
def tiny_qe(tmp_path_factory):
    """A QE model trained on the vectors of a tiny BERT (a model spec the CLI can load)."""
    from tests.qe.test_qe_train import write_toy_mlqe as _  # noqa: F401  (same module)
    from tests.training.conftest import make_tiny_model_dir
    from xlingua.encoders.loading import load_encoder

    root = tmp_path_factory.mktemp("tinyqe")
    spec = str(make_tiny_model_dir(root / "model"))
    enc = load_encoder(spec)
    toy = ToyEncoder()
    write_toy_mlqe(root, toy, n=(60, 30))
    config = QEConfig(pairs=PAIRS, held_out=("ro-en",), candidates=("ridge+cos+len",))
    train(config, root / "run", encoder=enc, data_dir=root, log=lambda line: None)
    return spec, root / "run"


def _files(tmp_path, src, tgt):
    a, b = tmp_path / "src.txt", tmp_path / "tgt.txt"
    a.write_text("".join(f"{t}\n" for t in src), encoding="utf-8")
    b.write_text("".join(f"{t}\n" for t in tgt), encoding="utf-8")
    return str(a), str(b)


def test_score_qe_adds_the_heads_column_and_says_what_scored_it(tmp_path, tiny_qe):
    from xlingua.encoders.loading import load_encoder

    spec, run = tiny_qe
    src, tgt = ["the red cat", "a dog"], ["die rote katze", "der hund"]
    a, b = _files(tmp_path, src, tgt)
    out = tmp_path / "s.tsv"
    res = CliRunner().invoke(app, ["score", a, b, "-o", str(out), "--model", spec, "--qe-model", str(run),
                                   "--src-lang", "en", "--tgt-lang", "de"])
    assert res.exit_code == 0, res.output
    assert "qe: en-de scored by the head trained on all the trained pairs (en-de, ro-en, si-en)" in res.output
    header, *lines = out.read_text().splitlines()
    assert header == "cosine\tqe"
    rows = np.array([list(map(float, r.split("\t"))) for r in lines])
    assert rows.shape == (2, 2)
    enc, model = load_encoder(spec), QEModel.load(run / "model")
    want = model.predict(enc.encode(src), enc.encode(tgt), src, tgt, "en-de")
    np.testing.assert_allclose(rows[:, 1], want, atol=2e-6)

    res = CliRunner().invoke(app, ["score", a, b, "-o", str(out), "--model", spec, "--qe-model", str(run),
                                   "--src-lang", "fr", "--tgt-lang", "en"])
    assert res.exit_code == 0 and "qe: fr-en is not among the trained pairs (en-de, ro-en, si-en)" in res.output


def test_score_qe_bad_input_and_a_foreign_encoder_are_one_line(tmp_path, tiny_qe):
    from tests.training.conftest import make_tiny_model_dir

    spec, run = tiny_qe
    a, b = _files(tmp_path, ["one", "two"], ["eins"])
    res = CliRunner().invoke(app, ["score", a, b, "-o", str(tmp_path / "o.tsv"), "--model", spec,
                                   "--qe-model", str(run)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "1" in res.output
    assert not (tmp_path / "o.tsv").exists()

    a, b = _files(tmp_path, ["one", ""], ["eins", "zwei"])
    res = CliRunner().invoke(app, ["score", a, b, "-o", str(tmp_path / "o.tsv"), "--model", spec, "--qe-model", str(run)])
    assert res.exit_code == 2 and f"{a}:2" in res.output and len(res.output.strip().splitlines()) == 1

    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    a, _ = _files(tmp_path, ["one", "two"], ["x", "y"])
    res = CliRunner().invoke(app, ["score", a, str(bad), "-o", str(tmp_path / "o.tsv"), "--model", spec, "--qe"])
    assert res.exit_code == 2 and res.output.startswith(f"error: {bad}:2: invalid UTF-8")

    other = str(make_tiny_model_dir(tmp_path / "other", seed=1))
    a, b = _files(tmp_path, ["one"], ["eins"])
    res = CliRunner().invoke(app, ["score", a, b, "-o", str(tmp_path / "o.tsv"), "--model", other, "--qe-model", str(run)])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [f"error: the QE model at {run / 'model'} reads the vectors of "
                                               f"'bundled'; use --model bundled with --qe (got {other})"]


def test_evaluate_reports_the_model_and_cosine_per_pair(trained):
    from xlingua.qe.train import evaluate

    root, enc, report = trained
    result = evaluate(root / "run", "dev", encoder=enc, data_dir=root)
    assert result["cosine"] == pytest.approx(report["dev"]["cosine"])
    chosen = report["dev"][report["chosen"]]
    # the chosen heads, calibrated on dev, correlate with dev gold as they did when chosen
    assert result["qe"]["mean"] == pytest.approx(chosen["mean"], abs=1e-4)


class NewDefault(ToyEncoder):
    """What `bundled` loads after the default changed: the same name, other weights."""
    name = "bundled:bf16"

    def fingerprint(self):
        return "xlingua-next:bf16|mean|None|True|512|1|0123456789abcdef"


def test_heads_refuse_a_base_that_now_loads_other_weights(trained):
    from xlingua.qe.load import load_qe
    from xlingua.qe.train import evaluate

    root, enc, _ = trained
    model = root / "run" / "model"
    want = (f"the QE model at {model} was fitted on the vectors of toy-encoder, but 'bundled' now loads "
            "xlingua-next; fit it again on these (xlingua qe train -o OUT --set base=bundled)")
    with pytest.raises(ValueError) as err:
        load_qe(str(root / "run"), NewDefault())
    assert str(err.value) == want
    # `qe eval` too: it reads the base's vectors itself, so it must not score on the new ones
    with pytest.raises(ValueError) as err:
        evaluate(root / "run", "dev", encoder=NewDefault(), data_dir=root)
    assert str(err.value) == want
    assert load_qe(str(root / "run"), enc).base == "bundled"


def test_ship_records_probe_scores_and_a_corrupted_copy_is_refused(tmp_path, tiny_qe):
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.manifest import CorruptModelError
    from xlingua.qe.ship import PROBE_PAIRS, probe_scores, ship
    from xlingua.qe.load import load_qe

    spec, run = tiny_qe
    enc = load_encoder(spec)
    manifest = ship(run, tmp_path / "shipped", encoder=enc)
    assert manifest["probe_pairs"]["pairs"] == [list(p) for p in PROBE_PAIRS]
    shipped = load_qe(str(tmp_path / "shipped"), enc)
    np.testing.assert_allclose(probe_scores(shipped, enc), manifest["probe_pairs"]["scores"], atol=1e-5)
    with pytest.raises(FileExistsError):
        ship(run, tmp_path / "shipped", encoder=enc)

    data = bytearray((tmp_path / "shipped" / "qe.safetensors").read_bytes())
    data[-5] ^= 0xFF
    (tmp_path / "shipped" / "qe.safetensors").write_bytes(bytes(data))
    with pytest.raises(CorruptModelError, match="qe.safetensors is corrupted or altered"):
        load_qe(str(tmp_path / "shipped"), enc)
    a, b = _files(tmp_path, ["one"], ["eins"])
    res = CliRunner().invoke(app, ["score", a, b, "-o", str(tmp_path / "o.tsv"), "--model", spec,
                                   "--qe-model", str(tmp_path / "shipped")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "qe.safetensors is corrupted or altered" in res.output
