"""What a comparison is: training runs, evaluations, other jobs, and the claims read from their
results."""

from dataclasses import dataclass, field


class PlanError(ValueError):
    """A plan that must not run (unequal compute, a run directory holding another run)."""


class Missing(Exception):
    """A result a claim reads has not been written yet."""


@dataclass(frozen=True)
class Run:
    """A training run: `recipe` (a file of configs/) with `overrides` of its top-level keys."""
    name: str
    recipe: str
    overrides: dict
    note: str = ""


@dataclass(frozen=True)
class Eval:
    """One `xlingua eval` call: `model` is a run's name (its final model) or an encoder spec."""
    name: str
    model: str
    tasks: tuple
    opts: tuple = ()


@dataclass(frozen=True)
class Job:
    """Any other command (e.g. `xlingua meaning train`), done once it has exited 0 (rerun with
    the same arguments otherwise); `output` is a result file claims read. `{dir}` in either is
    the paper's directory."""
    name: str
    argv: tuple
    output: str = ""
    note: str = ""
    seconds: float | None = None  # the time a recorded run of the same command took


@dataclass(frozen=True)
class Measure:
    """A figure of one task of an eval result: the mean of `keys`, from the task's summary or
    averaged over its rows (`only` these rows, or all but `exclude`)."""
    task: str
    keys: tuple
    label: str
    rows: bool = False
    only: tuple = ()
    exclude: tuple = ()

    def value(self, result: dict) -> float:
        task = result["tasks"][self.task]
        if not self.rows:
            return _mean(task["summary"][k] for k in self.keys)
        names = [n for n in task["rows"] if (not self.only or n in self.only) and n not in self.exclude]
        if not names:
            raise KeyError(f"no rows of {self.task} left after only={self.only} exclude={self.exclude}")
        return _mean(_mean(task["rows"][n][k] for k in self.keys) for n in names)


@dataclass(frozen=True)
class Ref:
    """A measured figure: `measure` of the result of eval (or job) `source`; `entry` picks one
    result of a file holding several (benchmarks/meaning.py's)."""
    source: str
    measure: Measure
    entry: str = ""

    @property
    def key(self) -> str:
        """SOURCE, or SOURCE#ENTRY."""
        return f"{self.source}#{self.entry}" if self.entry else self.source


@dataclass(frozen=True)
class Fixed:
    """A figure already recorded: what it is, and where it is recorded (docs/results.md...)."""
    value: float
    what: str
    source: str = ""


@dataclass(frozen=True)
class Claim:
    """The paper claims A - B > threshold. Its noise is measured on the comparison's repeated
    setting, `noise_pair` = (Ref.key of seed 0, Ref.key of seed 1): |seed 0 - seed 1| of the
    claim's figure there (of A - B when A and B are two figures of one result); or it is
    `fixed_noise`, or unmeasured."""
    name: str
    a: Ref | Fixed
    b: Ref | Fixed
    threshold: float = 0.0
    noise_pair: tuple | None = None
    fixed_noise: Fixed | None = None
    paper: str = ""


@dataclass
class Comparison:
    paper: str
    title: str
    runs: list = field(default_factory=list)
    evals: list = field(default_factory=list)
    jobs: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    data: dict = field(default_factory=dict)   # {placeholder: writer(path)} files the recipes read
    precision: str = "fp32"  # every run trained and every model read in it (in_precision)


def _mean(values) -> float:
    values = [float(v) for v in values]
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)
