"""A model that routes by language, LASER3's way (Heffernan et al. 2022): a student trained for a
group of languages (`xlingua extend --routed`) embeds text in those languages; the model it was
distilled from embeds everything else, English included. Text in any other language, or given
without a language, embeds exactly as that model's, so training the student cannot cost them.

A shipped student says so in its manifest (`route`: the model it routes beside and its
languages, `xlingua ship --route`); loading it by name builds both on the same engine
(bundled.py). Codes are matched as `normalize_lang` reads them, ISO 639-1 or -3 and an optional
script: `kab`, `gla` for `gd`, `ayr_Latn` for `ay`; a language the route names with a script
(`mni-Latn`) takes only codes that name that script."""
from __future__ import annotations

import re

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.encoders.manifest import ROUTE_MARK
from xlingua.data.langs import normalize_lang

#: ISO 639-3 (and macrolanguage) codes of the routed languages that also have an ISO 639-1 code,
#: as the evaluation sets and FLORES write them
ISO3_TO_1 = {"aym": "ay", "ayr": "ay", "bam": "bm", "ewe": "ee", "gla": "gd", "kur": "ku", "kmr": "ku",
             "lug": "lg", "orm": "om", "gaz": "om", "wol": "wo", "yor": "yo", "din": "dik"}
_SCRIPT = re.compile(r"^[A-Z][a-z]{3}$")


def route_key(lang: str | None) -> tuple[str, str | None] | None:
    """(base code, script or None) of a language code, as routes compare them; None for none."""
    if not lang:
        return None
    base = normalize_lang(lang)
    parts = re.split(r"[-_]", lang.strip())[1:]
    script = next((p.title() for p in parts if _SCRIPT.match(p.title()) and len(p) == 4), None)
    return ISO3_TO_1.get(base, base), script


def routes_to(lang: str | None, langs: list[str]) -> bool:
    """Whether text in `lang` goes to a student of `langs` (codes as `xlingua extend` names them:
    `kab`, `mni-Latn`). A route without a script takes its language in any script or none; a
    route with one takes only codes naming that script."""
    return _matches(route_key(lang), [route_key(code) for code in langs])


def _matches(key: tuple | None, routes: list[tuple]) -> bool:
    return key is not None and any(key[0] == base and script in (None, key[1]) for base, script in routes)


class RoutedEncoder(Encoder):
    """`student` for text in `langs`, `default` for every other language and for text without one.
    `student` may be a function that builds it: it is then built when text first routes to it,
    so a run that never names those languages loads one model, not two; `student_id` then names
    it in the fingerprint (the model, its engine and its weights' checksum)."""

    uses_lang = True  # the language is part of a cached vector's key (encoders.cache)

    def __init__(self, default: Encoder, student, langs: list[str], name: str | None = None,
                 student_id: str | None = None):
        # parsed once (an unknown code fails here, not at the first text), not at every call
        self._routes = [route_key(code) for code in langs]
        self.default, self.langs = default, list(langs)
        self._student, self._student_id = student, student_id
        if isinstance(student, Encoder):
            self._check(student)
        self.dim, self.normalized = default.dim, default.normalized
        self.name = name or getattr(student, "name", default.name)

    def _check(self, student: Encoder) -> Encoder:
        if student.dim != self.default.dim:
            raise ValueError(f"a routed student embeds in {student.dim} dimensions, its model in {self.default.dim}")
        return student

    @property
    def student(self) -> Encoder:
        if not isinstance(self._student, Encoder):
            self._student = self._check(self._student())
        return self._student

    def __getattr__(self, name: str):
        # what is not routed (tokenizer, max_length, the engine's settings) is the default model's,
        # so code that reads them sees the model every other language is embedded by
        if name in ("default", "langs", "_routes", "_student", "_student_id") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.default, name)

    def pick(self, lang: str | None) -> Encoder:
        return self.student if _matches(route_key(lang), self._routes) else self.default

    def encode(self, texts, lang=None, batch_size=64, show_progress=False) -> np.ndarray:
        return self.pick(lang).encode(texts, lang=lang, batch_size=batch_size, show_progress=show_progress)

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        return self.pick(lang).encode(texts, lang=lang)

    def fingerprint(self) -> str:
        student = self._student_id or self.student.fingerprint()
        return f"{self.default.fingerprint()}{ROUTE_MARK}{','.join(self.langs)}>{student}"


def route_of(model: str) -> dict | None:
    """The route a shipped model's manifest declares ({"default": NAME, "langs": [...]}, and the
    SHA-256 of its weights' file as "sha256"), or None."""
    from xlingua.encoders.loading import SHIPPED_ON_E5

    if model not in SHIPPED_ON_E5:
        return None
    from xlingua.encoders.manifest import read_manifest
    from xlingua.encoders.model_packages import model_dir

    manifest = read_manifest(model_dir(model)) or {}
    route = manifest.get("route")
    return None if route is None else {**route, "sha256": min(manifest["files"].values())}
