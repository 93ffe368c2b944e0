"""Tokens of a text for /tokenize and for /embed's `truncate`, from the served encoder's own
tokenizer (encoders without one, such as USE, have none to show)."""
from __future__ import annotations

from xlingua.encoders.base import Encoder


def backend(encoder: Encoder):
    """The `tokenizers.Tokenizer` behind a transformer encoder, or None."""
    tok = getattr(encoder, "tok", None)
    if tok is None:
        return None
    if getattr(tok, "kind", None) == "e5":
        return tok.tokenizer
    return getattr(tok.tokenizer, "backend_tokenizer", None)


def _normalize(encoder: Encoder, text: str) -> str:
    table = getattr(encoder.tok, "table", None)  # the e5 engine's per-codepoint map
    return text.translate(table) if table else text


def tokenize(encoder: Encoder, text: str, add_special_tokens: bool = True) -> list[dict]:
    """TEI's token records: id, text, special, start, stop (character offsets into the text
    after the tokenizer's character map, which changes almost no text)."""
    tk = backend(encoder)
    text = _normalize(encoder, text)
    enc = tk.encode(text, add_special_tokens=add_special_tokens)
    out = []
    for tid, tok, (start, stop), special in zip(enc.ids, enc.tokens, enc.offsets, enc.special_tokens_mask):
        out.append({"id": tid, "text": tok if special else text[start:stop], "special": bool(special),
                    "start": None if special else start, "stop": None if special else stop})
    return out


def truncate(encoder: Encoder, text: str) -> str:
    """`text` cut to what fits one model window (the prefix, e.g. e5's "query: ", included)."""
    tk = backend(encoder)
    room = encoder.window - len(encoder.tok.content_ids([""])[0])
    enc = tk.encode(_normalize(encoder, text), add_special_tokens=False)
    if len(enc.ids) <= room:
        return text
    return _normalize(encoder, text)[: enc.offsets[room - 1][1]]


def max_tokens(encoder: Encoder) -> int | None:
    return getattr(encoder, "max_length", None)
