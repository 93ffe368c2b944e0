"""Result tables: markdown of one result (with the papers' figures beside ours) and the
side-by-side comparison of two results."""
from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

REFERENCE_DIR = Path(__file__).resolve().parent.parent / "references"


@lru_cache(maxsize=1)
def references() -> list[dict]:
    """Every entry of every xlingua/references/*.json file: {source, model?, figures: [{task,
    figure, row?, value, model?, source?, note?, uncertain?}]}."""
    out = []
    for item in sorted(REFERENCE_DIR.glob("*.json")):
        data = json.loads(item.read_text(encoding="utf-8"))
        for entry in data["figures"]:
            out.append({**entry, "source": entry.get("source") or data["source"],
                        "model": entry.get("model") or data.get("model", "")})
    return out


def references_for(task: str, figure: str, row: str | None = None) -> list[dict]:
    return [r for r in references() if r["task"] == task and r["figure"] == figure and r.get("row") == row]


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        # correlations live in [-1, 1] and need 3 decimals; scores x100 and seconds need 1
        return f"{v:.3f}" if abs(v) <= 1 and v != 0 else f"{v:.1f}"
    return str(v)


def _ref_text(refs: list[dict]) -> str:
    return "; ".join(f"{r['model']} {fmt(float(r['value']))}{' (?)' if r.get('uncertain') else ''} "
                     f"[{r['source']}]" for r in refs)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def task_markdown(spec: str, res: dict, model: str = "") -> list[str]:
    task = res["task"]
    lines = [f"### {spec} ({res['seconds']:.1f} s)", ""]
    if res["summary"]:
        rows = [[k, fmt(v), _ref_text(references_for(task, k))] for k, v in res["summary"].items()]
        lines += _table(["figure", model or "ours", "reported elsewhere (model value [source])"], rows) + [""]
    if res["rows"]:
        metrics = list(dict.fromkeys(m for r in res["rows"].values() for m in r))
        body = []
        for name, r in res["rows"].items():
            refs = [ref for m in metrics for ref in references_for(task, m, name)]
            body.append([name] + [fmt(r.get(m)) for m in metrics] + [_ref_text(refs)])
        lines += _table(["", *metrics, "reported elsewhere"], body) + [""]
    lines += [f"- {n}" for n in res.get("notes", [])]
    lines += [f"- file: {f}" for f in res.get("files", [])]
    cfg = ", ".join(f"{k}={v}" for k, v in res.get("config", {}).items() if k != "languages")
    if cfg:
        lines.append(f"- config: {cfg}")
    return lines + [""]


def to_markdown(result: dict) -> str:
    head = [f"## `xlingua eval` — {result['model']} ({result['encoder']}, {result['dim']}-d)", "",
            f"- fingerprint: `{result['fingerprint']}`", f"- date: {result['date']}; machine: {result['machine']}",
            f"- command: `{result['command']}`", f"- limit: {result['limit']}", ""]
    if result.get("complete") is False:
        head += ["**incomplete**: the run stopped before its last task", ""]
    body = []
    for spec, res in result["tasks"].items():
        body += task_markdown(spec, res, result["model"])
    return "\n".join(head + body)


def compare(a: dict, b: dict) -> str:
    """Markdown table: every figure both results share, A, B and B - A."""
    lines = [f"Comparison: A = {a['model']} ({a['fingerprint']}), B = {b['model']} ({b['fingerprint']})", ""]
    for name, r in (("A", a), ("B", b)):
        if r.get("complete") is False:
            lines += [f"**warning**: {name} is incomplete (its run stopped after {len(r['tasks'])} task(s))", ""]
    if a.get("limit") != b.get("limit"):
        lines += [f"**warning**: different --limit (A {a.get('limit')}, B {b.get('limit')})", ""]
    rows = []
    for spec in a["tasks"]:
        if spec not in b["tasks"]:
            continue
        ta, tb = a["tasks"][spec], b["tasks"][spec]
        rows.append([f"**{spec}** time s", fmt(ta["seconds"]), fmt(tb["seconds"]), fmt(tb["seconds"] - ta["seconds"])])
        for k, va in ta["summary"].items():
            if k in tb["summary"]:
                rows.append([f"{spec}: {k}", *_triple(va, tb["summary"][k])])
        for name, ra in ta["rows"].items():
            rb = tb["rows"].get(name, {})
            for m, va in ra.items():
                if m in rb and m != "n":
                    rows.append([f"{spec}: {name} {m}", *_triple(va, rb[m])])
    only = sorted(set(a["tasks"]) ^ set(b["tasks"]))
    out = lines + _table(["figure", "A", "B", "B - A"], rows)
    if only:
        out += ["", f"tasks in only one result: {', '.join(only)}"]
    return "\n".join(out) + "\n"


def _triple(va, vb) -> list[str]:
    if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va is not None and vb is not None:
        d = vb - va
        return [fmt(va), fmt(vb), ("+" if d > 0 else "") + fmt(d)]
    return [fmt(va), fmt(vb), "-"]
