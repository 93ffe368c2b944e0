"""Which languages an extension trains on: group names and codes, checked against the general
corpus (or a user's own pair file for a language the corpus lacks), or codes of the low-resource
corpus (`xlingua extend --lowres`)."""
from __future__ import annotations

# Languages the default model fails to retrieve, grouped by script: a group shares its new
# tokenizer pieces and its batches (in-batch negatives).
GROUPS = {
    "tibetan": ("dz", "bo"),                              # Dzongkha, Tibetan
    "tifinagh": ("taq-Tfng", "zgh"),                      # Tamasheq, Standard Moroccan Tamazight
    "arabic-script": ("ace-Arab", "bjn-Arab", "knc-Arab"),  # Acehnese, Banjar, Central Kanuri
}
# Original languages whose dev slices the report and the dev choice watch while a group trains:
# Arabic-script neighbours (new pieces may change how their text splits) and other scripts.
KEEP_DEV = ("ar", "fa", "ur", "de", "ru", "hi", "zh", "sw")


def resolve_langs(given: list[str], pairs: str | None = None, root=None) -> list[str]:
    """Codes of the languages named by `given` (codes or GROUPS names), in order, each once.
    With `pairs` (a user's file), exactly one code is given, the file's language; without,
    every code needs general-corpus data."""
    from xlingua.data.general import available

    if not given:
        raise ValueError(f"name at least one --lang: a language code or a group ({', '.join(GROUPS)})")
    codes = list(dict.fromkeys(c for g in given for c in GROUPS.get(g, (g,))))
    if pairs is not None:
        if len(given) != 1 or given[0] in GROUPS:
            raise ValueError(f"--pairs {pairs} holds one language: give exactly one --lang code with it, got {given}")
        return codes
    have = {l for ls in available(root).values() for l in ls}
    missing = [c for c in codes if c not in have]
    if missing:
        raise ValueError(f"no general-corpus data for {missing}: give a group ({', '.join(GROUPS)}), a corpus "
                         "language, or --pairs FILE with your own translations")
    return codes


def resolve_lowres_langs(given: list[str] | None, root=None) -> list[str]:
    """Codes of the low-resource corpus (data.lowres) named by `given`, in order, each once; none
    given = every language it has. Reading their dev slices checks every file and line."""
    from xlingua.data.lowres import read_lowres

    codes = list(dict.fromkeys(given or ()))
    dev = read_lowres(codes or None, split="dev", root=root)
    return codes or list(dict.fromkeys(p.lang for p in dev))
