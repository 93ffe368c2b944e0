"""Claims and verdicts: the figures a claim compares, the seed noise beside their difference,
and the verdict rule."""

from .comparison import Claim, Fixed, Missing, Ref


def noise(seed0: float, seed1: float) -> float:
    """Run-to-run noise of one figure: |seed 0 - seed 1| on the repeated setting."""
    return abs(seed0 - seed1)


def verdict(diff: float, noise_level: float | None, threshold: float = 0.0) -> str:
    """The claim is diff = A - B > threshold: "reproduced" when it holds by more than the noise,
    "reproduced in direction" when it holds within the noise (or the noise is unmeasured),
    "not reproduced" when it does not hold."""
    margin = diff - threshold
    if margin <= 0:
        return "not reproduced"
    if noise_level is None or margin <= noise_level:
        return "reproduced in direction"
    return "reproduced"


def value_of(ref: Ref | Fixed, results: dict, key: str | None = None) -> float:
    """The figure `ref` names, or its measure read from the result `key` (SOURCE or SOURCE#ENTRY)."""
    if isinstance(ref, Fixed):
        return ref.value
    source, _, entry = (key or ref.key).partition("#")
    if source not in results or (entry and entry not in results[source]):
        raise Missing(source + (f"#{entry}" if entry else ""))
    result = results[source]
    return ref.measure.value(result[entry] if entry else result)


def claim_noise(claim: Claim, results: dict) -> float | None:
    """|seed 0 - seed 1| on the repeated setting of what the claim compares: the figure itself
    when A and B come from different runs, A - B when they are two figures of one result."""
    if claim.noise_pair is None:
        return None if claim.fixed_noise is None else claim.fixed_noise.value
    seed0, seed1 = claim.noise_pair
    a, b = claim.a, claim.b
    if isinstance(a, Ref) and isinstance(b, Ref) and a.key == b.key:
        return noise(value_of(a, results, seed0) - value_of(b, results, seed0),
                     value_of(a, results, seed1) - value_of(b, results, seed1))
    return noise(value_of(a, results, seed0), value_of(a, results, seed1))


def claim_row(claim: Claim, results: dict, blocked: dict | None = None) -> dict:
    """The claim's figures, difference, noise and verdict; a claim whose figures are missing
    says which (blocked runs, or not yet run)."""
    row = {"claim": claim.name, "paper": claim.paper, "threshold": claim.threshold,
           "measure": _measure_label(claim), "a": _describe(claim.a), "b": _describe(claim.b),
           "sources": sorted({r.source for r in (claim.a, claim.b, claim.fixed_noise)
                              if isinstance(r, Fixed) and r.source})}
    needed = ({r.source for r in (claim.a, claim.b) if isinstance(r, Ref)}
              | {k.partition("#")[0] for k in claim.noise_pair or ()})
    stopped = {s: (blocked or {})[s] for s in sorted(needed) if s in (blocked or {})}
    if stopped:
        return {**row, "verdict": "not run: " + "; ".join(f"{s}: {why}" for s, why in stopped.items())}
    try:
        a, b = value_of(claim.a, results), value_of(claim.b, results)
        level = claim_noise(claim, results)
    except Missing as missing:
        return {**row, "verdict": f"not yet run ({missing.args[0]})"}
    except KeyError as exc:  # a result without the figure: a wrong measure, not a missing run
        return {**row, "verdict": f"error: no figure {exc} in the result"}
    source = (f"|{claim.noise_pair[0]} - {claim.noise_pair[1]}|" if claim.noise_pair
              else claim.fixed_noise.what if claim.fixed_noise else "not measured")
    return {**row, "value_a": a, "value_b": b, "diff": a - b, "noise": level, "noise_source": source,
            "verdict": verdict(a - b, level, claim.threshold)}


def _label(ref) -> str:
    return ref.measure.label if isinstance(ref, Ref) else ref.what.split(", ")[0]


def _measure_label(claim: Claim) -> str:
    """The figure compared; both when A and B are read differently (each run by its own similarity)."""
    a, b = _label(claim.a), _label(claim.b)
    return a if a == b or not (isinstance(claim.a, Ref) and isinstance(claim.b, Ref)) else f"{a} (A) against {b} (B)"


def _describe(ref) -> str:
    if isinstance(ref, Fixed):
        return ref.what
    return f"{ref.source}" + (f" [{ref.entry}]" if ref.entry else "")
