"""Writing systems: the script a language is written in, the share of a text's letters written
in it, a text's main script, and the check that a corpus is written in its language's script.

A language's script comes from the language tag when it names one (sr-Latn, ks-Deva), else from
CLDR's likely-subtags data (hi -> Deva, ja -> Jpan), through `langcodes`. A character's script
is its Unicode Script property, through `regex` (`\\p{sc=Deva}`). Languages CLDR does not know
get no script (None): callers skip the check rather than guess.
"""
from __future__ import annotations

import functools

import langcodes
import regex
from langcodes.data_dicts import LIKELY_SUBTAGS

# CLDR writes a few languages with combined scripts (ISO 15924); these are the Unicode scripts
# their letters belong to.
COMBINED = {"Jpan": ("Hani", "Hira", "Kana"), "Kore": ("Hang", "Hani"), "Hans": ("Hani",),
            "Hant": ("Hani",), "Hanb": ("Hani", "Bopo")}
# Scripts written without spaces between words: a space there ends a phrase or a sentence.
NO_SPACE_SCRIPTS = frozenset({"Hans", "Hant", "Jpan", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"})
# Letters and marks of a real script: vowel signs count (Indic), inherited/common marks do not.
_LETTER = regex.compile(r"(?=[\p{L}\p{M}])[^\p{sc=Zinh}\p{sc=Zyyy}]")


@functools.lru_cache(maxsize=None)
def lang_script(lang: str) -> str | None:
    """ISO 15924 script of a language tag ("hi" -> "Deva", "zh-Hant" -> "Hant"), or None when
    the tag is not a language CLDR knows."""
    try:
        tag = langcodes.Language.get(lang)
    except (langcodes.LanguageTagError, ValueError):
        return None
    if tag.script:
        return tag.script
    if tag.language not in LIKELY_SUBTAGS:
        return None
    return tag.maximize().script


def writes_spaces(lang: str) -> bool:
    """Whether `lang` puts spaces between words; True for a language CLDR does not know."""
    return lang_script(lang) not in NO_SPACE_SCRIPTS


@functools.lru_cache(maxsize=None)
def _script_pattern(script: str):
    parts = "".join(rf"\p{{sc={s}}}" for s in COMBINED.get(script, (script,)))
    return regex.compile(rf"(?=[\p{{L}}\p{{M}}])[{parts}]")


def any_char_of(scripts) -> "regex.Pattern":
    """A pattern matching any character of the Unicode `scripts` (letters, marks, digits,
    punctuation of their own): a text it finds something in holds one of them."""
    return regex.compile("[" + "".join(rf"\p{{sc={s}}}" for s in sorted(scripts)) + "]")


def script_share(text: str, script: str) -> float | None:
    """Share of the letters of `text` that are in `script` (None when it has no letters)."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return None
    return len(_script_pattern(script).findall(text)) / letters


def script_family(script: str | None) -> str:
    """Coarse family of a script, for reporting figures per family."""
    if script is None:
        return "unknown"
    for family, members in _FAMILIES.items():
        if script in members:
            return family
    return "other"


_FAMILIES = {
    "latin": {"Latn"},
    "cyrillic": {"Cyrl"},
    "arabic": {"Arab", "Thaa", "Syrc", "Nkoo"},
    "indic": {"Deva", "Beng", "Guru", "Gujr", "Orya", "Taml", "Telu", "Knda", "Mlym", "Sinh", "Olck"},
    "cjk": {"Hans", "Hant", "Jpan", "Kore", "Hani"},
    "southeast-asian": {"Thai", "Laoo", "Khmr", "Mymr", "Bali", "Bugi", "Java"},
    "ethiopic": {"Ethi"},
    "tibetan": {"Tibt"},
}


def main_script(text: str) -> tuple[str, float] | None:
    """The Unicode script most of the letters of `text` are in, by its name ("Latin", "Han"),
    and its share of the letters (counted as `script_share` counts them); None without letters."""
    from fontTools.unicodedata import script, script_name  # Scripts.txt with names; matplotlib needs it

    counts: dict[str, int] = {}
    for ch in _LETTER.findall(text):
        code = script(ch)
        counts[code] = counts.get(code, 0) + 1
    if not counts:
        return None
    top = max(counts, key=counts.get)
    return script_name(top), counts[top] / sum(counts.values())


# Languages a corpus is checked against: each is written almost only in its CLDR script (or also
# in those of ALSO_WRITTEN_IN), so a sample mostly in another script means a wrong language code.
CHECKED = set("""am ar be bg bn ca cs da de el en es et eu fa fi fr gl he hi hr hu hy id it ja ka kk
ko lt lv mk mr ms ne nb nl no pl pt ro ru sk sl sr sv sw ta te th tr uk ur vi zh""".split())
ALSO_WRITTEN_IN = {"sr": ("Latn",)}
MIN_SHARE = 0.2


def check_script(texts, lang: str, where: str) -> None:
    """Raise if a sample of a corpus in `lang` is (almost) never written in the language's script."""
    if lang not in CHECKED:
        return
    scripts = (lang_script(lang), *ALSO_WRITTEN_IN.get(lang, ()))
    text = "\n".join(texts)
    shares = [script_share(text, s) for s in scripts]
    if shares[0] is None:  # no letters: nothing to judge
        return
    share = sum(shares)  # the alternatives share no letters
    if share < MIN_SHARE:
        names = "/".join(f if (f := script_family(s)) != "other" else s for s in scripts)
        raise ValueError(f"{where}: only {share:.0%} of the letters are in the {names} script "
                         f"expected for language {lang!r}; check the language code (or pass --skip-lang-check)")


@functools.lru_cache(maxsize=None)
def base_language(code: str) -> str:
    """Language subtag of a tag after CLDR's replacements ("iw" -> "he", "prs" -> "fa",
    "zh-Hant" -> "zh", "tl" -> "fil"), so codes from different libraries compare; "no" is
    taken as Bokmål, as language identifiers mean it."""
    try:
        lang = langcodes.Language.get(langcodes.standardize_tag(code)).language or code
    except (langcodes.LanguageTagError, ValueError):
        lang = code
    return "nb" if lang == "no" else lang
