"""Sentence filters run before mining, in the order and with the defaults of stopes'
monolingual pipeline (`pipelines/monolingual/conf/monolingual.yaml`, the NLLB mining data,
NLLB Team 2022 section 5.2): length, punctuation / digit / space / emoji ratios, repeated
characters, script, then language identification. The first rule a sentence fails is the one
it is counted under.

Characters are classed by Unicode property (regex), so the ratios mean the same in every
script: punctuation is \\p{P} and symbols \\p{S} (stopes counts ASCII symbols such as | too),
emoji aside, digits \\p{Nd}, emoji \\p{Extended_Pictographic}. Scripts
written without spaces between words skip the space-ratio rule.
"""
from __future__ import annotations

import dataclasses
import itertools

import regex

from xlingua.data.scripts import NO_SPACE_SCRIPTS, lang_script, script_share

RULES = ("replacement_char", "too_short", "too_long", "punct_ratio", "digit_ratio",
         "space_ratio", "emoji_ratio", "repeated_char", "script", "lid_language", "lid_threshold")
_PUNCT = regex.compile(r"(?V1)[[\p{P}\p{S}]--\p{Extended_Pictographic}]")
_DIGIT = regex.compile(r"\p{Nd}")
_SPACE = regex.compile(r"\s")
_EMOJI = regex.compile(r"\p{Extended_Pictographic}")


@dataclasses.dataclass(frozen=True)
class FilterConfig:
    min_chars: int = 10
    max_chars: int = 500
    max_punct_ratio: float = 0.2
    max_digit_ratio: float = 0.2
    min_space_ratio: float = 0.05
    max_space_ratio: float = 0.3
    max_emoji_ratio: float = 0.1
    max_repeated_char: int = 20
    min_script_share: float = 0.5

    def validate(self) -> None:
        if not 0 <= self.min_chars <= self.max_chars:
            raise ValueError(f"need 0 <= min_chars <= max_chars, got {self.min_chars} and {self.max_chars}")
        for name in ("max_punct_ratio", "max_digit_ratio", "min_space_ratio", "max_space_ratio",
                     "max_emoji_ratio", "min_script_share"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)}")


def failed_rule(sentence: str, lang: str, config: FilterConfig) -> str | None:
    """The first rule (before language identification) `sentence` fails, or None."""
    n = len(sentence)
    if "\ufffd" in sentence:
        return "replacement_char"  # undecodable bytes in the input (read with errors=replace)
    if n < config.min_chars:
        return "too_short"
    if n > config.max_chars:
        return "too_long"
    if len(_PUNCT.findall(sentence)) / n > config.max_punct_ratio:
        return "punct_ratio"
    if len(_DIGIT.findall(sentence)) / n > config.max_digit_ratio:
        return "digit_ratio"
    script = lang_script(lang)
    if script not in NO_SPACE_SCRIPTS:
        space = len(_SPACE.findall(sentence)) / n
        if not config.min_space_ratio <= space <= config.max_space_ratio:
            return "space_ratio"
    if len(_EMOJI.findall(sentence)) / n > config.max_emoji_ratio:
        return "emoji_ratio"
    if max(sum(1 for _ in run) for _, run in itertools.groupby(sentence)) > config.max_repeated_char:
        return "repeated_char"
    if script is not None:
        share = script_share(sentence, script)
        if share is None or share < config.min_script_share:
            return "script"
    return None
