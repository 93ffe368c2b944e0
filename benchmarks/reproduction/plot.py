"""The claims as a plot (claims.png): how far each claim's difference lies past its threshold,
beside the seed noise, coloured by verdict."""

from pathlib import Path

from xlingua.io import atomic_open

from .table import num

VERDICT_COLOURS = {"reproduced": "tab:green", "reproduced in direction": "tab:olive",
                   "not reproduced": "tab:red"}


def claim_bars(table: dict) -> list[dict]:
    """One bar per measured claim: how far A − B lies past the claim's threshold (A − B − t; the
    claim holds where it is positive) and the noise beside it (None where unmeasured)."""
    return [{"label": f"{c['claim']}: {c['measure']}", "margin": c["diff"] - c["threshold"],
             "noise": c["noise"], "verdict": c["verdict"]}
            for c in table["claims"] if "diff" in c]


def write_claims_plot(table: dict, path: Path) -> None:
    """Horizontal bars of claim_bars, the seed noise as error bars, coloured by verdict."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = claim_bars(table)[::-1]  # the table's first claim on top
    labels = [textwrap.wrap(b["label"], 55) for b in bars]
    rows = [max(0.55, 0.14 * len(lines)) for lines in labels]  # room for a long label's lines
    y = [sum(rows[:i]) + rows[i] / 2 for i in range(len(rows))]
    fig, ax = plt.subplots(figsize=(11, 1.2 + sum(rows)))
    ax.barh(y, [b["margin"] for b in bars], height=0.4,
            xerr=[b["noise"] or 0.0 for b in bars],
            color=[VERDICT_COLOURS.get(b["verdict"], "tab:gray") for b in bars], capsize=3)
    ax.set_yticks(y, ["\n".join(lines) for lines in labels], fontsize=7)
    ax.set_ylim(0, sum(rows))
    for i, b in enumerate(bars):  # the figures in words: QE's Pearson and accuracy points share one axis
        noise = "no noise measured" if b["noise"] is None else f"noise {num(b['noise'])}"
        ax.annotate(f"{num(b['margin'], sign=True)} ({noise})", (0, y[i]), fontsize=6,
                    xytext=(-4 if b["margin"] > 0 else 4, 0), textcoords="offset points", va="center",
                    ha="right" if b["margin"] > 0 else "left")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.margins(x=0.3)  # room for the words beside short bars
    ax.set_xlabel("A − B − threshold (points; the claim holds right of 0), error bar = seed noise")
    ax.set_title(f"{table['title']}: claims ({table['date'][:10]})", fontsize=10)
    ax.legend(handles=[matplotlib.patches.Patch(color=c, label=v) for v, c in VERDICT_COLOURS.items()],
              fontsize=7, loc="best")
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
