"""The cached steps of `prepare` (mining.prepare):

1. read (DocsStep): every input in order, checked (invalid UTF-8 and NUL bytes are errors
   naming file:line), documents cut into shards of `shard_docs` as JSON lines.
2. filter (FilterStep): per shard, local or on Ray: sentences (data.sentences), the filters
   (mining.filters), language identification (data.langid). Each shard's kept sentences and
   counts are written atomically, so a killed run redoes only unfinished shards.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from collections import Counter
from pathlib import Path

from xlingua.data.text import InputError, check_readable, read_lines, shown
from xlingua.io import atomic_open, file_fingerprint
from xlingua.mining.cache import load_json, save_json
from xlingua.mining.filters import FilterConfig, failed_rule
from xlingua.mining.step import Output, Step, path_field, upstream

COUNTS = "counts.json"  # what the pass counted, for the summary


# ---------------------------------------------------------------- 1. read documents

@dataclasses.dataclass(frozen=True)
class DocsConfig:
    paths: tuple[str, ...] = path_field()
    names: tuple[str, ...]
    fingerprints: tuple[str, ...]
    format: str
    shard_docs: int
    errors: str
    max_doc_chars: int


def docs_config(inputs, fmt: str, shard_docs: int, errors: str, max_doc_chars: int) -> DocsConfig:
    paths = check_readable([os.fspath(p) for p in inputs])
    names = tuple(Path(shown(p)).name for p in paths)  # a stream's copy is named as typed
    if len(set(names)) < len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"two inputs are named {dup}: ids name the file by its base name; rename one")
    return DocsConfig(tuple(paths), names, tuple(file_fingerprint(p) for p in paths), fmt, shard_docs,
                      errors, max_doc_chars)


def read_documents(path: str, name: str, fmt: str, errors: str, max_chars: int):
    """Yield (doc id, paragraphs, line) for one input; empty documents too (no paragraphs)."""
    if fmt == "line":
        for line in read_lines(path, errors=errors, max_chars=max_chars):
            yield f"{name}:{line.number}", [line.text], line.number
    elif fmt == "tsv":
        for line in read_lines(path, errors=errors, max_chars=max_chars, ids=True):
            if not line.id.strip():
                raise InputError(f"{line.path}:{line.number}: empty document id")
            yield line.id, [line.text], line.number
    else:
        paras: list[str] = []
        start = None
        for line in read_lines(path, errors=errors, max_chars=max_chars):
            if line.text.strip():
                start = start or line.number
                paras.append(line.text)
            elif paras:
                yield f"{name}:{start}", paras, start
                paras, start = [], None
        if paras:
            yield f"{name}:{start}", paras, start


@dataclasses.dataclass(frozen=True)
class Documents(Output):
    shards: tuple  # documents per shard
    files: tuple   # per input: path, documents, empty documents


class DocsStep(Step):
    """One pass over the inputs (a single item): documents in shards, then their counts."""

    name = "prepare_docs"
    output_type = Documents

    def shard_path(self, i: int) -> Path:
        return self.dir / f"docs_{i:05d}.jsonl"

    def run(self, item, progress: bool) -> None:
        cfg = self.config
        shards, buf, seen_ids = [], [], {}
        per_file = []
        for f, (path, name) in enumerate(zip(cfg.paths, cfg.names)):
            n_docs = n_empty = 0
            for doc_id, paras, line in read_documents(path, name, cfg.format, cfg.errors, cfg.max_doc_chars):
                if cfg.format == "tsv":
                    if doc_id in seen_ids:
                        raise InputError(f"{shown(path)}:{line}: document id {doc_id!r} repeats "
                                         f"(first at {seen_ids[doc_id]}); ids must be unique")
                    seen_ids[doc_id] = f"{shown(path)}:{line}"
                n_docs += 1
                if not any(p.strip() for p in paras):
                    n_empty += 1
                    continue
                buf.append({"id": doc_id, "file": f, "paras": paras})
                if len(buf) == cfg.shard_docs:
                    shards.append(self._write(len(shards), buf))
                    buf = []
            per_file.append({"path": shown(path), "documents": n_docs, "empty_documents": n_empty})
        if buf:
            shards.append(self._write(len(shards), buf))
        save_json(self.dir / COUNTS, {"shards": shards, "files": per_file})

    def summarize(self) -> Documents:
        return self.output(load_json(self.dir / COUNTS))

    def output(self, summary: dict) -> Documents:
        return Documents(self.key, str(self.dir), tuple(summary["shards"]), tuple(summary["files"]))

    def _write(self, i: int, docs: list[dict]) -> int:
        with atomic_open(self.shard_path(i)) as f:
            for d in docs:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        return len(docs)


# ---------------------------------------------------------------- 2. split, filter, identify

@dataclasses.dataclass(frozen=True)
class FilterStepConfig:
    docs: Documents = upstream()
    lang: str
    filters: FilterConfig
    lid: bool
    lid_threshold: float | None


def filter_shard(docs_path: str, out_path: str, counts_path: str, n_files: int, lang: str,
                 filters: FilterConfig, threshold: float | None) -> str:
    """One shard: kept sentences to out_path (id<TAB>sentence), counts to counts_path."""
    if Path(counts_path).exists():
        return counts_path
    from xlingua.data.langid import identify, is_language
    from xlingua.data.sentences import split_sentences

    counts = [Counter() for _ in range(n_files)]
    seconds = Counter()
    candidates = []  # (file, id, sentence) that passed the rule-based filters
    with open(docs_path, encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    for doc in docs:
        c = counts[doc["file"]]
        t0 = time.process_time()
        sentences = [s for p in doc["paras"] for s in split_sentences(p, lang)]
        t1 = time.process_time()
        c["sentences"] += len(sentences)
        for k, s in enumerate(sentences, 1):
            rule = failed_rule(s, lang, filters)
            if rule:
                c[rule] += 1
            else:
                candidates.append((doc["file"], f"{doc['id']}:{k}", s))
        t2 = time.process_time()
        seconds["split"] += t1 - t0
        seconds["filters"] += t2 - t1
    kept = []
    t0 = time.process_time()
    if threshold is not None and candidates:
        preds = identify([s for _, _, s in candidates])
        for (fi, sid, s), (pred, prob) in zip(candidates, preds):
            if not is_language(pred, lang):
                counts[fi]["lid_language"] += 1
            elif prob < threshold:
                counts[fi]["lid_threshold"] += 1
            else:
                kept.append((fi, sid, s))
    else:
        kept = candidates
    seconds["lid"] += time.process_time() - t0
    with atomic_open(out_path) as f:
        for fi, sid, s in kept:
            f.write(f"{fi}\t{sid}\t{s}\n")
    n_sent = sum(c["sentences"] for c in counts)
    save_json(counts_path, {"files": [dict(c) for c in counts],
                            "seconds": {k: round(v, 4) for k, v in seconds.items()},
                            "stage_sentences": {"split": n_sent, "filters": n_sent,
                                                "lid": len(candidates) if threshold is not None else 0}})
    return counts_path


@dataclasses.dataclass(frozen=True)
class Filtered(Output):
    n_shards: int

    def paths(self, i: int) -> tuple[str, str]:
        return shard_paths(self.dir, i)


def shard_paths(folder, i: int) -> tuple[str, str]:
    """Shard i's kept sentences (file<TAB>id<TAB>sentence) and its counts."""
    return str(Path(folder) / f"kept_{i:05d}.tsv"), str(Path(folder) / f"counts_{i:05d}.json")


class FilterStep(Step):
    """Per shard of documents (the items, local or on Ray): sentences, filters, identification."""

    name = "prepare_filter"
    spread = True
    key_order = ("docs_key", "docs_dir", "n_shards", "n_files", "lang", "filters", "lid", "lid_threshold")
    output_type = Filtered

    def old_key_fields(self) -> dict:
        docs = self.config.docs
        return {"docs_dir": "", "n_shards": len(docs.shards), "n_files": len(docs.files)}

    def items(self):
        return range(len(self.config.docs.shards))

    def item_done(self, i: int) -> bool:
        return Path(shard_paths(self.dir, i)[1]).exists()

    def run(self, i: int, progress: bool) -> None:
        cfg = self.config
        filter_shard(str(Path(cfg.docs.dir) / f"docs_{i:05d}.jsonl"), *shard_paths(self.dir, i),
                     len(cfg.docs.files), cfg.lang, cfg.filters, cfg.lid_threshold)

    def summarize(self) -> Filtered:
        return self.output({"n_shards": len(self.config.docs.shards)})
