"""What a comparison costs: sentences each evaluation embeds, seconds each run trains, at the
reference machine's rates or at rates measured on runs and evaluations already finished."""

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from .bookkeeping import recorded_opts
from .settings import HARD_NEGATIVE_COST, REF_BATCH, REF_LENGTH, REF_STEP_SECONDS, SENTENCES_PER_SECOND


def eval_sentences(spec: str, data_dir=None) -> int | None:
    """Sentences one `xlingua eval` task embeds at most (repeats counted; the cache embeds each
    once), or None for a task this does not count."""
    from xlingua.data import benchmarks as B

    name, _, subset = spec.partition(":")
    if name == "tatoeba":
        from xlingua.evaluation.tasks.tatoeba import subset_langs

        langs, _ = subset_langs(subset or "tatoeba36", B.tatoeba_langs(data_dir))
        return sum(2 * len(B.read_tatoeba(l, data_dir)[0]) for l in langs)
    if name == "sts":
        groups = subset.split(",") if subset and subset != "all" else list(B.STS_GROUPS)
        return sum(2 * len(p.s1) for g in groups for p in B.read_sts_group(g, data_dir))
    if name == "bucc":
        data = B.read_bucc("zh", "dev", data_dir)
        return len(data.src) + len(data.tgt)
    if name == "xnli":
        from xlingua.data.nli import XNLI_LANGS

        return 2 * (len(B.read_xnli_split("en", "dev", data_dir))
                    + sum(len(B.read_xnli_split(l, "test", data_dir)) for l in XNLI_LANGS))
    if name == "retrieval":
        from xlingua.evaluation.tasks.retrieval import MULTI30K_LANGS, l10n_langs

        sets = subset.split(",") if subset and subset != "all" else ["l10n", "multi30k"]
        n = sum(2 * len(B.read_l10n(l, "dev")[0]) for l in l10n_langs()) if "l10n" in sets else 0
        if "multi30k" in sets:
            n += len(B.read_multi30k("en", data_dir=data_dir)) * (1 + len(MULTI30K_LANGS))
        return n
    return None


@dataclass(frozen=True)
class Rates:
    """How fast this machine trains and embeds, relative to the reference machine: measured on
    the comparison's finished runs (optimizer steps/s in their logs) and evaluations (sentences
    over the seconds their results record), else the reference figures."""
    step_scale: float = 1.0
    sentences_per_s: float = SENTENCES_PER_SECOND
    source: str = "the reference 2-core CPU of docs/results.md (fp32)"


def step_estimate(recipe: dict) -> float:
    """Seconds of one optimizer step on the reference machine (see REF_STEP_SECONDS)."""
    hard = any(t.get("options", {}).get("hard_negatives") for t in recipe["tasks"])
    return REF_STEP_SECONDS * recipe["batch_size"] * recipe.get("grad_accum", 1) / REF_BATCH \
        * recipe["max_seq_length"] / REF_LENGTH * (HARD_NEGATIVE_COST if hard else 1.0)


def train_estimate(recipe: dict, rates: Rates | None = None) -> float:
    """CPU seconds of one run: its steps, the dev evaluations at step 0 and at the end, and
    mining hard negatives; at the reference rates, or at `rates` measured here."""
    rates = rates or Rates()
    ev = recipe.get("eval") or {}
    n_evals = (1 + recipe["max_steps"] // recipe["eval_every"]) if recipe.get("eval_every") else 0
    dev = n_evals * 2 * len(ev.get("general_langs", [])) * ev.get("limit", 500)
    mining = 0
    for t in recipe["tasks"]:
        data = t["data"] if isinstance(t["data"], dict) else {}
        if t.get("options", {}).get("hard_negatives") and data.get("limit") and data.get("langs"):
            mining += 2 * data["limit"] * len(data["langs"])
    return recipe["max_steps"] * step_estimate(recipe) * rates.step_scale + (dev + mining) / rates.sentences_per_s


def measured_rates(runs: list, evals: list, paper_dir: Path, name: str | None = None) -> Rates:
    """`runs`: (run directory, recipe) of finished runs; `evals`: (sentences, result path) of done
    evaluations; `name`: where they come from (paper_dir's name)."""
    scales = []
    for run_dir, recipe in runs:
        log = Path(run_dir) / "log.jsonl"
        rates = [json.loads(l)["steps_per_s"] for l in log.read_text(encoding="utf-8").splitlines()
                 if '"steps_per_s"' in l] if log.exists() else []
        if rates and rates[-1] > 0:
            scales.append(1.0 / rates[-1] / step_estimate(recipe))
    n = seconds = 0.0
    for sentences, path in evals:
        took = sum(t.get("seconds") or 0.0 for t in json.loads(Path(path).read_text(encoding="utf-8"))["tasks"].values())
        if sentences and took > 0:
            n, seconds = n + sentences, seconds + took
    if not scales and not seconds:
        return Rates()
    parts = ([f"{len(scales)} finished run(s)"] if scales else []) + (["the finished evaluations"] if seconds else [])
    return Rates(step_scale=sorted(scales)[len(scales) // 2] if scales else 1.0,
                 sentences_per_s=n / seconds if seconds else SENTENCES_PER_SECOND,
                 source=f"this machine, measured on {' and '.join(parts)} of {name or paper_dir.name}")


def other_comparisons_work(paper_dir: Path, precision: str) -> tuple[list, list]:
    """Finished runs (directory, recipe) and trained-model evaluations (sentences, result path)
    of the other comparisons under the same root in the same precision: the rates to estimate
    with before this comparison has finished anything of its own."""
    runs, evals = [], []
    root = Path(paper_dir).parent
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if d == Path(paper_dir) or not d.is_dir():
            continue
        for run_dir in sorted(x for x in d.iterdir() if (x / "done.json").exists() and (x / "recipe.yaml").exists()):
            recipe = yaml.safe_load((run_dir / "recipe.yaml").read_text(encoding="utf-8"))
            if recipe.get("precision", "fp32") == precision:
                runs.append((run_dir, recipe))
        for path in sorted((d / "eval").glob("*.json")):
            result = json.loads(path.read_text(encoding="utf-8"))
            model = result.get("model", "")
            # fixed models' vectors are often cached: only trained models' evaluations time the machine
            if not result.get("complete") or not model.endswith("final") or \
                    model.startswith("bf16:") != (precision == "bf16"):
                continue
            sizes = [known_sentences(t) for t in result["tasks"]]
            if sizes and None not in sizes:
                opts = recorded_opts(result)
                evals.append((sum(n * encoder_passes(t, opts) for n, t in zip(sizes, result["tasks"])), path))
    return runs, evals


def encoder_passes(task: str, opts: tuple) -> int:
    """Encoder passes over a task's sentences: Tatoeba with BERTScore encodes them again for tokens."""
    name = task.partition(":")[0]
    return 2 if name == "tatoeba" and any(o in (f"{name}.bertscore=true", "bertscore=true") for o in opts) else 1


def known_sentences(spec: str) -> int | None:
    try:
        return eval_sentences(spec)
    except (OSError, ValueError, KeyError):
        return None
