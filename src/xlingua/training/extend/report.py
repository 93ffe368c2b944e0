"""The dev report of an extension: retrieval error per language, xx->en and en->xx, over each
language's held-out pairs (the general corpus's dev slices, or a user's pair file's), read
through the dev evaluation the trainer chooses its best step with."""
from __future__ import annotations

import numpy as np

from xlingua.similarity import cosine_matrix, retrieval_accuracy
from xlingua.training.config import EvalConfig
from xlingua.training.evaluate import DevEvaluator

LIMIT = 500  # pairs per language: every NLLB-Seed dev slice whole


def dev_report(encoder, langs: list[str], pair_files: dict[str, str] | None = None,
               strip_harakat: bool = False) -> dict[str, dict]:
    """{lang: {"pairs", "xx->en", "en->xx"}} error % (100 - top-1 accuracy, cosine) of `encoder`
    (anything with `encode(texts, lang=)`); a language in `pair_files` is read from its file's dev slice.
    With `strip_harakat`, the non-English side is read without its Arabic-script vowel marks (as
    text typed without them comes), and each row also counts the sentences that changed."""
    from xlingua.data.arabic import strip_harakat as strip

    pair_files = dict(pair_files or {})
    general = [l for l in langs if l not in pair_files]
    sets = DevEvaluator(EvalConfig(general_langs=general, pair_files=pair_files, limit=LIMIT)).sets
    out = {}
    for lang in langs:
        xs, ys = sets[f"pairs_{lang}" if lang in pair_files else f"general_{lang}"]
        row = {}
        if strip_harakat:
            stripped = [strip(x) for x in xs]
            row["stripped"] = sum(a != b for a, b in zip(xs, stripped))
            xs = stripped
        fwd, bwd = retrieval_accuracy(cosine_matrix(np.asarray(encoder.encode(xs, lang=lang)),
                                                    np.asarray(encoder.encode(ys, lang="en"))))
        out[lang] = {"pairs": len(xs), "xx->en": round(100 - fwd, 2), "en->xx": round(100 - bwd, 2), **row}
    return out


def format_report(before: dict[str, dict], after: dict[str, dict] | None = None) -> str:
    """A table of `before` (and `after`, with the change) for the terminal."""
    head = "dev retrieval error %, held-out pairs per language (lower is better)"
    if after is None:
        stripped = any("stripped" in r for r in before.values())  # read without harakat
        rows = [f"{'lang':<10} {'pairs':>6} {'xx->en':>8} {'en->xx':>8}" + (f" {'stripped':>9}" if stripped else "")]
        rows += [f"{l:<10} {r['pairs']:>6} {r['xx->en']:>8.1f} {r['en->xx']:>8.1f}"
                 + (f" {r['stripped']:>9}" if stripped else "") for l, r in before.items()]
        return "\n".join([head, *rows])
    rows = [f"{'lang':<10} {'pairs':>6} {'xx->en before':>14} {'after':>7} {'en->xx before':>14} {'after':>7}"]
    for l, r in before.items():
        a = after[l]
        rows.append(f"{l:<10} {r['pairs']:>6} {r['xx->en']:>14.1f} {a['xx->en']:>7.1f} "
                    f"{r['en->xx']:>14.1f} {a['en->xx']:>7.1f}")
    return "\n".join([head, *rows])
