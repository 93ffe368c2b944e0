"""Language codes: reject codes that name no language. (Whether a corpus is written in its
language's script is `data.scripts.check_script`.)"""
from __future__ import annotations

import re

# ISO 639-1 codes.
ISO639_1 = set("""aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co
cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he
hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku
kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr
nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr
ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo
za zh zu""".split())

_CODE = re.compile(r"^([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{2,8})*$")


def normalize_lang(code: str) -> str:
    """Check a language code (ISO 639-1, or any three-letter 639-2/3 code, optionally with a
    script/region suffix such as zh-Hans or pt_BR) and return its base in lower case."""
    m = _CODE.match(code.strip()) if code else None
    base = m.group(1).lower() if m else None
    if base is None or (len(base) == 2 and base not in ISO639_1):
        raise ValueError(f"unknown language code {code!r}: give an ISO 639 code such as "
                         "en, zh, de or eng (optionally with a script/region, e.g. zh-Hans)")
    return base

