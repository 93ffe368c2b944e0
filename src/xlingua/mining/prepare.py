"""`prepare`: crawled documents -> one sentence a line in one language, ready for `mine`
(stopes' monolingual pipeline, on one machine or a Ray cluster).

Two cached steps (mining.prepare_steps: read documents into shards; split, filter and identify
per shard), then:

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
import time
import unicodedata
from collections import Counter
from pathlib import Path

import regex

from xlingua.data.langid import lid_threshold
from xlingua.data.langs import normalize_lang
from xlingua.data.spool import Spool
from xlingua.io import atomic_open, check_writable
from xlingua.mining.cache import load_json, save_json
from xlingua.mining.filters import RULES, FilterConfig
from xlingua.mining.prepare_steps import DocsStep, Documents, FilterStep, FilterStepConfig, Filtered, docs_config
from xlingua.mining.runner import Runner

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
            show_progress: bool = True, runner: Runner | None = None, side: str = "") -> dict:
    """Run the two steps and write `OUT/<lang>.txt` and `OUT/<lang>.summary.json`. Given a
    `runner` (mine's), its timings get this run's stages, named with `side`. An input may be
    a pipe or `-` (stdin): it is read once into a checked copy in the work directory
    (data.spool), removed at the end; the steps key it by content, so the same bytes piped
    again reuse the cache."""
    config.validate()
    check_writable(out_dir, is_dir=True)
    workdir = Path(workdir) if workdir else default_workdir()
    with Spool(inputs, workdir, errors=config.errors, max_chars=config.max_doc_chars,
               ids=config.format == "tsv") as spool:
        return _prepare(spool.paths, out_dir, config, workdir, runner or Runner(ray, show_progress=show_progress),
                        side)


def _prepare(inputs: list[str], out_dir, config: PrepareConfig, workdir: Path, runner: Runner, side: str) -> dict:
    suffix = f"_{side}" if side else ""
    t_start = time.perf_counter()
    t0 = time.process_time()
    docs = runner.run(DocsStep(docs_config(inputs, config.format, config.shard_docs, config.errors,
                                           config.max_doc_chars), workdir), f"prepare_docs{suffix}")
    read_s = time.process_time() - t0
    threshold = None
    if config.lid:
        threshold = config.lid_threshold if config.lid_threshold is not None else lid_threshold(config.lang)
    filtered = runner.run(FilterStep(FilterStepConfig(docs, config.lang, config.filters, config.lid, threshold),
                                     workdir), f"prepare_filter{suffix}")
    out_path, summary_file = output_paths(out_dir, config.lang)
    with runner.timed(f"prepare_write{suffix}"):
        counts, seconds, stage_n = _write(filtered, docs, out_path, summary_file, config.dedup)
    seconds["read"] = read_s
    stage_n["read"] = sum(f["documents"] for f in docs.files)
    summary = {
        "output": str(out_path), "lang": config.lang,
        "lid": {"used": threshold is not None, "threshold": threshold,
                "reason": None if threshold is not None else
                ("disabled" if not config.lid else f"no measured identifier for {config.lang!r}: script check only")},
        **_file_counts(docs, counts),
        "settings": {**dataclasses.asdict(config), "workdir": str(workdir), "ray": runner.ray_address},
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


def _write(filtered: Filtered, docs: Documents, out_path: Path, summary_file: Path,
           dedup: bool) -> tuple[list[Counter], Counter, Counter]:
    """3. The kept sentences of every shard in order, repeats dropped; counts per input file,
    CPU seconds and items per stage. An older output and its summary go first."""
    counts = [Counter() for _ in docs.files]
    seconds, stage_n = Counter(), Counter()
    for old in (summary_file, out_path):
        old.unlink(missing_ok=True)
    seen: set[bytes] = set()
    t0 = time.process_time()
    with atomic_open(out_path) as out:
        for i in range(filtered.n_shards):
            kept_path, counts_path = filtered.paths(i)
            shard = load_json(counts_path)
            for c, sc in zip(counts, shard["files"]):
                c.update(sc)
            seconds.update(shard["seconds"])
            stage_n.update(shard["stage_sentences"])
            with open(kept_path, encoding="utf-8") as f:
                for line in f:
                    fi, sid, s = line.rstrip("\n").split("\t", 2)
                    stage_n["dedup_write"] += 1
                    if dedup:
                        key = dedup_key(s)
                        if key in seen:
                            counts[int(fi)]["duplicate"] += 1
                            continue
                        seen.add(key)
                    counts[int(fi)]["kept"] += 1
                    out.write(f"{sid}\t{s}\n")
    seconds["dedup_write"] = time.process_time() - t0
    return counts, seconds, stage_n


def _file_counts(docs: Documents, counts: list[Counter]) -> dict:
    files = []
    for meta, c in zip(docs.files, counts):
        dropped = {r: int(c.get(r, 0)) for r in RULES + ("duplicate",)}
        files.append({"path": meta["path"], "documents": meta["documents"],
                      "empty_documents": meta["empty_documents"], "sentences": int(c["sentences"]),
                      "dropped": dropped, "kept": int(c["kept"])})
    return {"files": files, "sentences": sum(f["sentences"] for f in files),
            "kept": sum(f["kept"] for f in files),
            "dropped": {r: sum(f["dropped"][r] for f in files) for r in RULES + ("duplicate",)}}


def default_workdir() -> Path:
    from xlingua.paths import xlingua_home

    return xlingua_home() / "prepare"
