"""xlingua-small is one name with versions: xlingua-small@VERSION pins one, `bundled` is the
current one, and every name a recorded command used (xlingua-small, -v2 ... -v13) loads what it
loaded before."""
from __future__ import annotations

import dataclasses

import pytest

from xlingua.encoders import bundled, engines, loading
from xlingua.encoders.loading import SMALL_VERSIONS, load_encoder, unpinned

#: the names recorded commands use and the model directory each loaded when it was recorded
RECORDED = {"xlingua-small": "xlingua-small", "xlingua-small-v2": "xlingua-small-v2",
            "xlingua-small-v3": "xlingua-small-v3", "xlingua-small-v4": "xlingua-small-v4",
            "xlingua-small-v5": "xlingua-small-v5",
            "xlingua-small-v6": "xlingua-small-v6", "xlingua-small-v7": "xlingua-small-v7",
            "xlingua-small-v8": "xlingua-small-v8", "xlingua-small-v9": "xlingua-small-v9",
            "xlingua-small-v10": "xlingua-small-v10", "xlingua-small-v11": "xlingua-small-v11",
            "xlingua-small-v12": "xlingua-small-v12", "xlingua-small-v13": "xlingua-small-v13",
            "bundled": "xlingua-small-v13"}


@pytest.fixture
def built(monkeypatch):
    """Every engine's build replaced by one that says what it was asked to build: nothing loads."""
    table = {e.name: dataclasses.replace(e, build=lambda name=e.name, **o: (name, o.get("model"), o.get("alias")))
             for e in engines.engines()}
    monkeypatch.setattr(engines, "_ENGINES", table)
    monkeypatch.setattr(bundled, "route_of", lambda model: None)  # routing: test_routed.py, test_overlay.py


def test_every_recorded_name_loads_the_model_it_loaded(built):
    for name, model in RECORDED.items():
        assert load_encoder(f"{name}:torch") == ("torch", model, name)
        assert unpinned(name) == model


def test_a_pinned_version_loads_its_model_under_the_name_that_pins_it(built):
    assert list(SMALL_VERSIONS) == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13"]
    for version, model in SMALL_VERSIONS.items():
        assert load_encoder(f"xlingua-small@{version}:torch") == ("torch", model, f"xlingua-small@{version}")
        assert load_encoder(f"xlingua-small@{version}:ct2")[1:] == (model, f"xlingua-small@{version}")
        assert load_encoder(f"xlingua-small@{version}")[1] == model  # the engine chosen for this CPU


def test_the_current_version_is_the_default(built):
    assert loading.current_version() == "v13"
    assert load_encoder("bundled:torch")[1] == load_encoder("xlingua-small@v13:torch")[1] == loading.BUNDLED


def test_an_unknown_version_is_refused_naming_the_versions(built):
    with pytest.raises(ValueError, match=r"^xlingua-small@v14: xlingua-small has no version 'v14'; its versions are "
                                         r"v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13 \(current: v13\)$"):
        load_encoder("xlingua-small@v14")
    with pytest.raises(ValueError, match="unknown engine 'nope'; xlingua-small@v2 runs as xlingua-small@v2:bf16"):
        load_encoder("xlingua-small@v2:nope")


def test_a_pinned_version_shares_the_fingerprint_of_its_recorded_name():
    # one embedding cache for both names: a figure cached under one is read under the other
    pinned, recorded = load_encoder("xlingua-small@v7:torch"), load_encoder("xlingua-small-v7:torch")
    assert pinned.name == "xlingua-small@v7:torch" and pinned.path == recorded.path
    assert pinned.fingerprint() == recorded.fingerprint()


def test_extend_trains_a_pinned_version_on_torch():
    from xlingua.training.extend.run import trainable_spec

    assert trainable_spec("xlingua-small@v2") == "xlingua-small@v2:torch"
    assert trainable_spec("xlingua-small-v2:bf16") == "xlingua-small-v2:torch"
    assert trainable_spec("runs/x/best") == "runs/x/best"
