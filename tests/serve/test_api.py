"""The HTTP API in process (httpx ASGI transport): every route and limit, dynamic batching
across requests, queued work dropped when a client hangs up. Errors, route by route in each
family's schema (429 on a full queue included), are in test_errors.py."""
from __future__ import annotations

import asyncio
import base64
import json
import time

import httpx
import numpy as np
import pytest

from tests.serve.conftest import GateEncoder, request
from xlingua.serve import ServeConfig, create_app, served_name

TEXTS = ["the red cat", "a dog runs to the house", "die katze", "le chien est petit"]


@pytest.fixture(scope="module")
def app(tiny_encoder):
    return create_app(tiny_encoder, ServeConfig("tiny", max_items=8, max_chars=300, max_body=20_000))


def _error(r, status, code=None, param=None):
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    if code:
        assert err["code"] == code
    assert err["param"] == param
    return err


# ---- OpenAI ------------------------------------------------------------------------------
def test_embeddings_equal_encode_in_order(app, tiny_encoder):
    r = request(app, "POST", "/v1/embeddings", json={"input": TEXTS, "model": "tiny"})
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "list" and body["model"] == "tiny"
    assert [d["index"] for d in body["data"]] == [0, 1, 2, 3] and body["data"][0]["object"] == "embedding"
    np.testing.assert_allclose([d["embedding"] for d in body["data"]], tiny_encoder.encode(TEXTS), atol=1e-6)
    assert body["usage"]["prompt_tokens"] == body["usage"]["total_tokens"] > len(TEXTS)


def test_base64_is_little_endian_float32_and_a_string_is_one_input(app, tiny_encoder):
    r = request(app, "POST", "/v1/embeddings", json={"input": TEXTS[1], "encoding_format": "base64"})
    (item,) = r.json()["data"]
    vec = np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4")
    np.testing.assert_allclose(vec, tiny_encoder.encode([TEXTS[1]])[0], atol=1e-7)


def test_dimensions_cut_and_renormalize(app, tiny_encoder):
    r = request(app, "POST", "/v1/embeddings", json={"input": [TEXTS[0]], "dimensions": 8})
    got = np.array(r.json()["data"][0]["embedding"])
    full = tiny_encoder.encode([TEXTS[0]])[0][:8]
    np.testing.assert_allclose(got, full / np.linalg.norm(full), atol=1e-6)
    _error(request(app, "POST", "/v1/embeddings", json={"input": "x", "dimensions": 33}), 422, "invalid_value", "dimensions")


def test_models_lists_the_served_model_only(app):
    assert [m["id"] for m in request(app, "GET", "/v1/models").json()["data"]] == ["tiny"]
    err = _error(request(app, "POST", "/v1/embeddings", json={"input": "x", "model": "/etc/passwd"}), 404,
                 "model_not_found", "model")
    assert "tiny" in err["message"]
    assert served_name("/home/someone/models/my-model") == "my-model"
    assert served_name("bundled,use") == "bundled,use"


def test_a_chunked_body_over_the_limit_and_unknown_routes(app):
    # a body sent without a length (chunked) is cut at the limit too
    async def chunks():
        for _ in range(5):
            yield b"x" * 5000

    _error(request(app, "POST", "/v1/embeddings", content=chunks()), 413, "body_too_large")
    _error(request(app, "GET", "/v1/nothing"), 404, "not_found")
    _error(request(app, "GET", "/static/../app.py"), 404)
    _error(request(app, "GET", "/static/index.py"), 404, "not_found")


def test_api_key_guards_inference_not_health_or_metrics(tiny_encoder):
    app = create_app(tiny_encoder, ServeConfig("tiny", api_key="s3cret"))
    _error(request(app, "POST", "/v1/embeddings", json={"input": "x"}), 401, "invalid_api_key")
    assert request(app, "POST", "/embed", json={"inputs": "x"},
                   headers={"Authorization": "Bearer nope"}).status_code == 401
    ok = request(app, "POST", "/v1/embeddings", json={"input": "x"}, headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200
    assert request(app, "GET", "/health").status_code == 200
    assert request(app, "GET", "/metrics").status_code == 200
    assert request(app, "GET", "/info").json()["api_key_required"] is True


# ---- TEI ---------------------------------------------------------------------------------
def test_tei_embed_similarity_tokenize_info_health(app, tiny_encoder):
    vecs = tiny_encoder.encode(TEXTS)
    got = request(app, "POST", "/embed", json={"inputs": TEXTS}).json()
    np.testing.assert_allclose(got, vecs, atol=1e-6)
    sims = request(app, "POST", "/similarity",
                   json={"inputs": {"source_sentence": TEXTS[0], "sentences": TEXTS[1:]}}).json()
    np.testing.assert_allclose(sims, vecs[1:] @ vecs[0], atol=1e-5)
    (toks,) = request(app, "POST", "/tokenize", json={"inputs": "the cat runs"}).json()
    words = [t for t in toks if not t["special"]]
    assert [t["text"] for t in words] == ["the", "cat", "runs"]
    assert [(t["start"], t["stop"]) for t in words] == [(0, 3), (4, 7), (8, 12)]
    assert toks[0]["special"] and toks[-1]["special"]
    info = request(app, "GET", "/info").json()
    assert info["model_id"] == "tiny" and info["dimension"] == tiny_encoder.dim
    assert info["max_input_length"] == 64
    assert info["limits"] == {"items_per_request": 8, "chars_per_item": 300, "body_bytes": 20_000,
                              "queue_texts": 4096, "sentences_per_document": 8}
    assert request(app, "GET", "/health").json() == {"status": "ok"}


def test_root_answers_as_teis_embedding_route_or_as_similarity(app, tiny_encoder):
    vecs = tiny_encoder.encode(TEXTS)
    for path in ("/", "/invocations"):
        one = request(app, "POST", path, json={"inputs": TEXTS[0]})
        assert one.status_code == 200
        np.testing.assert_allclose(one.json(), vecs[:1], atol=1e-6)
        np.testing.assert_allclose(request(app, "POST", path, json={"inputs": TEXTS}).json(), vecs, atol=1e-6)
        sims = request(app, "POST", path, json={"inputs": {"source_sentence": TEXTS[0], "sentences": TEXTS[1:]},
                                                "parameters": {}}).json()
        np.testing.assert_allclose(sims, vecs[1:] @ vecs[0], atol=1e-5)
    page = request(app, "GET", "/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert request(app, "GET", "/ping").json() == {"status": "ok"}
    plain = request(app, "POST", "/embeddings", json={"input": TEXTS, "model": "tiny"}).json()
    assert plain["model"] == "tiny"
    np.testing.assert_allclose([d["embedding"] for d in plain["data"]], vecs, atol=1e-6)


def test_tei_embed_dimensions_and_normalize(app, tiny_encoder):
    full = tiny_encoder.encode([TEXTS[1]])[0]
    cut = np.array(request(app, "POST", "/embed", json={"inputs": TEXTS[1], "dimensions": 8}).json()[0])
    np.testing.assert_allclose(cut, full[:8] / np.linalg.norm(full[:8]), atol=1e-6)
    raw = request(app, "POST", "/embed", json={"inputs": TEXTS[1], "dimensions": 8, "normalize": False}).json()[0]
    np.testing.assert_allclose(raw, full[:8], atol=1e-6)


def test_tei_truncate_embeds_the_first_window(app, tiny_encoder):
    long = " ".join(["a", "x"] * 60)  # 120 one-token words (239 characters); the window is 62
    got = np.array(request(app, "POST", "/embed", json={"inputs": [long], "truncate": True}).json()[0])
    first = " ".join(long.split()[:62])
    np.testing.assert_allclose(got, tiny_encoder.encode([first])[0], atol=1e-6)
    whole = np.array(request(app, "POST", "/embed", json={"inputs": [long]}).json()[0])
    np.testing.assert_allclose(whole, tiny_encoder.encode([long])[0], atol=1e-6)  # windows, as encode


def test_metrics_count_requests_by_route_and_code(app):
    request(app, "POST", "/v1/embeddings", json={"input": []})
    text = request(app, "GET", "/metrics").text
    assert 'xlingua_requests_total{code="400",route="/v1/embeddings"}' in text
    assert "xlingua_embedded_texts_total" in text and "xlingua_queue_texts" in text


# ---- xlingua's own -----------------------------------------------------------------------
def test_score_align_mine_call_the_commands_code(app, tiny_encoder):
    from xlingua.align import align_sentences
    from xlingua.score import score_texts

    embed = lambda t, lang=None: tiny_encoder.encode(t)  # noqa: E731
    src, tgt = ["the red cat", "a big dog", "the house"], ["die rote katze", "der große hund", "das haus"]
    got = request(app, "POST", "/score", json={"src": src, "tgt": tgt, "margin": True, "k": 2}).json()
    want = score_texts(embed, src, tgt, margin=True, k=2)
    np.testing.assert_allclose(got["cosine"], want["cosine"], atol=1e-5)
    np.testing.assert_allclose(got["margin"], want["margin"], atol=1e-5)
    _error(request(app, "POST", "/score", json={"src": src, "tgt": tgt[:2]}), 422, "invalid_value", "tgt")

    a, b = "The red cat. The big dog!\nThe house.", ["Die rote Katze.", "Der große Hund. Das Haus."]
    got = request(app, "POST", "/align", json={"a": a, "b": b}).json()
    want = align_sentences(embed, ["The red cat.", "The big dog!", "The house."],
                           ["Die rote Katze.", "Der große Hund.", "Das Haus."])
    assert got["a"] == want.a and got["b"] == want.b
    assert [(g["a"], g["b"]) for g in got["alignment"]] == [([r[0], r[1]], [r[2], r[3]]) for r in want.rows()]
    assert np.array(got["similarity"]).shape == (3, 3) and got["tsv"] == want.tsv()
    assert got["script_a"] == {"script": "Latin", "share": 1.0}
    _error(request(app, "POST", "/align", json={"a": " ".join(f"This is sentence {i}." for i in range(9)), "b": "Ja."}), 413,
           "too_many_sentences", "a")

    from xlingua.mining.memory import mine_rows

    mined = request(app, "POST", "/mine", json={"src": src, "tgt": tgt[::-1], "k": 2}).json()["pairs"]
    scores, rows_a, rows_b = mine_rows(tiny_encoder.encode(src), tiny_encoder.encode(tgt[::-1]), k=2)
    assert [(p["src"], p["tgt"]) for p in mined] == list(zip(rows_a.tolist(), rows_b.tolist()))
    np.testing.assert_allclose([p["score"] for p in mined], scores, atol=1e-5)
    assert all(p["src_text"] == src[p["src"]] and p["tgt_text"] == tgt[::-1][p["tgt"]] for p in mined)


def test_page_and_assets_are_served(app):
    page = request(app, "GET", "/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert 'id="align"' in page.text and "cdn" not in page.text.lower()
    assert "runAlign" in request(app, "GET", "/static/app.js").text
    assert request(app, "GET", "/static/style.css").headers["content-type"].startswith("text/css")


# ---- batching, overload, hang-ups ---------------------------------------------------------
async def _post(client, texts):
    return await client.post("/v1/embeddings", json={"input": texts})


def test_requests_queued_together_share_one_model_call():
    enc = GateEncoder()
    app = create_app(enc, ServeConfig("gate"))

    async def go():
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            enc.gate.clear()
            first = asyncio.create_task(_post(client, ["hold"]))
            while not enc.running.is_set():
                await asyncio.sleep(0.01)
            rest = [asyncio.create_task(_post(client, [f"t{i}", f"u{i}"])) for i in range(3)]
            while app.state.batcher.queued < 6:
                await asyncio.sleep(0.01)
            enc.gate.set()
            return await first, await asyncio.gather(*rest)

    first, rest = asyncio.run(go())
    assert enc.calls[0] == ["hold"] and sorted(enc.calls[1]) == sorted(f"{p}{i}" for i in range(3) for p in "tu")
    assert len(enc.calls) == 2
    for i, r in enumerate(rest):  # each request still gets its own rows
        np.testing.assert_allclose([d["embedding"] for d in r.json()["data"]],
                                   [GateEncoder.vector(f"t{i}"), GateEncoder.vector(f"u{i}")], atol=1e-6)


def test_a_client_that_hangs_up_has_its_queued_work_dropped():
    enc = GateEncoder()
    app = create_app(enc, ServeConfig("gate"))
    body = json.dumps({"input": ["dropped text"]}).encode()

    async def go():
        enc.gate.clear()
        hold = asyncio.create_task(_raw(app, json.dumps({"input": ["hold"]}).encode(), hang_up_after=None))
        while not enc.running.is_set():
            await asyncio.sleep(0.01)
        status = await _raw(app, body, hang_up_after=0.2)  # queued behind "hold", then gone
        assert app.state.batcher.queued == 0
        enc.gate.set()
        return status, await hold

    gone, held = asyncio.run(go())
    assert held == 200 and gone == 499
    time.sleep(0.1)
    assert all("dropped text" not in call for call in enc.calls)
    assert "xlingua_dropped_requests_total 1.0" in request(app, "GET", "/metrics").text


async def _raw(app, body: bytes, hang_up_after: float | None) -> int:
    """A raw ASGI POST whose client disconnects `hang_up_after` seconds after sending."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/v1/embeddings", "raw_path": b"/v1/embeddings", "query_string": b"",
             "root_path": "", "headers": [(b"content-type", b"application/json"),
                                          (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    sent = {"body": False}
    done = asyncio.Event()
    status = {}

    async def receive():
        if not sent["body"]:
            sent["body"] = True
            return {"type": "http.request", "body": body, "more_body": False}
        if hang_up_after is None:
            await done.wait()
        else:
            await asyncio.sleep(hang_up_after)
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            status["code"] = message["status"]
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    await app(scope, receive, send)
    return status.get("code")


def test_the_texts_language_reaches_a_model_routed_by_language():
    from tests.encoders.test_routed import Constant
    from xlingua.encoders.routed import RoutedEncoder

    routed = RoutedEncoder(Constant([1, 0, 0], "default"), Constant([0, 1, 0], "student"), ["kab"])
    app = create_app(routed, ServeConfig("routed"))
    assert request(app, "POST", "/embed", json={"inputs": ["Azul"], "lang": "kab"}).json() == [[0, 1, 0]]
    assert request(app, "POST", "/embed", json={"inputs": ["Azul"]}).json() == [[1, 0, 0]]
    got = request(app, "POST", "/v1/embeddings", json={"input": ["Azul", "Tanemmirt"], "lang": "kab"}).json()
    assert [d["embedding"] for d in got["data"]] == [[0, 1, 0]] * 2
    bad = request(app, "POST", "/embed", json={"inputs": ["Azul"], "lang": "zz"})
    assert bad.status_code == 422 and "unknown language code 'zz'" in bad.text
