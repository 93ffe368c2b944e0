"""Each paper's claim, reproduced at equal compute: one comparison per paper, one table a user
can rerun.

    python benchmarks/reproduce.py onealigner --dry-run   # the plan: runs, steps, pairs seen, cost
    python benchmarks/reproduce.py onealigner             # train, evaluate, write the table
    python benchmarks/reproduce.py muse --dev-only        # train and read dev only
    python benchmarks/reproduce.py muse --table-only      # the table of what has finished so far

Papers: onealigner, dueam, muse, laser, meaning (docs/reproductions.md says what each claims).

A comparison is a list of training runs (a base recipe from configs/ with overrides: tasks,
steps, batch, seed), the evaluations they need and the claims read from them. Every run starts
from e5-small, trains on ../shared/corpora/general plus the project's existing training sets
and is checked before anything runs:

- equal compute: every run of a comparison has the same settings (start model, steps, batch,
  sequence length, learning rate and schedule...), so the same steps and the same pairs seen;
  only the tasks and the seed differ, and a plan where anything else differs is refused;
- the objectives accept their options (a run whose objective lacks an option is reported as
  blocked and not started);
- one setting is repeated with another seed: the noise is |seed 0 - seed 1| of the claim's
  figure on that setting, and it stands beside every difference.

Training goes through the CLI only (`xlingua train RUN/recipe.yaml -o RUN [--resume]`, the
derived recipe written into the run directory). A run whose `done.json` matches its recipe is
not rerun; a run killed after a checkpoint resumes from it (`--resume`, which ends with the
weights of an unbroken run); a run killed before its first checkpoint starts again. Dev figures
(the general corpus's dev slices, retrieval) come from the trainer's log; the evaluation sets
are read once, by `xlingua eval`, after every run of the comparison has finished. The table
goes to runs/reproduce/PAPER/table.json and table.md, and a plot of the claims to claims.png.

With `--records DIR`, each result (a run's done.json, an evaluation's result, the table; no
weights) is also copied to DIR/PAPER as it is written, and what the root lacks is taken from
there first. A run whose done.json matches and whose evaluations are all read needs no weights,
so a comparison moved to another machine (same --root) trains and reads only what is left.

Verdict of a claim "A - B > t" (t = 0 for "A beats B"; t = -2 for "A within 2 points of B"):
"reproduced" when A - B - t > noise, "reproduced in direction" when 0 < A - B - t <= noise (or
the noise was not measured), "not reproduced" otherwise.
"""

import argparse
import sys
from pathlib import Path

from .comparison import PlanError
from .papers import COMPARISONS
from .pipeline import reproduce
from .settings import DEFAULT_ROOT, EVAL_SPECS


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paper", choices=sorted(COMPARISONS))
    ap.add_argument("--root", default=str(DEFAULT_ROOT), help="where runs, evaluations and the table go")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the commands; run nothing")
    ap.add_argument("--dev-only", action="store_true", help="train and read dev figures; leave the evaluation sets")
    ap.add_argument("--precision", default="fp32", choices=sorted(EVAL_SPECS),
                    help="bf16: train and evaluate under bfloat16 (about twice as fast on CPUs with AMX or "
                    "AVX512-BF16); every run of a comparison in the same precision")
    ap.add_argument("--table-only", action="store_true",
                    help="write the table of the results there are (claims not yet measured stay open); run nothing")
    ap.add_argument("--only", default="", help="train only these runs (comma-separated names), e.g. for "
                    "their dev figures; the evaluation sets wait until every run is done")
    ap.add_argument("--records", help="also keep each result (done.json of runs, evaluation results, the "
                    "table; no weights) under RECORDS/PAPER, and take from there what the root lacks: with "
                    "the same --root, a comparison goes on elsewhere without retraining the runs already "
                    "evaluated")
    args = ap.parse_args(argv)
    try:
        reproduce(args.paper, Path(args.root), dry_run=args.dry_run, dev_only=args.dev_only,
                  precision=args.precision, records=Path(args.records) if args.records else None,
                  table_only=args.table_only, only=tuple(n for n in args.only.split(",") if n))
    except PlanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # a command failed: rerun to go on from where it stopped
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
