"""Language identification on known sentences, and the per-language thresholds."""
from __future__ import annotations

from xlingua.data.langid import identify, is_language, lid_threshold

KNOWN = {
    "en": "The committee will publish its final report next week.",
    "de": "Der Ausschuss wird seinen Abschlussbericht nächste Woche veröffentlichen.",
    "fr": "Le comité publiera son rapport final la semaine prochaine.",
    "ru": "Комитет опубликует свой окончательный доклад на следующей неделе.",
    "zh": "委员会将于下周发布最终报告。",
    "ar": "ستنشر اللجنة تقريرها النهائي الأسبوع المقبل.",
    "hi": "समिति अगले सप्ताह अपनी अंतिम रिपोर्ट प्रकाशित करेगी।",
    "ja": "委員会は来週最終報告書を発表する予定です。",
}


def test_known_sentences():
    preds = identify(list(KNOWN.values()))
    assert [p for p, _ in preds] == list(KNOWN)
    assert all(0.5 <= prob <= 1 for _, prob in preds)


def test_codes_compare_across_libraries():
    assert is_language("iw", "he") and is_language("zh", "zh-Hant") and is_language("no", "nb")
    assert not is_language("hr", "bs")


def test_thresholds():
    assert lid_threshold("de") == 0.5 and lid_threshold("deu") == 0.5  # stopes' default
    assert lid_threshold("bs") is None          # mostly identified as Croatian: script check only
    assert lid_threshold("sr") is None and lid_threshold("sr-Cyrl") == 0.5
    assert lid_threshold("xx") is None          # not a language the model knows


def test_mandarin_that_the_identifier_calls_wu_counts_as_chinese():
    # a plain Mandarin sentence of BUCC zh-en that py3langid labels Wu Chinese
    line = "本省有多个大型水库，较为著名的有抚顺大伙房水库、辽阳参窝水库、铁岭清河水库等。"
    assert identify([line])[0][0] == "wuu"
    assert is_language("wuu", "zh") and is_language("yue", "zh-Hans")
    assert not is_language("zh", "wuu") and not is_language("ja", "zh")
