"""The table of a comparison: its claims with figures, noise and verdict, its runs, and every
figure read; as a dict (table.json) and as Markdown (table.md)."""

import json

from .bookkeeping import Planned, now, plan_row
from .comparison import Comparison, Ref
from .settings import DONE
from .verdicts import claim_row


def build_table(comp: Comparison, runs: list[Planned], shared: dict, results: dict) -> dict:
    blocked = {p.run.name: p.blocked for p in runs if p.state == "blocked"}
    blocked.update({e.name: blocked[e.model] for e in comp.evals if e.model in blocked})
    run_rows = []
    for p in runs:
        row = {**plan_row(p.run, p.template), "state": p.state, "blocked": p.blocked}
        if p.state == "done":
            done = json.loads((p.dir / DONE).read_text(encoding="utf-8"))
            row.update({"seconds": done.get("seconds"), "dev_mean": done.get("dev", {}).get("mean"),
                        "dev_mean_start": done.get("dev_start", {}).get("mean")})
        run_rows.append(row)
    measures = {}
    for c in comp.claims:
        for ref in (c.a, c.b):
            if isinstance(ref, Ref):
                measures[ref.measure.label] = ref.measure
    figures = {}
    for source, result in results.items():
        entries = [(source, result)] if "tasks" in result else [(f"{source}#{k}", v) for k, v in result.items()]
        for name, res in entries:
            for label, m in measures.items():
                try:
                    figures.setdefault(name, {})[label] = m.value(res)
                except (KeyError, ValueError):
                    pass
    return {"paper": comp.paper, "title": comp.title, "date": now(), "shared_settings": shared,
            "runs": run_rows, "figures": figures,
            "claims": [claim_row(c, results, blocked) for c in comp.claims]}


def table_markdown(table: dict) -> str:
    out = [f"## {table['title']}", "", f"Written {table['date']}.", ""]
    out += ["| claim | figure | A | B | A - B | claimed | noise | verdict |", "|---|---|---|---|---:|---:|---:|---|"]
    sources: list[str] = []
    for c in table["claims"]:
        claimed = "> 0" if not c["threshold"] else f"> {num(c['threshold'])}"
        marks = ""
        for src in c.get("sources", []):
            if src not in sources:
                sources.append(src)
            marks += f" [{sources.index(src) + 1}]"
        if "diff" in c:
            noise_ = "unmeasured" if c["noise"] is None else num(c["noise"])
            out.append(f"| {c['claim']}{marks} | {c['measure']} | {num(c['value_a'])} ({c['a']}) | "
                       f"{num(c['value_b'])} ({c['b']}) | {num(c['diff'], sign=True)} | {claimed} | {noise_} | "
                       f"{c['verdict']} |")
        else:
            out.append(f"| {c['claim']}{marks} | {c['measure']} | {c['a']} | {c['b']} | | {claimed} | | {c['verdict']} |")
    if sources:
        out += [""] + [f"[{i}] {src}" for i, src in enumerate(sources, 1)]
    if table["runs"]:
        out += ["", "| run | state | seed | steps x batch = pairs seen | steps per task | dev retrieval start -> end | training s |",
                "|---|---|---:|---|---|---|---:|"]
        for r in table["runs"]:
            per = ", ".join(f"{k} {v}" for k, v in (r["task_steps"] or {}).items())
            dev = (f"{r['dev_mean_start']:.2f} -> {r['dev_mean']:.2f}" if r.get("dev_mean") is not None
                   and r.get("dev_mean_start") is not None else "")
            state = r["state"] if r["state"] != "blocked" else f"blocked: {r['blocked']}"
            out.append(f"| {r['run']} | {state} | {r['seed']} | {r['steps']} x {r['batch']} = {r['pairs_seen']:,} | "
                       f"{per} | {dev} | {r.get('seconds') or ''} |")
    if table["figures"]:
        labels = sorted({l for f in table["figures"].values() for l in f})
        out += ["", "| result | " + " | ".join(labels) + " |", "|---" + "|---:" * len(labels) + "|"]
        for name, f in table["figures"].items():
            out.append(f"| {name} | " + " | ".join(f"{f[l]:.2f}" if l in f else "" for l in labels) + " |")
    return "\n".join(out) + "\n"


def num(x: float, sign: bool = False) -> str:
    """Two decimals, three for figures under 1 (correlations)."""
    digits = 3 if abs(x) < 1 else 2
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"
