"""Splitting running text into sentences, for any language.

`blingfire` (its sentence model ships inside the wheel) does the splitting: it had the best
boundary F1 on Latin, Cyrillic and Arabic-script text of the splitters compared in
benchmarks/sentence_split.py. It does not know the full stops of most other scripts (Devanagari
danda, Ethiopic, Armenian, Burmese, Khmer full stops, ...), so every piece it returns is split
again after any character with the Unicode Sentence_Terminal property other than . ! ? (which
blingfire already handles, abbreviations included) when whitespace follows, or at once for the
ideographic full stops that take no space, and Armenian also after the ASCII colon it is
mostly typed with. Scripts with no sentence punctuation (Thai, Lao) or
whose phrase mark is not a Unicode sentence terminator (Tibetan shad) come back as one sentence
per line break or blingfire boundary; docs/prepare.md has the figures per script family.

Whitespace inside a sentence is collapsed to single spaces; no other character is changed,
dropped or reordered.
"""
from __future__ import annotations

import blingfire
import regex

# A non-ASCII sentence terminator, any closing quotes/brackets after it, then whitespace.
_TERMINATOR = regex.compile(
    r"(?V1)[\p{Sentence_Terminal}--[.!?]]+[\"'\p{Pe}\p{Pf}]*\K\s+"
    r"|[。！？｡][\"'\p{Pe}\p{Pf}]*+\K(?=\S)")
_SPACE = regex.compile(r"\s+")
# blingfire cuts CJK text before the closing quote of a quoted sentence; such a piece goes back.
_CLOSER = regex.compile(r"[\"'\p{Pe}\p{Pf}]+")
# Armenian is mostly typed with the ASCII colon for its full stop (U+0589 looks the same).
_EXTRA = {"hy": regex.compile(r":\K\s+")}


def split_sentences(text: str, lang: str | None = None) -> list[str]:
    """Sentences of `text` in order, stripped, none empty. Line breaks always end a sentence.
    `lang` (ISO 639) adds that language's own full stop where the Unicode rules miss it."""
    out: list[str] = []
    for line in text.splitlines():
        line = _SPACE.sub(" ", line).strip()
        if not line:
            continue
        pieces: list[str] = []
        for piece in blingfire.text_to_sentences(line).split("\n"):
            closer = _CLOSER.match(piece)
            if closer and pieces and pieces[-1][-1] in "。！？｡":
                pieces[-1] += closer.group()
                piece = piece[closer.end():]
            pieces.extend(s for s in (p.strip() for p in _TERMINATOR.split(piece)) if s)
        extra = _EXTRA.get(lang.split("-")[0].lower()) if lang else None
        if extra is not None:
            pieces = [s for p in pieces for s in (q.strip() for q in extra.split(p)) if s]
        out += pieces
    return out


__all__ = ["split_sentences"]
