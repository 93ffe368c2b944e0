"""What an Arabic-script normalisation before tokenising does to dev retrieval: removing short-vowel
marks (harakat), tatweel and superscript alef, each alone and all together, for each model given
(the shipped default alone, and with the Arabic-script rows). Jawi and Ajami spellings write the
harakat that the known Arabic-script languages rarely write, so they may split into pieces the
model never learnt.

Dev only: `xlingua extend-report`'s held-out pairs (general corpus dev slices). Both sides of each
pair go through the normaliser; only the sentences it changes are encoded again.

    python benchmarks/arabic_normalise.py -m xlingua-small-v2 -m xlingua-small-v3 \\
        --out docs/data/gate/arabic-normalise

Writes OUT/normalise.json and OUT/normalise.md (error % per language, mean of xx->en and en->xx,
per variant and model, with the number of sentences each variant changes).
"""
from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

from xlingua.data.arabic import HARAKAT, SUPERSCRIPT_ALEF, TATWEEL  # the marks each variant removes
from xlingua.encoders.loading import load_encoder
from xlingua.io import write_json, write_text
from xlingua.similarity import cosine_matrix, retrieval_accuracy
from xlingua.training.config import EvalConfig
from xlingua.training.evaluate import DevEvaluator
from xlingua.training.extend.report import LIMIT

#: the new Arabic-script languages, then every known Arabic-script language with a dev slice
LANGS = ["ace-Arab", "bjn-Arab", "knc-Arab", "ar", "fa", "ur", "ps", "sd", "ug", "ckb", "prs",
         "ks-Arab", "ary", "arz"]
VARIANTS = {
    "none": None,
    "harakat": f"[{HARAKAT}]",
    "tatweel": TATWEEL,
    "superscript alef": SUPERSCRIPT_ALEF,
    "all three": f"[{HARAKAT}{TATWEEL}{SUPERSCRIPT_ALEF}]",
}


def normaliser(variant: str):
    pattern = VARIANTS[variant]
    if pattern is None:
        return lambda text: text
    rx = re.compile(pattern)
    return lambda text: rx.sub("", text)


class CachedEncoder:
    """Encodes each distinct text once across all variants."""

    def __init__(self, encoder):
        self.encoder, self.cache = encoder, {}

    def encode(self, texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if todo:
            for text, vec in zip(todo, np.asarray(self.encoder.encode(todo))):
                self.cache[text] = vec
        return np.stack([self.cache[t] for t in texts])


def measure(model: str, sets: dict, log=print) -> dict:
    enc, out = CachedEncoder(load_encoder(model)), {}
    for variant in VARIANTS:
        norm, rows, t0 = normaliser(variant), {}, time.time()
        for lang in LANGS:
            xs, ys = sets[f"general_{lang}"]
            nx, ny = [norm(t) for t in xs], [norm(t) for t in ys]
            fwd, bwd = retrieval_accuracy(cosine_matrix(enc.encode(nx), enc.encode(ny)))
            rows[lang] = {"pairs": len(xs), "changed": sum(a != b for a, b in zip(xs + ys, nx + ny)),
                          "xx->en": round(100 - fwd, 2), "en->xx": round(100 - bwd, 2)}
        out[variant] = rows
        log(f"{model} {variant}: {time.time() - t0:.0f} s")
    return out


def table(results: dict) -> str:
    models, lines = list(results), []
    head = "| language | pairs | " + " | ".join(f"{m}, {v}" for m in models for v in VARIANTS) + " |"
    lines += [head, "|" + "---|" * (2 + len(models) * len(VARIANTS))]
    first = results[models[0]]
    for lang in LANGS:
        cells = []
        for m in models:
            for v in VARIANTS:
                r = results[m][v][lang]
                cells.append(f"{(r['xx->en'] + r['en->xx']) / 2:.1f}" + (f" ({r['changed']})" if v != "none" else ""))
        lines.append(f"| {lang} | {first['none'][lang]['pairs']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", "--model", action="append", required=True, help="encoder spec or model directory; repeatable")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    sets = DevEvaluator(EvalConfig(general_langs=LANGS, pair_files={}, limit=LIMIT)).sets
    results = {m: measure(m, sets) for m in args.model}
    md = ("Dev retrieval error %, mean of xx->en and en->xx (lower is better); in brackets, the "
          "sentences of both sides the variant changes.\n\n" + table(results) + "\n")
    write_json(args.out / "normalise.json", {"langs": LANGS, "variants": VARIANTS, "results": results})
    write_text(args.out / "normalise.md", md)
    print(md)


if __name__ == "__main__":
    main()
