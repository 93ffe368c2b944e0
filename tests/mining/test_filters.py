"""Each pre-mining filter on hand-made lines: the rule that drops it, or None."""
from __future__ import annotations

import pytest

from xlingua.mining.filters import FilterConfig, failed_rule

CFG = FilterConfig()
GOOD = "Dies ist ein ganz normaler deutscher Satz."


@pytest.mark.parametrize("line,lang,rule", [
    (GOOD, "de", None),
    ("Zu kurz.", "de", "too_short"),                                 # 8 < 10 characters
    ("Wort " * 101, "de", "too_long"),                               # 505 > 500
    ("--- Home | News | Sport | Login ---", "de", "punct_ratio"),      # '|' counts, as in stopes
    ("Tel. 030 1234567 89 / Fax 030 1234567 90", "de", "digit_ratio"),
    ("Einwortsatzohneleerzeichenbisansende", "de", "space_ratio"),    # no space at all
    ("a b c d e f g h i j k l m", "de", "space_ratio"),               # 12 of 25 characters
    ("Gute Nacht 😴😴 😴😴 😴😴 😴", "de", "emoji_ratio"),
    ("Achtung" + "!" * 3 + " Das ist " + "s" * 21 + "uper toll", "de", "repeated_char"),
    ("Это вполне нормальное русское предложение.", "de", "script"),   # Cyrillic for German
    ("Dies ist ein Satz mit \ufffd kaputten Bytes.", "de", "replacement_char"),
    ("今天的天气非常好，我们去公园散步吧。", "zh", None),                # no spaces needed in Han
    ("यह एक सामान्य हिंदी वाक्य है जो ठीक है।", "hi", None),
    ("Unbekannte Sprache, kein Skripttest hier.", "xx", None),         # no CLDR script: skipped
])
def test_rule_for_line(line, lang, rule):
    assert failed_rule(line, lang, CFG) == rule


def test_first_failing_rule_counts():
    # too short and all punctuation: counted once, as too_short (the first rule)
    assert failed_rule("!!!", "en", CFG) == "too_short"


def test_thresholds_are_configurable_and_checked():
    assert failed_rule("Zu kurz.", "de", FilterConfig(min_chars=5)) is None
    with pytest.raises(ValueError, match="min_chars <= max_chars"):
        FilterConfig(min_chars=50, max_chars=10).validate()
    with pytest.raises(ValueError, match=r"max_punct_ratio must lie in \[0, 1\]"):
        FilterConfig(max_punct_ratio=2).validate()
