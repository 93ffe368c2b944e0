"""What fitted heads may read: a model that adds new pieces' rows alone to a shipped model reads
every other text as that model, so heads fitted on its vectors hold; any other change does not."""
import json

import pytest

from xlingua.encoders.manifest import FORMAT, model_of, reads_as, same_vectors

ROWS = "embeddings.word_embeddings.weight"
SMALL = "xlingua-small:torch|mean|None|True|512|1|de60e15feb2ae0c6"


@pytest.fixture
def models(models_dir):
    def ship(name, tensors, sha="de60e15feb2ae0c6" + "0" * 48, rows=True, on="xlingua-small"):
        (models_dir / name).mkdir()
        (models_dir / name / "manifest.json").write_text(json.dumps({
            "format": FORMAT, "base_model": on, "base": {"conversion": 1, "sha256": sha},
            "tensors": tensors, **({"rows_from": {ROWS: 250037}} if rows else {})}))
    return ship


def test_a_rows_only_extension_reads_as_its_base_on_any_path(models):
    models("xlingua-xt", [ROWS])
    ext = "xlingua-xt:bf16|mean|None|True|512|1|0123456789abcdef"
    assert reads_as(ext) == "xlingua-small:bf16|mean|None|True|512|1|de60e15feb2ae0c6"
    assert same_vectors(ext, SMALL) and same_vectors(SMALL, ext)
    assert not same_vectors(ext, "e5-small:torch|mean|None|True|512|1|de60e15feb2ae0c6")
    assert not same_vectors(ext.replace("|mean|", "|cls|"), SMALL)  # another pooling reads otherwise
    assert reads_as(SMALL) is None and reads_as("/some/dir|mean|None|True|512|1|0123456789abcdef") is None
    # rows added to that model in turn read as it, so as xlingua-small too
    models("xlingua-xt2", [ROWS], sha="0123456789abcdef" + "0" * 48, on="xlingua-xt")
    assert same_vectors("xlingua-xt2:torch|mean|None|True|512|1|fedcba9876543210", SMALL)
    assert same_vectors("xlingua-xt2:torch|mean|None|True|512|1|fedcba9876543210", ext)


def test_an_openvino_conversion_reads_as_its_model(models):
    # OpenVINO's encoders append their conversion's cache directory to the model's fingerprint
    models("xlingua-xt", [ROWS])
    ov = "xlingua-xt:ov-bf16|mean|None|True|512|1|0123456789abcdef|openvino-xlingua-xt-41666b4e5666"
    assert reads_as(ov) == "xlingua-small:ov-bf16|mean|None|True|512|1|de60e15feb2ae0c6"
    assert same_vectors(ov, SMALL) and same_vectors(SMALL.replace(":torch", ":ov-int8") + "|ov-int8-xlingua-small-query-1f", SMALL)
    assert not same_vectors(SMALL.replace("de60e15feb2ae0c6", "0123456789abcdef") + "|openvino-x-1", SMALL)
    assert not same_vectors(SMALL + "|something-else", SMALL)  # only the engines' own conversion is dropped


def test_an_extension_that_changed_more_or_another_base_does_not(models):
    models("xlingua-body", [ROWS, "pooler.dense.bias"])
    models("xlingua-norows", ["pooler.dense.bias"], rows=False)
    models("xlingua-other", [ROWS], sha="0123456789abcdef" + "0" * 48)
    for name in ("xlingua-body", "xlingua-norows", "xlingua-other"):
        assert not same_vectors(f"{name}:torch|mean|None|True|512|1|0123456789abcdef", SMALL), name


def test_a_model_directory_on_an_engine_gives_that_directory_s_vectors():
    # `bf16:PATH` and `ov-bf16:PATH` name the engine before the path, `xlingua-small:bf16` after the model
    plain = "runs/x|mean|None|True|512|query: |0a08d78437e71870"
    assert model_of("bf16:" + plain) == model_of(plain) == "runs/x"
    assert same_vectors("bf16:" + plain, plain)
    assert same_vectors("ov-bf16:" + plain + "|openvino-best-6884c1b4682d", "ov-int8:" + plain)
    assert not same_vectors("bf16:" + plain, plain.replace("runs/x", "runs/y"))
    assert not same_vectors("bf16:" + plain, plain.replace("0a08d78437e71870", "0123456789abcdef"))
