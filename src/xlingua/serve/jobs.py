"""xlingua's own routes, running the commands' code: /score, /align and /mine."""
from __future__ import annotations

from typing import Any, Literal

import numpy as np
from fastapi import APIRouter
from pydantic import AliasChoices, Field

from xlingua.serve.errors import APIError
from xlingua.serve.state import AUTH, STATE, RequestBody, ServerState

router = APIRouter()


class ScoreRequest(RequestBody):
    src: Any
    tgt: Any
    margin: bool = False
    k: int = Field(4, ge=1, le=64)
    src_lang: str | None = None
    tgt_lang: str | None = None
    qe: bool = False


class AlignRequest(RequestBody):
    a: Any
    b: Any
    split: bool = True
    # the languages of a pair are src_lang and tgt_lang on every route; lang_a and lang_b, their
    # old names here, are still read
    src_lang: str | None = Field(None, validation_alias=AliasChoices("src_lang", "lang_a"))
    tgt_lang: str | None = Field(None, validation_alias=AliasChoices("tgt_lang", "lang_b"))


class MineRequest(RequestBody):
    src: Any
    tgt: Any
    k: int = Field(4, ge=1, le=64)
    margin: Literal["ratio", "distance", "absolute", "csls", "inbatch"] = "ratio"
    mode: Literal["forward", "backward", "intersect", "max", "union"] = "max"
    threshold: float | None = None


@router.post("/score", dependencies=AUTH)
async def score(body: ScoreRequest, state: ServerState = STATE):
    from xlingua.score import score_texts

    src, tgt = state.texts(body.src, "src"), state.texts(body.tgt, "tgt")
    if len(src) != len(tgt):
        raise APIError(422, f"src has {len(src)} items but tgt has {len(tgt)}", "invalid_value", "tgt")
    qe = None
    if body.qe:
        qe = state.qe_model()
        for i, (a, b) in enumerate(zip(src, tgt)):
            if not a.strip() or not b.strip():
                side = f"{'src' if not a.strip() else 'tgt'}[{i}]"
                raise APIError(400, f"{side} is empty; qe needs a source and its translation",
                               "empty_input", side)
    out = await state.in_pool(score_texts, state.blocking_embed, src, tgt, body.margin, body.k,
                              body.src_lang, body.tgt_lang, qe)
    answer = {name: v.round(6).tolist() for name, v in out.items()}
    if qe is not None:
        from xlingua.qe.load import qe_route_text
        from xlingua.score import qe_pair

        answer["qe_route"] = qe_route_text(qe, qe_pair(body.src_lang, body.tgt_lang))
    return answer


@router.post("/align", dependencies=AUTH)
async def align(body: AlignRequest, state: ServerState = STATE):
    from xlingua.align import align_sentences, document_sentences

    limit = state.config.max_items
    docs = []
    for name, value, lang in (("a", body.a, body.src_lang), ("b", body.b, body.tgt_lang)):
        sents = document_sentences(state.texts(value, name), body.split, lang)
        if len(sents) > limit:
            raise APIError(413, f"{name} has {len(sents)} sentences, over the limit of "
                           f"{limit} per document", "too_many_sentences", name)
        docs.append(sents)
    result = await state.in_pool(align_sentences, state.blocking_embed, docs[0], docs[1],
                                 body.src_lang, body.tgt_lang)
    return {"a": result.a, "b": result.b,
            "script_a": _script(" ".join(result.a)), "script_b": _script(" ".join(result.b)),
            "alignment": [{"a": [r[0], r[1]], "b": [r[2], r[3]],
                           "score": None if r[4] is None else round(r[4], 6),
                           "a_text": r[5], "b_text": r[6]} for r in result.rows()],
            "similarity": np.round(result.similarity, 4).tolist(), "tsv": result.tsv()}


@router.post("/mine", dependencies=AUTH)
async def mine(body: MineRequest, state: ServerState = STATE):
    src, tgt = state.texts(body.src, "src"), state.texts(body.tgt, "tgt")

    def run():
        from xlingua.mining.memory import mine_rows
        from xlingua.similarity.select import apply_threshold

        found = mine_rows(state.blocking_embed(src), state.blocking_embed(tgt), k=body.k,
                          margin=body.margin, mode=body.mode)
        return apply_threshold(*found, body.threshold)

    s, a, b = await state.in_pool(run)
    return {"pairs": [{"src": int(i), "tgt": int(j), "score": round(float(x), 6),
                       "src_text": src[i], "tgt_text": tgt[j]} for x, i, j in zip(s, a, b)]}


def _script(text: str) -> dict | None:
    """The main writing system of a text and its share of the letters."""
    from xlingua.data.scripts import main_script

    found = main_script(text)
    return None if found is None else {"script": found[0], "share": round(found[1], 3)}
