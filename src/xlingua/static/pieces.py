"""The start of a static encoder: the teacher's vector of every piece seen in the training text.

A piece's vector is the teacher's mean-pooled output for the piece alone between its special
tokens (model2vec's distillation), reduced by PCA and scaled by the SIF weight a / (a + p) of
its frequency p in the training text (Arora et al. 2017), so that frequent pieces, which say
little, weigh less in a sentence's mean.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def piece_counts(ids: list[list[int]], vocab_size: int) -> np.ndarray:
    """(vocab_size,) occurrences of each tokenizer id in `ids`."""
    flat = np.fromiter((i for s in ids for i in s), dtype=np.int64)
    return np.bincount(flat, minlength=vocab_size)


def teacher_piece_vectors(encoder, piece_ids: np.ndarray, batch_size: int = 4096,
                          show_progress: bool = True) -> np.ndarray:
    """(len(piece_ids), dim) float32: the teacher's mean-pooled output of [<s> piece </s>]."""
    import torch

    from xlingua.encoders.pooling import pool

    tok = encoder.tokenizer
    out = np.zeros((len(piece_ids), encoder.dim), dtype=np.float32)
    bar = None
    if show_progress:
        from xlingua.progress import progress_bar

        bar = progress_bar("[bold]teacher[/] piece vectors", len(piece_ids), rate="piece")
    try:
        for start in range(0, len(piece_ids), batch_size):
            chunk = piece_ids[start:start + batch_size]
            seqs = [tok.wrap([int(i)]) for i in chunk]
            batch = encoder._pad(seqs)
            with torch.inference_mode():
                states = encoder._states(batch, None)
                out[start:start + len(chunk)] = pool(states, batch["attention_mask"], "mean").float().numpy()
            if bar:
                bar[0].update(bar[1], advance=len(chunk))
    finally:
        if bar:
            bar[0].stop()
    return out


def cached_teacher_vectors(encoder, piece_ids: np.ndarray, cache: Path, show_progress: bool = True) -> np.ndarray:
    """teacher_piece_vectors, kept in `cache` (an .npz holding the ids it was made for)."""
    from xlingua.io import save_npz

    if cache.exists():
        held = np.load(cache)
        if np.array_equal(held["ids"], piece_ids):
            return held["vectors"]
    vectors = teacher_piece_vectors(encoder, piece_ids, show_progress=show_progress)
    cache.parent.mkdir(parents=True, exist_ok=True)
    save_npz(cache, ids=piece_ids, vectors=vectors)
    return vectors


def sif_weights(counts: np.ndarray, a: float = 1e-3) -> np.ndarray:
    """a / (a + p) per piece, p its share of all piece occurrences."""
    p = counts / max(int(counts.sum()), 1)
    return a / (a + p)


def start_vectors(teacher: np.ndarray, counts: np.ndarray, dim: int, sif: float = 1e-3, seed: int = 0) -> np.ndarray:
    """PCA of the teacher's piece vectors to `dim` (centred, so that what all pieces share, which
    tells no sentence apart, is gone), each row scaled by its SIF weight; float32."""
    from sklearn.decomposition import PCA

    dim = min(dim, teacher.shape[1], teacher.shape[0])
    reduced = PCA(n_components=dim, random_state=seed).fit_transform(teacher.astype(np.float64))
    return (reduced * sif_weights(counts, sif)[:, None]).astype(np.float32)


def model2vec_vectors(teacher_dir: Path, tok, piece_ids: np.ndarray, dim: int) -> np.ndarray:
    """model2vec's distillation of the teacher directory (`model2vec.distill`: PCA to `dim`, its
    SIF weights by vocabulary rank), as rows for `piece_ids` of `tok` (matched by piece string;
    a piece model2vec dropped gets a zero row)."""
    try:
        from model2vec.distill import distill
    except ImportError:
        raise ImportError("init model2vec needs the model2vec package: pip install 'model2vec[distill]'") from None
    model = distill(model_name=str(teacher_dir), pca_dims=dim)
    vocab = model.tokenizer.get_vocab()
    emb = np.asarray(model.embedding, dtype=np.float32)
    out = np.zeros((len(piece_ids), emb.shape[1]), dtype=np.float32)
    inner = tok.tokenizer
    piece = inner.id_to_token if hasattr(inner, "id_to_token") else inner.convert_ids_to_tokens
    for r, pid in enumerate(piece_ids.tolist()):
        j = vocab.get(piece(pid))
        if j is None:
            continue
        row = emb[j if model.token_mapping is None else model.token_mapping[j]]
        out[r] = row * (model.weights[j] if model.weights is not None else 1.0)
    return out
