"""`xlingua laser sweep`, the student size sweep: distil one student per (layers x width,
vocabulary) for the same training time, then measure each on the general dev slice (xx<->en
retrieval accuracy, cosine to the teacher) and its embedding speed in sentences per CPU second
on the same dev sentences, beside the teacher's. Writes sweep.json, sweep.md and sweep.png
(quality vs speed) under OUT.

Every run lives in OUT/<name> and resumes like `xlingua laser train`; a finished run is only
measured, and a measured one is skipped, so the sweep resumes after a kill. Runs with the same
vocabulary size share one SentencePiece model (learned by the first of them).
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

from xlingua.io import atomic_path, write_json, write_text
from xlingua.laser.trainer import LaserTrainConfig, train_laser


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """'1x192,2x256' -> [(1, 192), (2, 256)]: BiLSTM layers x units per direction."""
    out = []
    for item in (t.strip() for t in text.split(",")):
        layers, sep, hidden = item.partition("x")
        if not (sep and layers.isdigit() and hidden.isdigit() and int(layers) > 0 and int(hidden) > 0):
            raise ValueError(f"size {item!r} is not LAYERSxUNITS, e.g. 1x192")
        out.append((int(layers), int(hidden)))
    return out


def speed(encoder, texts: list[str], batch_size: int = 64) -> dict:
    """Sentences per CPU second and per wall second embedding `texts` once (after a warm-up).
    CPU seconds count this process's threads, so other jobs on the machine weigh less on them."""
    encoder.encode(texts[:32], batch_size=batch_size)
    t0, c0 = time.perf_counter(), time.process_time()
    encoder.encode(texts, batch_size=batch_size)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"sentences": len(texts), "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "per_cpu_second": len(texts) / cpu, "per_second": len(texts) / wall}


def dev_texts(langs, root=None) -> list[str]:
    """The dev slice's sentences, both sides, each once, in a fixed order."""
    from xlingua.data.general import read_general

    dev = read_general(list(langs), split="dev", root=root)
    return list(dict.fromkeys([p.text for p in dev] + [p.english for p in dev]))


def run_sweep(base: LaserTrainConfig, out: str | os.PathLike, sizes: list[tuple[int, int]], vocab_sizes: list[int],
              minutes: float, *, teacher_encoder=None, teacher_cache=None, show_progress: bool = True,
              echo=print) -> dict:
    """Train (or resume) and measure every student; returns the report also written to OUT."""
    from xlingua.encoders.laser import LaserEncoder
    from xlingua.encoders.loading import load_encoder
    from xlingua.laser.distill import dev_scores

    if not base.dev_langs:
        raise ValueError("the sweep ranks students on the general dev slice: give dev languages")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    texts = dev_texts(base.dev_langs)
    teacher_path = out / "teacher.json"
    if teacher_path.exists():
        teacher_row = json.loads(teacher_path.read_text(encoding="utf-8"))
    else:
        teacher = teacher_encoder if teacher_encoder is not None else load_encoder(base.teacher)
        echo(f"timing the teacher {base.teacher} on {len(texts)} dev sentences")
        dev = dev_scores(teacher, base.teacher, base.dev_langs, teacher_encoder=teacher, cache_dir=teacher_cache)
        teacher_row = {"name": base.teacher, "accuracy": dev["accuracy"], **speed(teacher, texts)}
        write_json(teacher_path, teacher_row)
    rows = []
    for vocab in vocab_sizes:
        shared_spm = None
        for layers, hidden in sizes:
            name = f"L{layers}x{hidden}-v{vocab}"
            run = out / name
            row_path = run / "sweep_row.json"
            if row_path.exists():
                rows.append(json.loads(row_path.read_text(encoding="utf-8")))
                shared_spm = shared_spm or run / "spm.model"
                continue
            run.mkdir(exist_ok=True)
            if shared_spm and not (run / "spm.model").exists():
                shutil.copyfile(shared_spm, run / "spm.model")
            cfg = replace(base, layers=layers, hidden=hidden, vocab_size=vocab, max_minutes=minutes)
            echo(f"{name}: training for {minutes:g} minutes")
            log = train_laser(cfg, run, show_progress=show_progress, teacher_encoder=teacher_encoder,
                              teacher_cache=teacher_cache)
            shared_spm = shared_spm or run / "spm.model"
            enc = LaserEncoder(str(run))
            row = {"name": name, "layers": layers, "hidden": hidden, "vocab": vocab, "dim": enc.dim,
                   "params": log["encoder_params"], "mb": round(log["encoder_bytes"] / 1e6, 1),
                   "steps": log["steps"], "train_seconds": log["train_seconds"],
                   "accuracy": log["dev"]["accuracy"], "teacher_cosine": log["dev"]["teacher_cosine"],
                   **speed(enc, texts)}
            write_json(row_path, row)
            rows.append(row)
            echo(json.dumps(row))
    report = {"teacher": teacher_row, "rows": rows, "minutes_per_run": minutes, "dev_langs": base.dev_langs,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count()}
    write_json(out / "sweep.json", report)
    write_text(out / "sweep.md", markdown(report))
    plot(report, out / "sweep.png")
    return report


def markdown(report: dict) -> str:
    t = report["teacher"]
    lines = ["| student | params | MB | steps | train s | dev acc | cos to teacher | sent / CPU s | x teacher |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(f"| {r['name']} | {r['params']:,} | {r['mb']} | {r['steps']:,} | {r['train_seconds']:.0f} | "
                     f"{r['accuracy']:.1f} | {r['teacher_cosine']:.3f} | {r['per_cpu_second']:.0f} | "
                     f"{r['per_cpu_second'] / t['per_cpu_second']:.1f} |")
    lines.append(f"| teacher {t['name']} | | | | | {t['accuracy']:.1f} | 1 | {t['per_cpu_second']:.0f} | 1 |")
    return "\n".join(lines) + "\n"


def plot(report: dict, path: Path) -> None:
    """Dev accuracy against sentences per CPU second (log scale), one point per student, the teacher as a star."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5), dpi=120)
    for vocab in sorted({r["vocab"] for r in report["rows"]}):
        rows = [r for r in report["rows"] if r["vocab"] == vocab]
        ax.scatter([r["per_cpu_second"] for r in rows], [r["accuracy"] for r in rows], label=f"vocabulary {vocab:,}")
        for r in rows:
            ax.annotate(f"{r['layers']}x{r['hidden']}", (r["per_cpu_second"], r["accuracy"]),
                        textcoords="offset points", xytext=(4, 4), fontsize=8)
    t = report["teacher"]
    ax.scatter([t["per_cpu_second"]], [t["accuracy"]], marker="*", s=150, c="k", label=f"teacher {t['name']}")
    ax.set_xscale("log")
    ax.set_xlabel("sentences per CPU second (general dev sentences)")
    ax.set_ylabel("dev xx<->en retrieval accuracy (%)")
    ax.set_title(f"BiLSTM students, {report['minutes_per_run']:g} training minutes each")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
