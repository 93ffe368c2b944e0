"""The step contract (mining.step) and its runner (mining.runner) on a toy step: what enters the
key, and "summary or nothing": a failed item leaves no summary, a rerun does only what is left."""
import dataclasses
from pathlib import Path

import pytest

from xlingua.mining.runner import Runner
from xlingua.mining.step import Output, Step, path_field, unkeyed, upstream


@dataclasses.dataclass(frozen=True)
class Counted(Output):
    total: int


@dataclasses.dataclass(frozen=True)
class CountConfig:
    n: int
    source: str = path_field("")
    batch: int = unkeyed(8)


class CountStep(Step):
    """Item i writes i squared to its own file; the summary adds them up."""

    name = "count"
    output_type = Counted
    fail_at = None

    def __init__(self, config, workdir):
        super().__init__(config, workdir)
        self.ran = []

    def items(self):
        return range(self.config.n)

    def item_done(self, i):
        return (self.dir / f"{i}.txt").exists()

    def run(self, i, progress):
        if i == self.fail_at:
            raise RuntimeError("injected")
        self.ran.append(i)
        (self.dir / f"{i}.txt").write_text(str(i * i))

    def summarize(self):
        return self.output({"total": sum(int((self.dir / f"{i}.txt").read_text()) for i in self.items())})


@dataclasses.dataclass(frozen=True)
class DoubleConfig:
    counted: Counted = upstream()


class DoubleStep(Step):
    name = "double"
    output_type = Counted

    def run(self, item, progress):
        (self.dir / "total.txt").write_text(str(2 * self.config.counted.total))

    def summarize(self):
        return self.output({"total": int((self.dir / "total.txt").read_text())})


def test_what_enters_the_key(tmp_path):
    key = lambda **kw: CountStep(CountConfig(**kw), tmp_path).key  # noqa: E731
    assert key(n=3) == key(n=3, source="/elsewhere/file.txt") == key(n=3, batch=64)
    assert key(n=3) != key(n=4)
    a, b = (Counted(key(n=n), "", 0) for n in (3, 4))
    double = lambda counted: DoubleStep(DoubleConfig(counted), tmp_path).key  # noqa: E731
    assert double(a) != double(b)  # a change upstream reaches the step below
    assert double(a) == double(dataclasses.replace(a, dir="/moved", total=99))  # by key only


def test_a_renamed_config_keeps_its_key(tmp_path):
    @dataclasses.dataclass(frozen=True)
    class TallyConfig:  # CountConfig under a new name
        n: int
        source: str = path_field("")
        batch: int = unkeyed(8)

    class TallyStep(CountStep):
        key_config_name = "CountConfig"

    assert CountStep(TallyConfig(3), tmp_path).key != CountStep(CountConfig(3), tmp_path).key
    assert TallyStep(TallyConfig(3), tmp_path).key == CountStep(CountConfig(3), tmp_path).key


def test_summary_only_when_every_item_is_done_and_a_rerun_does_the_rest(tmp_path):
    runner = Runner(show_progress=False)
    step = CountStep(CountConfig(5), tmp_path)
    step.fail_at = 3
    with pytest.raises(RuntimeError, match="injected"):
        runner.run(step, "count")
    assert step.ran == [0, 1, 2] and not step.done() and "count" not in runner.timings
    again = CountStep(CountConfig(5), tmp_path)
    out = runner.run(again, "count")
    assert again.ran == [3, 4] and out.total == 0 + 1 + 4 + 9 + 16
    assert runner.timings["count"]["cached"] is False
    third = CountStep(CountConfig(5, source="moved.txt"), tmp_path)
    assert runner.run(third, "count") == out and third.ran == [] and runner.timings["count"]["cached"]
    doubled = runner.run(DoubleStep(DoubleConfig(out), tmp_path), "double")
    assert doubled.total == 60 and Path(doubled.dir, "done.json").exists()
