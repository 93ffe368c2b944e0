"""Running tasks on one encoder: option parsing, the embedding cache, timing, the result JSON."""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from xlingua.encoders.base import Encoder
from xlingua.evaluation.base import EvalContext, TaskResult
from xlingua.evaluation.registry import get_task
from xlingua import io


def parse_task_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """'tatoeba' -> ('tatoeba', {}); 'tatoeba:all' -> ('tatoeba', {'subset': 'all'})."""
    name, _, subset = spec.partition(":")
    return name, ({"subset": subset} if subset else {})


def parse_options(pairs: list[str], tasks: list[str]) -> dict[str, dict[str, Any]]:
    """'key=value' (every selected task that has the option) or 'task.key=value' ->
    {task: {key: value}}, values converted to the type of the option's default."""
    out: dict[str, dict[str, Any]] = {t: {} for t in tasks}
    for item in pairs:
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"option {item!r} is not key=value")
        target, _, key = key.rpartition(".")
        chosen = [t for t in tasks if (not target or t == target) and key in get_task(t).default_options]
        if not chosen:
            raise ValueError(f"no selected task takes option {item!r}")
        for t in chosen:
            default = get_task(t).default_options[key]
            out[t][key] = _convert(value, default, item)
    return out


def _convert(value: str, default, item: str):
    try:
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return value.lower() in ("true", "1", "yes")
        return type(default)(value) if isinstance(default, (int, float)) else value
    except ValueError:
        raise ValueError(f"option {item!r}: expected a {type(default).__name__}") from None


def machine() -> str:
    return f"{platform.machine()} {os.cpu_count()} cpu, {platform.system()}, Python {platform.python_version()}"


def check(task_specs: list[str], limit: int | None) -> list[str]:
    """Fail on a task typo or a bad limit before any model loads; returns the task names."""
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    names = [parse_task_spec(s)[0] for s in task_specs]
    for n in names:
        get_task(n)
    return names


def invocation(argv: list[str] | None = None) -> str:
    """The command line that ran this: `xlingua ...` from the CLI, `python SCRIPT ...` from a
    script (a benchmark calling the runner), so the result file says how to make it again."""
    argv = sys.argv if argv is None else argv
    # `python -m xlingua.cli` runs a `__main__.py` (or an older `xlingua/cli.py`): that is the CLI
    script = bool(argv) and argv[0].endswith(".py") and Path(argv[0]).name != "__main__.py" \
        and Path(argv[0]).parent.name != "xlingua"
    return " ".join([*(["python", argv[0]] if script else ["xlingua"]), *argv[1:]])


def run(encoder: Encoder, task_specs: list[str], *, model: str | None = None, limit: int | None = None,
        data_dir: str | None = None, options: list[str] | None = None, output: str | None = None,
        out_dir: str | None = None, batch_size: int = 64, show_progress: bool = True,
        echo=print) -> dict:
    """Evaluate `encoder` on each task; write the JSON (atomically, after every task) if
    `output` is given, with "complete": false until the last task is in. Returns the result dict."""
    names = check(task_specs, limit)
    opts = parse_options(options or [], names)
    out_dir_path = Path(out_dir) if out_dir else (Path(output).parent if output else Path.cwd())
    result = {"model": model or encoder.name, "encoder": encoder.name, "fingerprint": encoder.fingerprint(),
              "dim": encoder.dim, "limit": limit, "data_dir": data_dir,
              "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "machine": machine(), "command": invocation(), "complete": False,
              "tasks": {}}
    for spec, name in zip(task_specs, names):
        task = get_task(name)
        task_opts = {**parse_task_spec(spec)[1], **opts[name]}
        ctx = EvalContext(encoder, data_dir=data_dir, limit=limit, options=task_opts,
                          out_dir=out_dir_path, batch_size=batch_size, show_progress=show_progress)
        echo(f"== {spec}: {task.description}")
        start = time.perf_counter()
        res: TaskResult = task.evaluate(ctx)
        res.seconds = time.perf_counter() - start
        result["tasks"][spec] = res.to_dict()
        echo(f"   {spec} done in {res.seconds:.1f} s")
        result["complete"] = spec == task_specs[-1]
        if output:
            write_json(output, result)
    return result


def write_json(path: str | Path, obj) -> None:
    io.write_json(path, obj)


def load_result(path: str | Path) -> dict:
    """A result JSON `xlingua eval -o` wrote; errors name the file (as typed, for a stream's copy)."""
    from xlingua.data.text import InputError, read_whole, shown

    if not Path(path).exists():
        raise FileNotFoundError(f"result file not found: {shown(path)}")
    try:
        data = json.loads(read_whole(path))
    except json.JSONDecodeError as e:
        raise InputError(f"{shown(path)}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(data, dict) or "tasks" not in data:
        raise InputError(f"{shown(path)} is not an `xlingua eval` result (no 'tasks' key)")
    return data
