"""Each paper's claim, reproduced at equal compute (benchmarks/reproduce.py is the command line).

One module per paper under papers/ (its runs, evaluations and claims); the rest is shared:
settings, comparison (what a comparison is), bookkeeping (recipes, equal compute, run states),
commands (running them), verdicts, cost and describe (the plan in words), table, plot, records,
pipeline (plan to table) and cli.
"""

from .bookkeeping import (Planned, check_equal_compute, data_paths, derive_recipe, eval_command, eval_done,
                          eval_model, examples_seen, fill, finish_run, in_precision, job_done, now, plan, plan_row,
                          preflight, read_log, recipe_hash, recorded_opts, run_model, run_state, task_steps,
                          train_command)
from .commands import cli_argv, collect, execute, run_job, train_run
from .comparison import Claim, Comparison, Eval, Fixed, Job, Measure, Missing, PlanError, Ref, Run
from .cost import (Rates, encoder_passes, eval_sentences, known_sentences, measured_rates, other_comparisons_work,
                   step_estimate, train_estimate)
from .describe import describe_plan
from .papers import COMPARISONS, dueam, laser, meaning, muse, onealigner
from .pipeline import reproduce, write_table
from .plot import VERDICT_COLOURS, claim_bars, write_claims_plot
from .records import TABLE_FILES, record_files, restore_records, save_records
from .settings import CONFIGS, DEFAULT_ROOT, DEV_LANGS, DONE, EVAL_SPECS, RECIPE, REPO, START
from .table import build_table, num, table_markdown
from .verdicts import claim_noise, claim_row, noise, value_of, verdict
