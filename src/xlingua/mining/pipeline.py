"""`mine`: the whole bitext-mining pipeline, each step cached in the work directory.

shard -> embed (float16; or import the rows `xlingua embed` wrote) -> index -> kNN both ways
-> score [-> rescore by a second model] -> select -> write. Every step's directory is keyed by its config and its inputs'
keys; a rerun (also after kill -9) reuses finished steps and shard files, and writes
byte-identical output."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from xlingua.data.text import InputError, read_gold
from xlingua.encoders.base import Encoder
from xlingua.io import check_writable
from xlingua.mining.cache import peak_memory_mb, save_json
from xlingua.mining.corpus import ShardedCorpus, ShardStep, shard_config
from xlingua.mining.embed import (ConcatConfig, ConcatStep, EmbedConfig, EmbedStep, ImportStep,
                                  import_config, resolve_encoder)
from xlingua.mining.knn import IndexConfig, IndexStep, KnnConfig, KnnStep
from xlingua.data.langs import normalize_lang
from xlingua.mining.rescore import RescoreConfig, RescoreStep
from xlingua.mining.runner import Runner
from xlingua.mining.score import ScoreConfig, ScoreStep
from xlingua.mining.write import write_pairs
from xlingua.similarity.calibrate import best_threshold
from xlingua.similarity.margin import check_score
from xlingua.similarity.select import MODES, apply_threshold, select_pairs


@dataclasses.dataclass
class MineConfig:
    src_lang: str
    tgt_lang: str
    model: str = "bundled"
    margin: str = "ratio"
    k: int = 4
    mode: str = "max"
    threshold: float | None = None
    dedup: bool = False
    shard_size: int = 100_000
    index: str = "auto"  # auto | Flat | any FAISS factory string, e.g. OPQ64,IVF1024,PQ64
    nprobe: int = 128
    flat_max_bytes: int = 4 << 30
    batch_size: int = 64
    alpha: float = 0.5
    check_lang: bool = True
    src_embeddings: str | None = None  # a store `xlingua embed -o DIR --shard-size N` wrote
    tgt_embeddings: str | None = None
    rescore: str | None = None  # a second model that re-scores the first one's best candidates (mining.rescore)
    keep: float = 0.4  # with rescore: candidates re-scored, as a fraction of the source sentences

    def validate(self) -> None:
        self.src_lang = normalize_lang(self.src_lang)
        self.tgt_lang = normalize_lang(self.tgt_lang)
        check_score(self.margin)
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose one of {MODES}")
        if self.k < 1:
            raise ValueError("k must be at least 1")
        if self.shard_size < 1:
            raise ValueError("shard size must be at least 1")
        if self.rescore is not None and not 0 < self.keep <= 1:
            raise ValueError(f"keep must be in (0, 1], got {self.keep}")


class _Clock:
    def __init__(self):
        self.stages: dict[str, dict] = {}

    def run(self, name: str, step, fn):
        cached = step.done() if step is not None else False
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        # CPU seconds of this process (all its threads; not Ray workers' work): unlike wall
        # time, unmoved by other jobs sharing the machine
        self.stages[name] = {"seconds": round(time.perf_counter() - t0, 3),
                             "cpu_seconds": round(time.process_time() - c0, 3), "cached": cached,
                             "peak_rss_mb": round(peak_memory_mb(), 1)}
        return out


def default_workdir() -> Path:
    from xlingua.paths import xlingua_home

    return xlingua_home() / "mine"


@dataclasses.dataclass
class Side:
    """One corpus through the pipeline: its shard step, then its vector step."""
    name: str  # "src" or "tgt"
    lang: str
    shard: ShardStep
    meta: dict
    vectors: object = None  # EmbedStep, ImportStep or ConcatStep
    dim: int = 0

    @property
    def sizes(self) -> tuple:
        return tuple(self.meta["shards"])


@dataclasses.dataclass
class _Run:
    """What every step of one `mine` call shares."""
    config: MineConfig
    workdir: Path
    runner: Runner
    clock: _Clock
    show_progress: bool

    def log(self, msg: str) -> None:
        if self.show_progress:
            print(msg, flush=True)


def mine(src: str | Path, tgt: str | Path, output: str | Path, config: MineConfig,
         workdir: str | Path | None = None, encoder: Encoder | None = None,
         ray: str | None = None, calibrate: str | Path | None = None,
         show_progress: bool = True, prepare_format: str | None = None,
         rescore_encoder: Encoder | None = None) -> dict:
    """Mine `src` x `tgt` into `output` (gzipped TSV) and `<output>.summary.json`.

    `config.model` may list several encoder specs ("bundled,use"): their cosines are averaged
    (see ConcatStep). `encoder` (one Encoder or a list) overrides config.model, and
    `rescore_encoder` config.rescore.
    `config.src_embeddings` / `tgt_embeddings` take a side's vectors from a store that
    `xlingua embed` wrote for the same file instead of embedding it. With `prepare_format`
    the two inputs are raw documents in that format (see mining.prepare): each is prepared
    first, with default settings, and its sentences are mined."""
    config.validate()
    if calibrate is not None and config.threshold is not None:
        raise ValueError("give either a threshold or a gold set to calibrate one, not both")
    output = Path(output)
    gold_lines = read_gold(calibrate) if calibrate is not None else None
    check_writable(output)
    run = _Run(config, Path(workdir) if workdir else default_workdir(),
               Runner(ray, show_progress=show_progress), _Clock(), show_progress)
    t_start = time.perf_counter()
    prepared = {}
    if prepare_format is not None:
        prepared = _prepare(run, src, tgt, prepare_format)
        src, tgt = prepared["src"]["output"], prepared["tgt"]["output"]
    src_side, tgt_side = _shard(run, src, tgt)
    src_corpus, tgt_corpus = ShardedCorpus(src_side.shard), ShardedCorpus(tgt_side.shard)
    gold = None if gold_lines is None else check_gold(
        gold_lines, calibrate, {"src": src_side.meta, "tgt": tgt_side.meta},
        src_corpus.all_ids(), tgt_corpus.all_ids())
    stores = {"src": config.src_embeddings, "tgt": config.tgt_embeddings}
    encoders = [] if all(stores.values()) else _encoders(config, encoder)
    for side in (src_side, tgt_side):
        _vectors(run, side, encoders, stores[side.name])
    model = _same_model(src_side, tgt_side)
    knn = {"fwd": _knn(run, src_side, tgt_side, "fwd"), "bwd": _knn(run, tgt_side, src_side, "bwd")}
    best = _score(run, src_side, tgt_side, knn)
    rescored = None
    if config.rescore or rescore_encoder is not None:
        rescored = _rescore(run, best, src_corpus, tgt_corpus, rescore_encoder or resolve_encoder(config.rescore))
        candidates = rescored.load()
    else:
        candidates = select_pairs(best.load(), config.mode)
    n_candidates, calibration, threshold, (s, a, b) = run.clock.run(
        "select", None, lambda: _select(run, candidates, gold, src_corpus, tgt_corpus))
    written = run.clock.run("write", None, lambda: _write(output, s, a, b, src_corpus, tgt_corpus,
                                                          src_side.meta["has_ids"]))
    run.log(f"[write] {written:,} pairs -> {output}")
    summary = {
        "output": str(output),
        "src": _side_summary(src_side.meta),
        "tgt": _side_summary(tgt_side.meta),
        "candidates": int(n_candidates),
        "written": int(written),
        "threshold": threshold,
        "settings": {**dataclasses.asdict(config), "encoder": model,
                     "index": knn["fwd"][1]["factory"], "dim": src_side.dim,
                     "workdir": str(run.workdir), "ray": ray},
        "index": {"fwd": knn["fwd"][1], "bwd": knn["bwd"][1]},
        "calibration": calibration,
        "rescore": rescored.meta() if rescored else None,
        "prepare": prepared or None,
        "artefacts": {f"{side.name}_{kind}": str(step.dir) for side in (src_side, tgt_side)
                      for kind, step in (("shard", side.shard), ("embed", side.vectors))},
        "timings": run.clock.stages,
        "total_seconds": round(time.perf_counter() - t_start, 3),
        "peak_rss_mb": round(peak_memory_mb(), 1),
    }
    try:
        save_json(summary_path(output), summary)
    except BaseException:
        output.unlink(missing_ok=True)  # pairs without their summary are not a finished run
        raise
    return summary


def check_gold(lines: list[tuple[int, str, str]], path, metas: dict, src_ids: list[str],
               tgt_ids: list[str]) -> set[tuple[str, str]]:
    """The gold pairs, each checked against the corpora: without ids a side is a 1-based line
    number of its file; with ids it must be one of the file's ids (with --dedup a removed
    duplicate's id is allowed and counted as not in the corpora). Anything else names GOLD:LINE."""
    known = {"src": set(src_ids), "tgt": set(tgt_ids)}
    gold = set()
    for no, *pair in lines:
        for side, value in zip(("src", "tgt"), pair):
            meta = metas[side]
            if not meta["has_ids"]:
                if not value.isdigit() or not 1 <= int(value) <= meta["lines"]:
                    raise InputError(f"{path}:{no}: {side} {value!r} is not a line number of "
                                     f"{meta['path']} (1 to {meta['lines']:,})")
            elif value not in known[side] and not meta["duplicates_removed"]:
                raise InputError(f"{path}:{no}: {side} id {value!r} is not in {meta['path']}")
        gold.add(tuple(v if metas[side]["has_ids"] else str(int(v)) for side, v in zip(("src", "tgt"), pair)))
    return gold


def _prepare(run: _Run, src, tgt, fmt: str) -> dict:
    """0. Raw documents -> sentences in each side's language (mining.prepare, defaults)."""
    from xlingua.mining.prepare import PrepareConfig, prepare

    out = {}
    for name, path, lang in (("src", src, run.config.src_lang), ("tgt", tgt, run.config.tgt_lang)):
        out[name] = run.clock.run(f"prepare_{name}", None, lambda: prepare(
            [path], run.workdir / "prepared" / name, PrepareConfig(lang, format=fmt),
            workdir=run.workdir, ray=run.runner.ray_address, show_progress=run.show_progress))
        run.log(f"[prepare] {name}: kept {out[name]['kept']:,} of {out[name]['sentences']:,} sentences")
    return out


def _shard(run: _Run, src, tgt) -> tuple[Side, Side]:
    """1. Each corpus into shards of sentences (blank lines, and with dedup repeats, skipped)."""
    cfg = run.config
    sides = []
    for name, path, lang in (("src", src, cfg.src_lang), ("tgt", tgt, cfg.tgt_lang)):
        step = ShardStep(shard_config(path, lang, cfg.shard_size, cfg.dedup, cfg.check_lang), run.workdir)
        meta = run.clock.run(f"shard_{name}", step, step.run)
        sides.append(Side(name, lang, step, meta))
        run.log(f"[shard] {name}: {meta['sentences']:,} sentences in {len(meta['shards'])} shard(s)")
    src_side, tgt_side = sides
    if src_side.meta["has_ids"] != tgt_side.meta["has_ids"]:
        with_ids = src_side if src_side.meta["has_ids"] else tgt_side
        raise ValueError(f"unequal id formats: {with_ids.name} file {with_ids.meta['path']} has "
                         "id<TAB>sentence lines, the other has none; give ids on both sides or on neither")
    return src_side, tgt_side


def _encoders(config: MineConfig, encoder) -> list[Encoder]:
    if encoder is not None:
        return list(encoder) if isinstance(encoder, (list, tuple)) else [encoder]
    return [resolve_encoder(m.strip()) for m in config.model.split(",") if m.strip()]


def _vectors(run: _Run, side: Side, encoders: list[Encoder], store: str | None) -> None:
    """2. The side's unit vectors: imported from a store, or one embedding per encoder
    (several are combined into one, ConcatStep)."""
    n_shards = len(side.sizes)
    if store:
        step = ImportStep(import_config(side.shard, store), run.workdir)
        run.clock.run(f"import_{side.name}", step, step.run)
        run.log(f"[import] {side.name}: rows of {store}")
    else:
        steps = []
        for enc in encoders:
            step = EmbedStep(EmbedConfig(shards_key=side.shard.key, shards_dir=str(side.shard.dir),
                                         n_shards=n_shards, lang=side.lang, encoder=enc.fingerprint(),
                                         batch_size=run.config.batch_size), run.workdir)
            name = f"embed_{side.name}" if len(encoders) == 1 else f"embed_{side.name}_{enc.name}"
            run.clock.run(name, step, lambda: step.run(enc, run.runner))
            steps.append(step)
            run.log(f"[embed] {side.name} {enc.name}: {'cached' if run.clock.stages[name]['cached'] else 'computed'}")
        if len(steps) > 1:
            step = ConcatStep(ConcatConfig(embed_keys=tuple(s.key for s in steps),
                                           embed_dirs=tuple(str(s.dir) for s in steps), n_shards=n_shards),
                              run.workdir)
            model = ",".join(e.fingerprint() for e in encoders)
            run.clock.run(f"combine_{side.name}", step, lambda: step.run(model))
    side.vectors, side.dim = step, step.meta()["dim"]


def _same_model(src: Side, tgt: Side) -> str:
    """Vectors of two models are not comparable: both sides must come from the same one."""
    a, b = src.vectors.meta()["model"], tgt.vectors.meta()["model"]
    if a != b or src.dim != tgt.dim:
        raise ValueError(f"the two sides' vectors come from different models ({a}, {src.dim}-d; "
                         f"{b}, {tgt.dim}-d): embed both with the same model")
    return a


def _knn(run: _Run, query: Side, db: Side, name: str) -> tuple:
    """3-4. Index the database side, search it with every shard of the query side."""
    cfg = run.config
    istep = IndexStep(IndexConfig(embed_key=db.vectors.key, embed_dir=str(db.vectors.dir), sizes=db.sizes,
                                  dim=db.dim, factory=cfg.index, nprobe=cfg.nprobe,
                                  flat_max_bytes=cfg.flat_max_bytes), run.workdir)
    imeta = run.clock.run(f"index_{db.name}", istep, istep.run)
    kstep = KnnStep(KnnConfig(index_key=istep.key, index_dir=str(istep.dir), query_key=query.vectors.key,
                              query_dir=str(query.vectors.dir), db_dir=str(db.vectors.dir),
                              query_sizes=query.sizes, db_sizes=db.sizes, factory=imeta["factory"],
                              nprobe=cfg.nprobe, k=cfg.k), run.workdir)
    kmeta = run.clock.run(f"knn_{name}", kstep, lambda: kstep.run(run.runner))
    run.log(f"[knn] {name}: index {imeta['factory']}" +
            (f", recall {kmeta['recall']}" if "recall" in kmeta else ""))
    return kstep, kmeta


def _score(run: _Run, src: Side, tgt: Side, knn: dict) -> ScoreStep:
    """5. Each sentence's best candidate and its score (similarity.bitext)."""
    cfg = run.config
    step = ScoreStep(ScoreConfig(fwd_key=knn["fwd"][0].key, bwd_key=knn["bwd"][0].key,
                                 src_embed_key=src.vectors.key, tgt_embed_key=tgt.vectors.key,
                                 margin=cfg.margin, k=cfg.k, alpha=cfg.alpha), run.workdir)
    run.clock.run("score", step, lambda: step.run(knn["fwd"][0], knn["bwd"][0], src.vectors, tgt.vectors,
                                                  len(src.sizes), len(tgt.sizes)))
    return step


def _rescore(run: _Run, best: ScoreStep, src_corpus, tgt_corpus, encoder: Encoder) -> RescoreStep:
    """5b. The second model's cosine of the first model's best candidates (mining.rescore)."""
    cfg = run.config
    step = RescoreStep(RescoreConfig(best.key, cfg.mode, cfg.keep, encoder.fingerprint(), cfg.src_lang,
                                     cfg.tgt_lang), run.workdir)
    meta = run.clock.run("rescore", step, lambda: step.run(best.load(), src_corpus, tgt_corpus, encoder,
                                                           run.show_progress))
    run.log(f"[rescore] {encoder.name}: {meta['kept']:,} of {meta['candidates']:,} candidates")
    return step


def _select(run: _Run, candidates: tuple, gold, src_corpus, tgt_corpus) -> tuple:
    """6. The candidate pairs (the mode's, or the re-scored ones), then the threshold: given, or
    calibrated on the gold pairs (cheap: recomputed from the cached scores)."""
    s, a, b = candidates
    calibration, threshold = None, run.config.threshold
    if gold is not None:
        src_ids, tgt_ids = np.array(src_corpus.all_ids()), np.array(tgt_corpus.all_ids())
        pairs = zip(src_ids[a].tolist(), tgt_ids[b].tolist())
        correct = np.fromiter((p in gold for p in pairs), dtype=bool, count=len(a))
        known_src, known_tgt = set(src_ids.tolist()), set(tgt_ids.tolist())
        missing = sum(1 for x, y in gold if x not in known_src or y not in known_tgt)
        calibration = {**best_threshold(s, correct, len(gold)), "gold_pairs_not_in_corpora": missing}
        threshold = calibration["threshold"]
        run.log(f"[calibrate] threshold {threshold:.6f}: P {calibration['precision']:.4f} "
                f"R {calibration['recall']:.4f} F1 {calibration['f1']:.4f}")
    return len(s), calibration, threshold, apply_threshold(s, a, b, threshold)


def _write(output: Path, s, a, b, src_corpus, tgt_corpus, with_ids: bool) -> int:
    """7. The pairs file. An older output and its summary go first: whatever is left after a
    failure is never mistaken for this run's result."""
    for old in (summary_path(output), output):
        old.unlink(missing_ok=True)
    return write_pairs(output, s, a, b, src_corpus, tgt_corpus, with_ids)


def summary_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".summary.json")


def _side_summary(meta: dict) -> dict:
    return {k: meta[k] for k in ("path", "lang", "lines", "blank", "duplicates_removed",
                                 "sentences", "has_ids", "longest_chars")}


def load_summary(output) -> dict:
    return json.loads(summary_path(output).read_text(encoding="utf-8"))
