"""`xlingua mine --src-embeddings DIR --tgt-embeddings DIR` mines from the store `xlingua embed
-o DIR --shard-size N` wrote, without running an encoder, and gives the same bytes as
embedding in the pipeline; mining's own embed step writes that same store format; the batch
size is not part of the embed cache key."""
import json

import numpy as np
import pytest
from mining_toy import toy_corpus, write_lines

from xlingua.data.text import InputError
from xlingua.embed import EmbedFilesConfig, embed_files, load_embeddings
from xlingua.encoders.base import Encoder
from xlingua.encoders.store import Store
from xlingua.mining import MineConfig, mine
from xlingua.mining.toy import CharNgramEncoder

ENC = CharNgramEncoder(dim=256)


class Refuses(Encoder):
    """Stands where an encoder would be: mining from stores must not call it."""
    name, dim = ENC.name, ENC.dim

    def fingerprint(self):
        return ENC.fingerprint()

    def _encode_batch(self, texts, lang):
        raise AssertionError("an encoder ran although the vectors were given")


@pytest.fixture
def corpora(tmp_path):
    src, tgt, _ = toy_corpus()
    src = src[:5] + ["", src[1]] + src[5:]   # a blank line and a repeat: rows must still line up
    return write_lines(tmp_path / "src.txt", src), write_lines(tmp_path / "tgt.txt", tgt)


def _store(path, out, shard_size, ids=False):
    embed_files(ENC, EmbedFilesConfig([str(path)], str(out), shard_size=shard_size, ids=ids, show_progress=False))
    return str(out)


def _mine(tmp_path, sp, tp, name, encoder=ENC, **kw):
    out = tmp_path / f"{name}.tsv.gz"
    s = mine(sp, tp, out, MineConfig("en", "en", shard_size=4, dedup=True, **kw), tmp_path / f"wd_{name}",
             encoder=encoder, show_progress=False)
    return out.read_bytes(), s


def test_mining_from_embed_stores_equals_embedding_in_the_pipeline(tmp_path, corpora):
    sp, tp = corpora
    embedded, s1 = _mine(tmp_path, sp, tp, "embedded")
    src_dir, tgt_dir = _store(sp, tmp_path / "src_emb", 3), _store(tp, tmp_path / "tgt_emb", 5)
    given, s2 = _mine(tmp_path, sp, tp, "given", encoder=Refuses(), src_embeddings=src_dir,
                      tgt_embeddings=tgt_dir)
    assert given == embedded and s1["written"] > 5
    assert {"import_src", "import_tgt"} <= set(s2["timings"]) and "embed_src" not in s2["timings"]
    assert s2["settings"]["encoder"] == ENC.fingerprint()
    # one side given, the other embedded by the same model
    one, _ = _mine(tmp_path, sp, tp, "one", src_embeddings=src_dir)
    assert one == embedded


def test_mining_writes_the_embed_store_format(tmp_path, corpora):
    sp, tp = corpora
    _, s = _mine(tmp_path, sp, tp, "own")
    store = Store(s["artefacts"]["src_embed"])
    assert store.rows == s["src"]["sentences"] and store.dtype == "float16" and store.model == ENC.fingerprint()
    vecs = load_embeddings(s["artefacts"]["src_embed"])   # `xlingua embed`'s reader
    assert vecs.shape == (s["src"]["sentences"], ENC.dim)
    assert np.allclose(np.linalg.norm(vecs.astype(np.float32), axis=1), 1.0, atol=2e-3)


def test_ids_are_matched_by_id(tmp_path):
    src, tgt, _ = toy_corpus()
    sp = write_lines(tmp_path / "s.tsv", src, ids=[f"s{i}" for i in range(len(src))])
    tp = write_lines(tmp_path / "t.tsv", tgt, ids=[f"t{i}" for i in range(len(tgt))])
    embedded, _ = _mine(tmp_path, sp, tp, "embedded")
    given, _ = _mine(tmp_path, sp, tp, "given", encoder=Refuses(),
                     src_embeddings=_store(sp, tmp_path / "se", 4, ids=True),
                     tgt_embeddings=_store(tp, tmp_path / "te", 4, ids=True))
    assert given == embedded
    with pytest.raises(InputError, match="the store no ids; write it with `xlingua embed --ids`"):
        _mine(tmp_path, sp, tp, "noids", src_embeddings=_store(sp, tmp_path / "plain", 4))


def test_a_store_that_does_not_fit_is_refused(tmp_path, corpora):
    sp, tp = corpora
    other = write_lines(tmp_path / "other.txt", ["just one line", "and two"])
    with pytest.raises(InputError, match=r"holds 2 rows but the corpus has 14 lines"):
        _mine(tmp_path, sp, tp, "rows", src_embeddings=_store(other, tmp_path / "o", 4))
    unfinished = tmp_path / "unfinished"
    _store(sp, unfinished, 4)
    (unfinished / "index.json").unlink()
    with pytest.raises(InputError, match="no index.json, so the embedding job has not finished"):
        _mine(tmp_path, sp, tp, "unfinished", src_embeddings=str(unfinished))
    with pytest.raises(ValueError, match="come from different models"):
        _mine(tmp_path, sp, tp, "models", encoder=CharNgramEncoder(dim=128),
              src_embeddings=_store(sp, tmp_path / "s256", 4))


def test_batch_size_is_not_part_of_the_embed_cache_key(tmp_path, corpora):
    sp, tp = corpora
    out = tmp_path / "o.tsv.gz"
    first = mine(sp, tp, out, MineConfig("en", "en", batch_size=2), tmp_path / "wd", encoder=ENC,
                 show_progress=False)
    again = mine(sp, tp, out, MineConfig("en", "en", batch_size=64), tmp_path / "wd", encoder=ENC,
                 show_progress=False)
    assert not first["timings"]["embed_src"]["cached"]
    assert again["timings"]["embed_src"]["cached"] and again["timings"]["embed_tgt"]["cached"]
    assert json.loads((tmp_path / "wd" / "embed").joinpath(
        next(p.name for p in (tmp_path / "wd" / "embed").iterdir()), "config.json").read_text())["batch_size"] == 2
