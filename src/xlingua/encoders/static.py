"""A static encoder: one vector per token piece, a sentence vector is the mean of its pieces'
vectors (their lengths carry each piece's weight), L2-normalized. No network runs, so it embeds
one to two orders of magnitude faster than a transformer; built by `xlingua static` from a
teacher's token vectors and trained on parallel pairs (xlingua.static).

A directory holds `vectors.safetensors` (`vectors` (rows, dim), float16/32 or int8 with
`scales` (rows,); `token_ids` (rows,): the teacher tokenizer's id of each row; pieces without
a row are skipped) and `static.json`
(`tokenizer`: the name of a bundled model whose tokenizer it reads, e.g. "e5-small", or
"local" for a tokenizer saved beside it). A shipped directory (manifest.json) is checked
against its checksums before it loads; `load_encoder("static-small")` loads the one shipped in
the package.
"""
from __future__ import annotations

import hashlib
import json
from functools import partial
from itertools import chain
from pathlib import Path

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.encoders.manifest import verify
from xlingua.encoders.model_packages import model_dir
from xlingua.encoders.registry import register_spec

CONFIG = "static.json"
VECTORS = "vectors.safetensors"
PIECES = "pieces.safetensors"  # the token ids alone: a LASER student on a static encoder's pieces


def teacher_tokenizer(name: str, root: Path | None = None):
    """The content tokenizer (no prefix) of a bundled model, or the one saved in `root`
    ("local": an e5 tokenizer with its normalization map, else any transformers tokenizer)."""
    from xlingua.encoders.tokenizer import NORMALIZATION_FILE, E5Tokenizer, HFTokenizer

    if name != "local":
        from xlingua.encoders.e5 import model_dir

        root = model_dir(name)
    elif not (root / NORMALIZATION_FILE).exists():
        from transformers import AutoTokenizer

        return HFTokenizer(AutoTokenizer.from_pretrained(str(root)), prefix="")
    return E5Tokenizer.from_dir(root, prefix="")


class StaticEncoder(Encoder):
    # A batch is a sparse (texts x pieces) matrix times the vectors: its cost is its real pieces,
    # with no padding to save, so batches are large and in input order (no sort, no scatter).
    pads = False

    def __init__(self, path: str | Path, name: str | None = None):
        from safetensors.numpy import load_file

        root = Path(path)
        missing = [f for f in (CONFIG, VECTORS) if not (root / f).exists()]
        if missing:
            raise FileNotFoundError(f"{path} is not a static encoder directory: missing {', '.join(missing)}")
        self.manifest = verify(root)
        self.path = root
        self.config = json.loads((root / CONFIG).read_text(encoding="utf-8"))
        arrays = load_file(str(root / VECTORS))
        self.vectors = read_vectors(arrays)
        self.tok = teacher_tokenizer(self.config["tokenizer"], root)
        self.row = row_map(arrays["token_ids"], vocab_size(self.tok))
        self.dim = int(self.vectors.shape[1])
        self.name = name or f"static:{root.name}"

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        return pool(self.vectors, self.row, self.tok.content_ids(texts))

    def encode(self, texts, lang=None, batch_size: int = 8192, show_progress: bool = False) -> np.ndarray:
        return super().encode(texts, lang, batch_size, show_progress)

    def fingerprint(self) -> str:
        h = hashlib.sha256((self.path / VECTORS).read_bytes())
        h.update((self.path / CONFIG).read_bytes())
        return f"static-{h.hexdigest()[:16]}"


def read_vectors(arrays: dict) -> np.ndarray:
    """float32 rows: stored as float16/32, or as int8 with a float32 scale per row."""
    vectors = arrays["vectors"].astype(np.float32)
    if "scales" in arrays:
        vectors *= arrays["scales"][:, None]
    return vectors


def quantize_int8(vectors: np.ndarray) -> dict:
    """{"vectors": int8 rows, "scales": float32 per row}: each row's largest |value| maps to 127."""
    scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12).astype(np.float32) / 127.0
    return {"vectors": np.round(vectors / scales[:, None]).astype(np.int8), "scales": scales}


def vocab_size(tok) -> int:
    """Ids a tokenizer can produce (a transformers tokenizer's added tokens included)."""
    return len(tok.tokenizer.get_vocab()) if tok.kind == "hf" else tok.tokenizer.get_vocab_size()


def row_map(token_ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """(vocab_size,) row of each tokenizer id, -1 for a piece without a vector."""
    row = np.full(vocab_size, -1, dtype=np.int64)
    row[np.asarray(token_ids, dtype=np.int64)] = np.arange(len(token_ids))
    return row


def pool(vectors: np.ndarray, row: np.ndarray, ids: list[list[int]]) -> np.ndarray:
    """Unit mean of each text's known pieces' vectors; a text with none gets the zero vector."""
    from scipy.sparse import csr_matrix

    flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64)
    rows = row[flat]
    keep = rows >= 0
    counts = np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
    ends = np.cumsum(counts)
    indptr = np.r_[0, np.cumsum(keep)][np.r_[0, ends]]  # known pieces before each text's end
    sums = csr_matrix((np.ones(int(indptr[-1]), dtype=np.float32), rows[keep], indptr),
                      shape=(len(ids), len(vectors))) @ vectors
    sums = np.asarray(sums, dtype=np.float32)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return sums / np.maximum(norms, 1e-12)


class StaticPieces:
    """A static encoder's pieces as the vocabulary of a LASER student (`laser train --init
    static:DIR`): ids 0-3 are PAD UNK BOS EOS (encoders.laser_vocab), row r of the static
    vectors is id r + 4, a piece without a row is UNK. A directory with PIECES and CONFIG (and
    a local tokenizer's files) holds it."""

    SPECIAL = 4

    def __init__(self, root: str | Path):
        from safetensors.numpy import load_file

        root = Path(root)
        config = json.loads((root / CONFIG).read_text(encoding="utf-8"))
        source = root / PIECES if (root / PIECES).exists() else root / VECTORS
        self.token_ids = load_file(str(source))["token_ids"]
        self.tok = teacher_tokenizer(config["tokenizer"], root)
        self.row = row_map(self.token_ids, vocab_size(self.tok))

    def encode(self, texts: list[str]) -> list[list[int]]:
        from xlingua.encoders.laser_vocab import UNK

        out = []
        for ids in self.tok.content_ids(list(texts)):
            rows = self.row[np.asarray(ids, dtype=np.int64)]
            out.append(np.where(rows >= 0, rows + self.SPECIAL, UNK).tolist())
        return out

    def get_piece_size(self) -> int:
        return len(self.token_ids) + self.SPECIAL

    def save(self, out_dir: Path, source: Path) -> None:
        """PIECES and CONFIG (and a local tokenizer's files, copied from `source`) into out_dir."""
        import shutil

        from safetensors.numpy import save_file

        for f in source.iterdir():
            if f.is_file() and f.name not in (VECTORS, "manifest.json"):
                shutil.copyfile(f, out_dir / f.name)
        save_file({"token_ids": np.asarray(self.token_ids, dtype=np.int32)}, str(out_dir / PIECES))


PACKAGED = ("static-small",)


@register_spec("static:PATH", "a static encoder (token vectors, mean-pooled) built by `xlingua static`")
def _static(path: str, **options) -> StaticEncoder:
    return StaticEncoder(path, **options)


def _packaged(name: str, **options) -> StaticEncoder:
    return StaticEncoder(model_dir(name, "`xlingua static ship`"), name=name, **options)


for _name in PACKAGED:
    register_spec(_name, "static token vectors distilled from xlingua-small@v1 (e5's tokenizer), trained on parallel "
                         "pairs, shipped in xlingua-models-static (checksum-verified): a fast first pass over huge corpora",
                  package=_name)(partial(_packaged, _name))
