"""The model frontier: embedding speed (sentences/s, log scale) against Tatoeba-36 accuracy, one
point per model and path, one colour per speed run. It measures nothing: every figure is copied
by hand into docs/data/frontier.json from a page that recorded it, and each point names that
page and the command behind it. Speeds compare only within one run (one colour): runs differ in
CPU, sentences and load.

    .venv/bin/python benchmarks/frontier.py                      # docs/data/frontier.json -> docs/img/frontier.png
    .venv/bin/python benchmarks/frontier.py --data FILE --png OUT.png
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from xlingua.io import atomic_path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data" / "frontier.json"
PNG = ROOT / "docs" / "img" / "frontier.png"
RUN_KEYS = ("cpu", "sentences", "page", "command")
POINT_KEYS = ("model", "run", "sentences_per_s", "tatoeba36", "quality")
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:red", "tab:brown")
MARKERS = ("o", "s", "^", "D", "v", "P")
XLIM = (10, 200_000)
YLIM = (35, 115)


class FrontierError(ValueError):
    """A frontier file that cannot be drawn; the message names the file and the entry."""


def tatoeba_mean(entry: dict) -> float:
    """Mean of both directions (xx-en, en-xx), or the mean as recorded when only it was."""
    if "mean" in entry:
        return float(entry["mean"])
    return (float(entry["xx-en"]) + float(entry["en-xx"])) / 2


def load_frontier(path: Path) -> tuple[dict, list[dict]]:
    """Runs and points of a frontier file, checked: every field present, every point's run known."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FrontierError(f"{path}: {exc}") from exc
    runs, points = data.get("runs"), data.get("points")
    if not isinstance(runs, dict) or not isinstance(points, list) or not points:
        raise FrontierError(f"{path}: needs 'runs' (an object) and 'points' (a non-empty list)")
    for name, run in runs.items():
        missing = [k for k in RUN_KEYS if k not in run]
        if missing:
            raise FrontierError(f"{path}: run {name!r} lacks {', '.join(missing)}")
    for i, point in enumerate(points):
        where = f"{path}: point {i} ({point.get('model', '?')})"
        missing = [k for k in POINT_KEYS if k not in point]
        if missing:
            raise FrontierError(f"{where} lacks {', '.join(missing)}")
        if point["run"] not in runs:
            raise FrontierError(f"{where}: unknown run {point['run']!r}")
        if not float(point["sentences_per_s"]) > 0:
            raise FrontierError(f"{where}: sentences_per_s must be positive")
        if not ("mean" in point["tatoeba36"] or {"xx-en", "en-xx"} <= set(point["tatoeba36"])):
            raise FrontierError(f"{where}: tatoeba36 needs 'mean' or both 'xx-en' and 'en-xx'")
        if not {"page", "command"} <= set(point["quality"]):
            raise FrontierError(f"{where}: quality needs 'page' and 'command'")
    return runs, points


def label_rises(points: list[dict], pts_per_unit: float, pts_per_decade: float, fontsize: float = 7,
                step: float = 11, lowest: float = 8, band: float = 1.0) -> list[tuple[float, dict]]:
    """Each point with the height (typographic points) of its label above it. Labels start at their
    point's x. Rows of points within `band` of one accuracy are placed lowest row first, the
    rightmost point of a row first, so leader lines drop to points left of the labels below them;
    each label goes as low as it can without touching a label already placed over the same
    stretch of x, in its row or a lower one."""
    rows: list[list[dict]] = []  # points within `band` of one accuracy
    for p in sorted(points, key=lambda p: tatoeba_mean(p["tatoeba36"])):
        if rows and tatoeba_mean(p["tatoeba36"]) - tatoeba_mean(rows[-1][0]["tatoeba36"]) <= band:
            rows[-1].append(p)
        else:
            rows.append([p])
    placed: list[tuple[float, float, float]] = []  # x from, x to, y of each label's baseline, in points
    rises = []
    for p in [p for row in rows for p in sorted(row, key=lambda p: -p["sentences_per_s"])]:
        x0 = math.log10(p["sentences_per_s"]) * pts_per_decade
        x1 = x0 + 0.55 * fontsize * len(p.get("label", p["model"]))
        y = tatoeba_mean(p["tatoeba36"]) * pts_per_unit
        top = y + lowest
        # a label exactly `step` above another clears it (the margin keeps rounding from looping)
        while clash := [ly for a, b, ly in placed if a < x1 and x0 < b and abs(ly - top) < step - 1e-6]:
            top = max(clash) + step
        placed.append((x0, x1, top))
        rises.append((top - y, p))
    return rises


def draw(runs: dict, points: list[dict], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    colour = {name: COLOURS[n % len(COLOURS)] for n, name in enumerate(runs)}
    for n, (name, run) in enumerate(runs.items()):
        mine = [p for p in points if p["run"] == name]
        if mine:
            ax.plot([p["sentences_per_s"] for p in mine], [tatoeba_mean(p["tatoeba36"]) for p in mine],
                    MARKERS[n % len(MARKERS)], color=colour[name], markersize=7,
                    label=f"{run['cpu']}, {run['sentences']}")
    ax.set_xscale("log")
    ax.set_xlabel("sentences/s (log scale; compare within one colour)")
    ax.set_ylabel("Tatoeba-36 accuracy, ratio margin")
    ax.set_ylim(YLIM)  # room above for the stacked labels
    ax.set_yticks(range(40, 101, 10))
    ax.set_xlim(XLIM)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("xlingua's models: speed against quality", fontsize=10)
    fig.tight_layout()
    box = ax.get_window_extent()  # pixels: the axes' size in points places the labels
    pts = 72 / fig.dpi
    rises = label_rises(points, pts_per_unit=box.height * pts / (YLIM[1] - YLIM[0]),
                        pts_per_decade=box.width * pts / math.log10(XLIM[1] / XLIM[0]))
    for rise, p in rises:
        ax.annotate(p.get("label", p["model"]), (p["sentences_per_s"], tatoeba_mean(p["tatoeba36"])),
                    textcoords="offset points", xytext=(0, rise), ha="left", va="bottom", fontsize=7,
                    color=colour[p["run"]],
                    arrowprops={"arrowstyle": "-", "color": colour[p["run"]], "lw": 0.5, "shrinkB": 4,
                                "relpos": (0, 0)})
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA, help="the frontier file (default docs/data/frontier.json)")
    ap.add_argument("--png", type=Path, default=PNG, help="the picture (default docs/img/frontier.png)")
    args = ap.parse_args()
    try:
        runs, points = load_frontier(args.data)
    except FrontierError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    draw(runs, points, args.png)
    print(f"{args.png}: {len(points)} points")


if __name__ == "__main__":
    main()
