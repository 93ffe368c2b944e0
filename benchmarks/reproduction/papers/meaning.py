"""Meaning embeddings (Tiyajamorn et al. 2021): MLPs trained on top of a frozen encoder beat its
plain cosine on QE and on cross-lingual STS; two seeds of the recorded run, and the figures
recorded for xlingua-small and e5-small."""

from ..comparison import Claim, Comparison, Fixed, Job, Measure, Ref

MEANING_ARGS = ("--langs=", "--pairs", "0", "--general", "mlqe-pe,flores-v1,newstest,ntrex",
                "--general-langs", "de,zh,et,ne,ro,si,ru", "--extra", "xnli-dev,stsb-mt-train",
                "--patience", "5", "--max-epochs", "40", "--snapshot-every", "1", "--residual", "--lr", "2e-5")


def meaning() -> Comparison:
    recorded = "docs/results.md 'Meaning embeddings' (EPYC, 2026-11-24)"
    # times: docs/history.md, 'Fifth round' (embedding the pairs once ~70 min, each run 2.5-4 min,
    # the table of one model ~28 min; EPYC, 2026-11-24)
    jobs = [Job("xs_seed0", ("xlingua", "meaning", "train", "-o", "{dir}/xs_seed0", "--base", "xlingua-small",
                             *MEANING_ARGS, "--seed", "0"), note="the recorded chosen run (xs_res_lr)",
                seconds=74 * 60),
            Job("xs_seed1", ("xlingua", "meaning", "train", "-o", "{dir}/xs_seed1", "--base", "xlingua-small",
                             *MEANING_ARGS, "--seed", "1"), note="the noise: the same MLPs, seed 1", seconds=4 * 60),
            Job("table", ("python", "benchmarks/meaning.py", "--base", "xlingua-small", "--scorers", "cosine",
                          "--model", "seed0={dir}/xs_seed0", "--model", "seed1={dir}/xs_seed1",
                          "--out", "{dir}/meaning_table.json"), output="{dir}/meaning_table.json",
                note="QE dev and test20, STS2017-extended: base cosine and both seeds' meaning vectors", seconds=40 * 60)]
    qe = Measure("qe", ("pearson",), "WMT20 QE test20 Pearson, mean of 6 pairs")
    cross = Measure("sts:sts17_extended", ("sts17_extended cross-lingual pearson",),
                    "STS2017-extended cross-lingual Pearson")
    paper = "meaning embeddings beat the original embedding on QE and cross-lingual STS (abstract)"
    repeat = ("table#seed0 cosine", "table#seed1 cosine")  # seed 1's MLPs against seed 0's
    claims = [Claim("meaning embeddings beat cosine, xlingua-small", Ref("table", m, "seed0 cosine"),
                    Ref("table", m, "base cosine"), 0.0, repeat, paper=paper) for m in (qe, cross)]
    for what, xs_cos, xs_mean, e5_cos, e5_mean in (("QE test20 Pearson", 0.371, 0.397, 0.270, 0.382),
                                                  ("STS2017-extended cross-lingual Pearson", 76.1, 75.3, 69.5, 63.2)):
        for base, cos, mean in (("xlingua-small", xs_cos, xs_mean), ("e5-small", e5_cos, e5_mean)):
            claims.append(Claim(f"meaning embeddings beat cosine, {base} (recorded)",
                                Fixed(mean, f"{what}, {base} + meaning MLPs", recorded),
                                Fixed(cos, f"{what}, {base} cosine", recorded), paper=paper))
    return Comparison("meaning", "Meaning embeddings (Tiyajamorn et al. 2021)", jobs=jobs, claims=claims)
