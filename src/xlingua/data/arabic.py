"""Arabic-script diacritics: a copy of a text without its harakat, and training pairs doubled with
such copies, so that a model learns to read a language both with the marks and without them
(Ajami and Jawi text writes vowels that most Arabic-script text leaves out).

What `strip_harakat` removes, every one a combining mark (Unicode category Mn) except tatweel:
- U+064B-U+0652, the harakat proper: tanwin, fatha, damma, kasra, shadda, sukun;
- U+0656-U+065E, further vowel signs (subscript alef, inverted damma, noon ghunna, Pashto
  zwarakay, the small-v signs, dot below, reversed damma, fatha with two dots);
- U+0670, superscript (dagger) alef, a long vowel written above the line;
- the combining Quranic annotation marks, U+06D6-U+06DC, U+06DF-U+06E4, U+06E7-U+06E8,
  U+06EA-U+06ED (Central Kanuri's Ajami writes U+06E1 and U+06E7 as vowel signs), and those of
  Arabic Extended-A and -B, U+0898-U+089F, U+08CA-U+08E1, U+08E3-U+08FF (curly fatha in Jawi);
- U+0640 tatweel, which only stretches the joining stroke.
Kept: U+0653-U+0655 and U+065F, maddah and the hamza marks, which with a letter spell another
consonant (alef + hamza above is أ; Kashmiri also writes vowels with them); U+06DD, U+06DE,
U+06E9 and U+08E2, verse-end and section signs that stand on their own; U+06E5-U+06E6, small waw
and yeh, spacing letters. The function applies to any text; only Arabic-script pairs are copied.
"""
from __future__ import annotations

import re

HARAKAT = "\u064b-\u0652"  # fathatan .. sukun
TATWEEL = "\u0640"
SUPERSCRIPT_ALEF = "\u0670"
VOWEL_SIGNS = "\u0656-\u065e"
QURANIC = "\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\u0898-\u089f\u08ca-\u08e1\u08e3-\u08ff"
_STRIP = re.compile(f"[{HARAKAT}{VOWEL_SIGNS}{SUPERSCRIPT_ALEF}{QURANIC}{TATWEEL}]+")


def strip_harakat(text: str) -> str:
    """`text` without the marks listed in the module docstring; a text without them is
    returned unchanged."""
    return _STRIP.sub("", text)


def is_arabic_script(lang: str, text: str) -> bool:
    """Whether `lang` is written in Arabic script (its tag or CLDR says so); for a code CLDR does
    not know, whether most of `text`'s letters are Arabic."""
    from xlingua.data.scripts import lang_script, script_share

    script = lang_script(lang)
    if script is not None:
        return script == "Arab"
    return (script_share(text, "Arab") or 0) > 0.5


def with_stripped_copies(examples: list[tuple]) -> list[tuple]:
    """`examples` (translation, pivot, lang, ...), each Arabic-script one followed by a copy with
    its translation's harakat stripped, where that changes it. The copy keeps the pivot side,
    so the language sampler, which keys examples by it, never puts both in one batch."""
    if examples and (len(examples[0]) < 3 or not isinstance(examples[0][2], str)):
        raise ValueError("strip_harakat needs pairs tagged with their language (general, lowres, l10n, own_pairs)")
    out = []
    for e in examples:
        out.append(e)
        if _STRIP.search(e[0]) and is_arabic_script(e[2], e[0]):
            out.append((strip_harakat(e[0]), *e[1:]))
    return out
