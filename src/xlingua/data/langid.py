"""Language identification of single sentences: py3langid (langid.py's model, inside the
wheel; Lui & Baldwin 2012), with per-language probability thresholds.

py3langid was chosen by benchmarks/lid.py (docs/prepare.md): on sentences of 158 languages
it had the best accuracy on the languages every candidate covers, at thousands of sentences/s
(a small share of embedding time). `lid_thresholds.json` beside this file was written by the
same benchmark: for each language py3langid knows, the probability that 95% of its correctly
identified sentences reach, capped at stopes' default 0.5; null where py3langid identifies
the language on fewer than half of its sentences (Bosnian vs Croatian, Arabic dialects):
there, and for languages it does not know, the caller keeps only the script check.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

from xlingua.data.scripts import base_language

THRESHOLDS_FILE = Path(__file__).with_name("lid_thresholds.json")


@functools.lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify(texts) -> list[tuple[str, float]]:
    """(language, probability) for each text; languages as base codes (see base_language)."""
    ident = _identifier()
    out = []
    for text in texts:
        lang, prob = ident.classify(text)
        out.append((base_language(lang), float(prob)))
    return out


@functools.lru_cache(maxsize=1)
def _thresholds() -> dict:
    return json.loads(THRESHOLDS_FILE.read_text(encoding="utf-8"))


def lid_threshold(lang: str) -> float | None:
    """Probability a sentence needs to count as `lang`; None: identification is not reliable
    for this language (unknown to the model, or mostly mistaken for a neighbour)."""
    table = _thresholds()
    for key in (lang, base_language(lang)):
        if key in table:
            return table[key]
    return None


#: labels py3langid gives to text of another language of the same macrolanguage: it calls 12 %
#: of BUCC zh-en's Mandarin lines Wu (`wuu`) and 0.8 % Cantonese (`yue`), all plain Mandarin
#: Wikipedia sentences, which would be lost to a zh side
ALSO_ACCEPTED = {"zh": ("wuu", "yue")}


def is_language(predicted: str, lang: str) -> bool:
    want, got = base_language(lang), base_language(predicted)
    return got == want or got in ALSO_ACCEPTED.get(want, ())


def identified_as(texts, lang: str) -> list[bool]:
    """Whether each text is identified as `lang`; all True where identification is not
    reliable for `lang` (lid_threshold is None), so those languages are never filtered."""
    texts = list(texts)
    if lid_threshold(lang) is None:
        return [True] * len(texts)
    return [is_language(pred, lang) for pred, _ in identify(texts)]


def identified_chunk(args: tuple[list[str], str]) -> list[bool]:
    """identified_as((texts, lang)) as one argument: what a process pool maps."""
    texts, lang = args
    return identified_as(texts, lang)
