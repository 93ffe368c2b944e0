"""Language codes: which are accepted, and the base they come back as."""
import pytest

from xlingua.data.langs import normalize_lang


@pytest.mark.parametrize("code", ["english", "xx", "EN-", "", "z"])
def test_wrong_language_codes(code):
    with pytest.raises(ValueError, match="unknown language code"):
        normalize_lang(code)


def test_language_code_forms():
    assert [normalize_lang(c) for c in ("en", "ZH", "zh-Hans", "pt_BR", "eng")] == ["en", "zh", "zh", "pt", "eng"]
