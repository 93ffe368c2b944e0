"""The dev report of the low-resource corpus (`xlingua extend-report --lowres`): retrieval error
per language, xx->pivot and pivot->xx, among its dev slice (data.lowres), scored as `dev_report`
scores the general corpus's slices (cosine, 100 - top-1 accuracy).

A language with Bible and non-Bible pairs in its slice gets each domain's figure too, retrieval
among that domain's pairs alone (the rows and columns of the slice's score matrix); a language
of one domain has its whole figure as that domain's. The means: over the languages, and per
domain over the languages that have it.
"""
from __future__ import annotations

import numpy as np

from xlingua.data.lowres import DOMAINS
from xlingua.similarity import cosine_matrix, retrieval_accuracy

FWD, BWD = "xx->pivot", "pivot->xx"


def _errors(scores: np.ndarray) -> dict:
    fwd, bwd = retrieval_accuracy(scores)
    return {"pairs": len(scores), FWD: 100 - fwd, BWD: 100 - bwd}


def _mean(rows: list[dict]) -> dict:
    return {"langs": len(rows), FWD: round(float(np.mean([r[FWD] for r in rows])), 2),
            BWD: round(float(np.mean([r[BWD] for r in rows])), 2)}


def _rounded(row: dict) -> dict:
    return {k: round(v, 2) if k in (FWD, BWD) else v for k, v in row.items()}


def _pivots(encoder, pairs: list) -> np.ndarray:
    """The pivot side's rows, each pivot language embedded as that language (a routed model
    embeds it by the model its student routes beside)."""
    out = None
    for pivot in sorted({p.pivot_lang for p in pairs}):
        rows = [i for i, p in enumerate(pairs) if p.pivot_lang == pivot]
        vecs = np.asarray(encoder.encode([pairs[i].pivot for i in rows], lang=pivot))
        out = np.zeros((len(pairs), vecs.shape[1]), dtype=np.float32) if out is None else out
        out[rows] = vecs
    return out


def lowres_report(encoder, dev: dict[str, list]) -> dict:
    """{"langs": {lang: {"pairs", "pivots", FWD, BWD, "domains": {domain: {"pairs", FWD, BWD}}}},
    "mean": {"langs", FWD, BWD}, "domains": {domain: mean over the languages that have it}}, error
    % of `encoder` (anything with `encode(texts, lang=)`) on `dev` (data.lowres.dev_by_language)."""
    langs, whole, per_domain = {}, [], {d: [] for d in DOMAINS}
    for lang, pairs in dev.items():
        scores = cosine_matrix(np.asarray(encoder.encode([p.text for p in pairs], lang=lang)), _pivots(encoder, pairs))
        row = _errors(scores)
        whole.append(row)
        domains = {}
        for d in DOMAINS:
            rows = np.array([i for i, p in enumerate(pairs) if p.domain == d])
            if len(rows) == len(pairs):
                domains[d] = row
            elif len(rows):
                domains[d] = _errors(scores[np.ix_(rows, rows)])
        for d, r in domains.items():
            per_domain[d].append(r)
        langs[lang] = {**_rounded(row), "pivots": sorted({p.pivot_lang for p in pairs}),
                       "domains": {d: _rounded(r) for d, r in domains.items()}}
    return {"langs": langs, "mean": _mean(whole) if whole else {},
            "domains": {d: _mean(rows) for d, rows in per_domain.items() if rows}}


def format_lowres_report(report: dict) -> str:
    """The report as a table for the terminal: a row per language, below it a row per domain
    where it has two, then the means."""
    lines = ["dev retrieval error %, low-resource corpus dev slices (lower is better)",
             f"{'lang':<20} {'pairs':>6} {'pivot':>6} {FWD:>10} {BWD:>10}"]
    for lang, r in report["langs"].items():
        lines.append(f"{lang:<20} {r['pairs']:>6} {'+'.join(r['pivots']):>6} {r[FWD]:>10.1f} {r[BWD]:>10.1f}")
        if len(r["domains"]) > 1:
            lines += [f"{'  ' + d:<20} {x['pairs']:>6} {'':>6} {x[FWD]:>10.1f} {x[BWD]:>10.1f}"
                      for d, x in r["domains"].items()]
    means = [("mean", report["mean"])] + [(f"mean {d}", m) for d, m in report["domains"].items()]
    for name, m in means:
        if m:
            lines.append(f"{name + ' (' + str(m['langs']) + ' langs)':<27} {'':>6} {m[FWD]:>10.1f} {m[BWD]:>10.1f}")
    return "\n".join(lines)
