"""New tokenizer pieces for languages a model splits badly: SentencePiece pieces learned on their
text, appended to an e5 (unigram) tokenizer and to the model's word-embedding matrix.

Every existing piece keeps its id and its row; the new pieces take the ids after them (rows past
the last piece, which no text reaches, are reused: e5's matrix has 35 of them). A new piece's
row starts as the mean of the rows of the pieces the tokenizer split it into before, where a
character no piece holds (every character of a script the model never read) counts as a row of
its own, drawn once per character at the size of the existing rows: read as <unk>, as the
tokenizer did, every piece of such a script would start as the same vector. A new piece's score is
its log-probability in the learned model, raised to the tokenizer's lowest score where it falls
below: the unknown-character score is that lowest score minus 10, so it stays what it was.
Only pieces written in the new text's own scripts are added (`written_in`), so text in other
scripts (English above all: the teacher's side) splits exactly as before.
"""
from __future__ import annotations

import io
import json
import unicodedata
from collections import Counter
from typing import Callable, Sequence

import torch

from xlingua.encoders.tokenizer import META, E5Tokenizer, _char_class


def learn_pieces(texts: Sequence[str], size: int, table: dict[int, str]) -> list[tuple[str, float]]:
    """Up to `size` unigram pieces (piece, log-probability) learned on `texts` as an e5 tokenizer
    sees them: its per-character map applied, runs of spaces collapsed, "▁" for a space."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    lines = [" ".join(t.translate(table).split()) for t in texts]
    lines = [line for line in lines if line]
    if not lines:
        raise ValueError("no text to learn new pieces from")
    model = io.BytesIO()
    spm.set_random_generator_seed(0)  # with one thread, the same pieces every time
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=size, model_type="unigram",
        character_coverage=1.0, normalization_rule_name="identity", add_dummy_prefix=True,
        remove_extra_whitespaces=True, hard_vocab_limit=False, byte_fallback=False,
        num_threads=1, minloglevel=2)
    proto = pb.ModelProto()
    proto.ParseFromString(model.getvalue())
    return [(p.piece, float(p.score)) for p in proto.pieces if p.type == pb.ModelProto.SentencePiece.NORMAL]


def text_scripts(texts: Sequence[str], min_share: float = 0.05) -> set[str]:
    """The Unicode scripts (ISO 15924 codes) holding at least `min_share` of the letters and
    marks of `texts`; Common and Inherited characters are not counted."""
    from fontTools.unicodedata import script

    counts = Counter(script(c) for t in texts for c in t if unicodedata.category(c)[0] in "LM")
    for shared in ("Zyyy", "Zinh"):
        counts.pop(shared, None)
    total = sum(counts.values())
    return {s for s, n in counts.items() if n >= min_share * total}


def written_in(pieces: Sequence[tuple[str, float]], scripts: set[str]) -> list[tuple[str, float]]:
    """The pieces whose characters ("▁" aside) are all in `scripts` or combining (Inherited):
    a Latin name, a digit or a quotation mark in a Tibetan text gives no piece that English,
    or any text of another script, would then split differently."""
    from fontTools.unicodedata import script

    out = []
    for piece, score in pieces:
        found = [script(c) for c in piece.replace(META, "")]
        if any(s in scripts for s in found) and all(s in scripts or s == "Zinh" for s in found):
            out.append((piece, score))
    return out


def spared(tok: E5Tokenizer, pieces: Sequence[tuple[str, float]], texts: Sequence[str],
           max_rounds: int = 20) -> list[tuple[str, float]]:
    """The `pieces` less those `tok` extended with them would use on `texts`, dropped round by
    round until none is used: then every text of `texts` splits exactly as `tok` splits it (the
    best split with the new pieces uses none of them, so it is the best without them), and a model
    whose new rows alone train embeds those texts as before. For a script the model already reads
    (Arabic script) this keeps the languages that write it, whose text is `texts`, where they were."""
    spec = json.loads(tok.json)
    have = {q for q, _ in spec["model"]["vocab"]}
    first = len(spec["model"]["vocab"])
    kept = [p for p in pieces if p[0] not in have]
    # a character of `texts` that no piece holds is split off alone; a new piece holding it would
    # end that, whether or not the piece itself is then used
    known = {c for q in have for c in q}
    alone = {c for t in texts for c in t.translate(tok.table)} - known
    kept = [p for p in kept if not alone.intersection(p[0])]
    for _ in range(max_rounds):
        if not kept:
            return kept
        ext = E5Tokenizer(json.dumps(with_pieces(spec, kept), ensure_ascii=False), tok.table, tok.prefix)
        used = {i - first for ids in ext.content_ids(texts) for i in ids if i >= first}
        if not used:
            return kept
        kept = [p for i, p in enumerate(kept) if i not in used]
    raise RuntimeError(f"new pieces still used on the spared text after {max_rounds} rounds")


def resplit(old: E5Tokenizer, new: E5Tokenizer, texts: Sequence[str]) -> tuple[list[int], Counter]:
    """(indices of `texts` that `new`, `old` with pieces appended, splits differently; how often
    each appended piece is used in them). A model whose new rows alone trained embeds every
    other text exactly as before, so these are the texts it can move."""
    before = [p for p, _ in json.loads(old.json)["model"]["vocab"]]
    vocab = [p for p, _ in json.loads(new.json)["model"]["vocab"]]
    first = len(before)
    if vocab[:first] != before:
        raise ValueError("the second tokenizer is not the first with pieces appended")
    changed, used = [], Counter()
    for i, (a, b) in enumerate(zip(old.content_ids(texts), new.content_ids(texts))):
        if a != b:
            changed.append(i)
            used.update(vocab[t] for t in b if t >= first)
    return changed, used


def piece_splitter(tok: E5Tokenizer) -> Callable[[str], list[int | str]]:
    """A function giving the parts `tok` reads a piece as: the ids of its known runs (a whole
    word's pieces when the piece starts with "▁") and, in their places, the characters no piece
    holds (the tokenizer isolates each as one <unk>)."""
    spec = json.loads(tok.json)
    known = {c for p, _ in spec["model"]["vocab"] for c in p}
    model = tok.tokenizer.model

    def split(piece: str) -> list[int | str]:
        parts, run = [], ""
        for ch in piece:
            if ch in known:
                run += ch
                continue
            if run:
                parts.extend(t.id for t in model.tokenize(run))
                run = ""
            parts.append(ch)
        if run:
            parts.extend(t.id for t in model.tokenize(run))
        return parts

    return split


def unknown_char_rows(weight: torch.Tensor, chars: Sequence[str], seed: int = 0) -> dict[str, torch.Tensor]:
    """A row per character, drawn from a normal with the per-coordinate mean and spread of
    `weight`'s rows, in sorted character order from `seed`: the same rows every time."""
    gen = torch.Generator().manual_seed(seed)
    mean, std = weight.mean(0), weight.std(0)
    return {c: mean + std * torch.randn(weight.shape[1], generator=gen) for c in sorted(set(chars))}


def piece_count(encoder) -> int:
    """How many pieces `encoder`'s tokenizer has; an error unless it is e5's unigram tokenizer."""
    tok = encoder.tokenizer
    if getattr(tok, "kind", None) != "e5":
        raise ValueError(f"{encoder.name}: new pieces need e5's unigram tokenizer; this model has a "
                         f"{getattr(tok, 'kind', type(tok).__name__)} tokenizer")
    return len(json.loads(tok.json)["model"]["vocab"])


def add_pieces(encoder, pieces: Sequence[tuple[str, float]]) -> list[int]:
    """Give `encoder` (a TransformerEncoder with an e5 tokenizer) the `pieces` its tokenizer
    lacks, in order; returns their ids. Its tokenizer and model are replaced in place."""
    piece_count(encoder)
    tok = encoder.tokenizer
    spec = json.loads(tok.json)
    vocab = spec["model"]["vocab"]
    have = {p for p, _ in vocab}
    new = []
    for piece, score in pieces:
        if piece not in have:
            have.add(piece)
            new.append((piece, score))
    if not new:
        return []
    weight = encoder.model.get_input_embeddings().weight
    rows = len(vocab)
    if weight.shape[0] < rows:
        raise ValueError(f"{encoder.name}: {weight.shape[0]} embedding rows for {rows} pieces")
    split = piece_splitter(tok)
    parts = [split(p) for p, _ in new]
    with torch.no_grad():
        chars = unknown_char_rows(weight[:rows], [c for ps in parts for c in ps if isinstance(c, str)])
        start = torch.stack([torch.stack([chars[c] if isinstance(c, str) else weight[c] for c in ps]).mean(0)
                             for ps in parts])
    spec = with_pieces(spec, new, where=encoder.name)
    if rows + len(new) > weight.shape[0]:
        encoder.model.resize_token_embeddings(rows + len(new), mean_resizing=False)
    with torch.no_grad():
        encoder.model.get_input_embeddings().weight[rows:rows + len(new)] = start
    encoder.tok = E5Tokenizer(json.dumps(spec, ensure_ascii=False), tok.table, tok.prefix)
    return list(range(rows, rows + len(new)))


def with_pieces(spec: dict, new: Sequence[tuple[str, float]], where: str = "tokenizer") -> dict:
    """A copy of the e5 tokenizer `spec` (tokenizer.json, parsed) with the `new` (piece, score)
    appended in order, each score raised to the lowest one's, and the split of unknown characters
    told the characters they bring. The same `new` on the same `spec` gives the same tokenizer,
    which is how a shipped model rebuilds its tokenizer from the pieces it added."""
    spec = json.loads(json.dumps(spec))
    vocab = spec["model"]["vocab"]
    lowest = min(s for _, s in vocab)
    vocab.extend([p, max(float(s), lowest)] for p, s in new)
    steps = (spec.get("pre_tokenizer") or {}).get("pretokenizers") or []
    if len(steps) != 2 or steps[1].get("type") != "Split":
        raise ValueError(f"{where}: not the e5 tokenizer layout (metaspace, then a split of unknown characters)")
    # characters the new pieces bring are no longer unknown: the split must not isolate them
    steps[1]["pattern"]["Regex"] = _char_class({c for p, _ in vocab for c in p})
    return spec


def appended_pieces(spec: dict, base: dict, where: str = "tokenizer") -> list[list]:
    """The [piece, score] pairs `spec` appends to the e5 tokenizer `base`: `spec` must be
    `with_pieces(base, them)`, nothing else changed."""
    n = len(base["model"]["vocab"])
    tail = [list(v) for v in spec["model"]["vocab"][n:]]
    if with_pieces(base, tail, where) != spec:
        raise ValueError(f"{where}: differs from e5-small's tokenizer other than by pieces added after its "
                         f"{n:,} (as `xlingua extend --new-pieces` adds them)")
    return tail
