"""`prepare`: crawled documents -> one sentence a line in one language, ready for `mine`
(stopes' monolingual pipeline, on one machine or a Ray cluster).

Steps, each cached in the work directory by its config and its inputs' fingerprints:

1. read (DocsStep): every input in order, checked (invalid UTF-8 and NUL bytes are errors
   naming file:line), documents cut into shards of `shard_docs` as JSON lines.
2. filter (FilterStep): per shard, local or on Ray: sentences (data.sentences), the filters
   (mining.filters), language identification (data.langid). Each shard's kept sentences and
   counts are written atomically, so a killed run redoes only unfinished shards.
3. write (prepare): shards in order, exact duplicates after normalisation dropped (the first
   is kept), `OUT/<lang>.txt` as `id<TAB>sentence` and `OUT/<lang>.summary.json`.

A sentence id is `DOC:K`: DOC is `FILE:LINE` (the document's first line in input file FILE,
by base name) or the document's own id (`id<TAB>text` inputs), K the sentence's position in
the document (1-based, counted before filtering), so every output line points back to where
it came from.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import unicodedata
from collections import Counter
from pathlib import Path

import regex

from xlingua.data.langid import lid_threshold
from xlingua.data.text import InputError, check_readable, read_lines
from xlingua.io import atomic_open, check_writable, file_fingerprint, remove_stale_partials
from xlingua.mining.cache import Step, load_json, save_json
from xlingua.mining.filters import RULES, FilterConfig, failed_rule
from xlingua.data.langs import normalize_lang

FORMATS = ("line", "blank", "tsv")


@dataclasses.dataclass
class PrepareConfig:
    lang: str
    format: str = "line"          # line: a document a line | blank: blank-line separated | tsv: id<TAB>text
    filters: FilterConfig = dataclasses.field(default_factory=FilterConfig)
    lid: bool = True
    lid_threshold: float | None = None   # None: the language's measured default (data.langid)
    dedup: bool = True
    shard_docs: int = 10_000
    errors: str = "strict"        # invalid UTF-8: strict (error) | replace (counted drop)
    max_doc_chars: int = 1_000_000

    def validate(self) -> None:
        normalize_lang(self.lang)
        if self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r}; choose one of {FORMATS}")
        if self.shard_docs < 1:
            raise ValueError("shard_docs must be at least 1")
        if self.lid_threshold is not None and not 0 <= self.lid_threshold <= 1:
            raise ValueError(f"lid threshold must lie in [0, 1], got {self.lid_threshold}")
        self.filters.validate()


# ---------------------------------------------------------------- 1. read documents

@dataclasses.dataclass(frozen=True)
class DocsConfig:
    paths: tuple[str, ...]
    names: tuple[str, ...]
    fingerprints: tuple[str, ...]
    format: str
    shard_docs: int
    errors: str
    max_doc_chars: int


def docs_config(inputs, config: PrepareConfig) -> DocsConfig:
    paths = check_readable([os.fspath(p) for p in inputs])
    if "-" in paths:
        raise InputError("prepare reads files (it fingerprints them to resume); save stdin to a file first")
    names = tuple(Path(p).name for p in paths)
    if len(set(names)) < len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"two inputs are named {dup}: ids name the file by its base name; rename one")
    return DocsConfig(tuple(paths), names, tuple(file_fingerprint(p) for p in paths),
                      config.format, config.shard_docs, config.errors, config.max_doc_chars)


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


class DocsStep(Step):
    name = "prepare_docs"

    def key_config(self):
        return dataclasses.replace(self.config, paths=())

    def shard_path(self, i: int) -> Path:
        return self.dir / f"docs_{i:05d}.jsonl"

    def run(self) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(self.dir)  # what a killed run was writing
        shards, buf, seen_ids = [], [], {}
        per_file = []
        for f, (path, name) in enumerate(zip(cfg.paths, cfg.names)):
            n_docs = n_empty = 0
            for doc_id, paras, line in read_documents(path, name, cfg.format, cfg.errors, cfg.max_doc_chars):
                if cfg.format == "tsv":
                    if doc_id in seen_ids:
                        raise InputError(f"{path}:{line}: document id {doc_id!r} repeats "
                                         f"(first at {seen_ids[doc_id]}); ids must be unique")
                    seen_ids[doc_id] = f"{path}:{line}"
                n_docs += 1
                if not any(p.strip() for p in paras):
                    n_empty += 1
                    continue
                buf.append({"id": doc_id, "file": f, "paras": paras})
                if len(buf) == cfg.shard_docs:
                    shards.append(self._write(len(shards), buf))
                    buf = []
            per_file.append({"path": path, "documents": n_docs, "empty_documents": n_empty})
        if buf:
            shards.append(self._write(len(shards), buf))
        return self.finish({"shards": shards, "files": per_file})

    def _write(self, i: int, docs: list[dict]) -> int:
        with atomic_open(self.shard_path(i)) as f:
            for d in docs:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        return len(docs)


# ---------------------------------------------------------------- 2. split, filter, identify

@dataclasses.dataclass(frozen=True)
class FilterStepConfig:
    docs_key: str
    docs_dir: str
    n_shards: int
    n_files: int
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


class FilterStep(Step):
    name = "prepare_filter"

    def key_config(self):
        return dataclasses.replace(self.config, docs_dir="")

    def paths(self, i: int) -> tuple[str, str, str]:
        return (str(Path(self.config.docs_dir) / f"docs_{i:05d}.jsonl"),
                str(self.dir / f"kept_{i:05d}.tsv"), str(self.dir / f"counts_{i:05d}.json"))

    def run(self, runner) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(self.dir)
        todo = [i for i in range(cfg.n_shards) if not Path(self.paths(i)[2]).exists()]
        runner.map(filter_shard, [(*self.paths(i), cfg.n_files, cfg.lang, cfg.filters,
                                   cfg.lid_threshold) for i in todo], label=f"prepare {cfg.lang}")
        return self.finish({"n_shards": cfg.n_shards})


# ---------------------------------------------------------------- 3. dedup and write

_NOT_WORD = regex.compile(r"[\p{P}\p{S}\s]+")


def dedup_key(sentence: str) -> bytes:
    """Sentences equal after NFKC, case folding and removing punctuation/symbols/spaces are
    duplicates (the normalisation of stopes' dedup, without its digit removal: numbers carry
    meaning for mining)."""
    norm = _NOT_WORD.sub("", unicodedata.normalize("NFKC", sentence).casefold())
    return hashlib.blake2b(norm.encode("utf-8"), digest_size=12).digest()


def output_paths(out_dir, lang: str) -> tuple[Path, Path]:
    out_dir = Path(out_dir)
    return out_dir / f"{lang}.txt", out_dir / f"{lang}.summary.json"


def prepare(inputs, out_dir, config: PrepareConfig, workdir=None, ray: str | None = None,
            show_progress: bool = True) -> dict:
    """Run the three steps; write `OUT/<lang>.txt` and `OUT/<lang>.summary.json`."""
    from xlingua.mining.runner import Runner

    config.validate()
    check_writable(out_dir, is_dir=True)
    workdir = Path(workdir) if workdir else default_workdir()
    lang = config.lang
    t_start = time.perf_counter()
    dstep = DocsStep(docs_config(inputs, config), workdir)
    t0 = time.process_time()
    dmeta = dstep.run()
    read_s = time.process_time() - t0
    threshold = None
    if config.lid:
        threshold = config.lid_threshold if config.lid_threshold is not None else lid_threshold(lang)
    fstep = FilterStep(FilterStepConfig(dstep.key, str(dstep.dir), len(dmeta["shards"]),
                                        len(dstep.config.paths), lang, config.filters, config.lid,
                                        threshold), workdir)
    fstep.run(Runner(ray, show_progress=show_progress))

    counts = [Counter() for _ in dmeta["files"]]
    seconds, stage_n = Counter(), Counter()
    out_path, summary_file = output_paths(out_dir, lang)
    for old in (summary_file, out_path):
        old.unlink(missing_ok=True)
    seen: set[bytes] = set()
    t0 = time.process_time()
    with atomic_open(out_path) as out:
        for i in range(fstep.config.n_shards):
            _, kept_path, counts_path = fstep.paths(i)
            shard = load_json(counts_path)
            for c, sc in zip(counts, shard["files"]):
                c.update(sc)
            seconds.update(shard["seconds"])
            stage_n.update(shard["stage_sentences"])
            with open(kept_path, encoding="utf-8") as f:
                for line in f:
                    fi, sid, s = line.rstrip("\n").split("\t", 2)
                    stage_n["dedup_write"] += 1
                    if config.dedup:
                        key = dedup_key(s)
                        if key in seen:
                            counts[int(fi)]["duplicate"] += 1
                            continue
                        seen.add(key)
                    counts[int(fi)]["kept"] += 1
                    out.write(f"{sid}\t{s}\n")
    seconds["dedup_write"] = time.process_time() - t0
    seconds["read"] = read_s
    stage_n["read"] = sum(f["documents"] for f in dmeta["files"])
    files = []
    for meta, c in zip(dmeta["files"], counts):
        dropped = {r: int(c.get(r, 0)) for r in RULES + ("duplicate",)}
        files.append({"path": meta["path"], "documents": meta["documents"],
                      "empty_documents": meta["empty_documents"], "sentences": int(c["sentences"]),
                      "dropped": dropped, "kept": int(c["kept"])})
    n_sent = sum(f["sentences"] for f in files)
    summary = {
        "output": str(out_path), "lang": lang,
        "lid": {"used": threshold is not None, "threshold": threshold,
                "reason": None if threshold is not None else
                ("disabled" if not config.lid else f"no measured identifier for {lang!r}: script check only")},
        "files": files,
        "sentences": n_sent, "kept": sum(f["kept"] for f in files),
        "dropped": {r: sum(f["dropped"][r] for f in files) for r in RULES + ("duplicate",)},
        "settings": {**dataclasses.asdict(config), "workdir": str(workdir), "ray": ray},
        "stage_cpu_seconds": {k: round(v, 3) for k, v in seconds.items()},
        # what each stage handled (documents for read) per CPU second of this process
        "stage_items": dict(stage_n),
        "stage_items_per_s": {k: round(stage_n[k] / v, 1) for k, v in seconds.items()
                              if v > 0 and stage_n[k]},
        "total_seconds": round(time.perf_counter() - t_start, 3),
    }
    try:
        save_json(summary_file, summary)
    except BaseException:
        out_path.unlink(missing_ok=True)  # sentences without their summary are not a finished run
        raise
    return summary


def default_workdir() -> Path:
    from xlingua.paths import xlingua_home

    return xlingua_home() / "prepare"
