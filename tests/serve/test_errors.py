"""Malformed requests, route by route: every TEI route answers in TEI's schema with the status
TEI's router gives, every OpenAI route in OpenAI's schema, each naming what is wrong."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.serve.conftest import GateEncoder, request
from xlingua.serve import ServeConfig, create_app


@pytest.fixture(scope="module")
def app(tiny_encoder):
    return create_app(tiny_encoder, ServeConfig("tiny", max_items=8, max_chars=300, max_body=20_000))


def tei_error(r, status, error_type, says=None):
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "error_type"} and isinstance(body["error"], str) and body["error"]
    assert body["error_type"] == error_type
    if says:
        assert says in body["error"], body["error"]
    return body["error"]


def openai_error(r, status, code, param=None):
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    assert err["code"] == code and err["param"] == param
    return err


def _similarity(texts):
    return {"inputs": {"source_sentence": "the cat", "sentences": texts}}


#: TEI's routes that take a body: (path, the body holding the texts, how messages name them);
#: the root reads /embed's body and /similarity's
TEI_BODIES = {
    "embed": ("/embed", lambda v: {"inputs": v}, "inputs"),
    "root": ("/", lambda v: {"inputs": v}, "inputs"),
    "invocations": ("/invocations", lambda v: {"inputs": v}, "inputs"),
    "tokenize": ("/tokenize", lambda v: {"inputs": v}, "inputs"),
    "similarity": ("/similarity", _similarity, "inputs.sentences"),
    "root-similarity": ("/", _similarity, "inputs.sentences"),
    "invocations-similarity": ("/invocations", _similarity, "inputs.sentences"),
}

#: fault -> (texts, TEI status, TEI error_type, what the message says, OpenAI status, OpenAI code, param)
FAULTS = {
    "empty_string": ("", 400, "empty", "{name} is empty", 400, "empty_input", ""),
    "empty_list": ([], 400, "empty", "{name} is empty", 400, "empty_input", ""),
    "empty_item": (["ok", "  "], 400, "empty", "{name}[1] is empty", 400, "empty_input", "[1]"),
    "number": (["ok", 7], 422, "validation", "{name}[1] must be a string", 422, "invalid_type", "[1]"),
    "object": ({"a": 1}, 422, "validation", "{name}", 422, "invalid_type", ""),
    "too_many": (["x"] * 9, 422, "validation", "over the limit of", 413, "too_many_items", ""),
    "too_long": (["ok", "y" * 301], 422, "validation", "{name}[1] has 301 characters", 413, "item_too_long", "[1]"),
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("route", TEI_BODIES)
def test_tei_routes_answer_faults_in_teis_schema(app, route, fault):
    path, body, name = TEI_BODIES[route]
    texts, status, kind, says = FAULTS[fault][:4]
    tei_error(request(app, "POST", path, json=body(texts)), status, kind, says.format(name=name))


@pytest.mark.parametrize("route", ["/embed", "/", "/invocations", "/tokenize", "/similarity"])
def test_tei_routes_answer_malformed_bodies_in_teis_schema(app, route):
    bad_json = request(app, "POST", route, content=b"{not json", headers={"content-type": "application/json"})
    tei_error(bad_json, 422, "validation", "not valid JSON")
    tei_error(request(app, "POST", route, json={}), 422, "validation", "inputs: Field required")
    tei_error(request(app, "POST", route, json=["x"]), 422, "validation")
    tei_error(request(app, "POST", route, json={"inputs": ["z" * 250] * 80}), 413, "validation",
              "over the limit of 20,000 bytes")


def test_tei_root_names_the_shapes_it_reads(app):
    tei_error(request(app, "POST", "/", json={"inputs": {"text": "x"}}), 422, "validation",
              "inputs must be a string, a list of strings or {source_sentence, sentences}")
    tei_error(request(app, "POST", "/", json={"inputs": {"source_sentence": ["a", "b"], "sentences": ["c"]}}),
              422, "validation", "inputs.source_sentence must be one string")
    tei_error(request(app, "GET", "/embed"), 405, "validation")
    tei_error(request(app, "PUT", "/"), 405, "validation")


def test_tei_embed_options_it_cannot_honour_are_refused(app):
    tei_error(request(app, "POST", "/embed", json={"inputs": "x", "prompt_name": "query"}), 422,
              "validation", "prompt_name 'query'")
    tei_error(request(app, "POST", "/embed", json={"inputs": "x", "dimensions": 33}), 422, "validation",
              "dimensions must be at most 32")
    tei_error(request(app, "POST", "/embed", json={"inputs": "x", "truncate": True, "truncation_direction": "left"}),
              422, "validation", "truncation_direction left")


def test_token_ids_are_refused_naming_langchains_switch(app):
    err = openai_error(request(app, "POST", "/v1/embeddings", json={"input": [[1, 2, 3]] * 20}), 422,
                       "invalid_type", "input[0]")  # 20 items: over the limit, but ids are the fault
    assert "token ids" in err["message"] and "check_embedding_ctx_length=False" in err["message"]
    openai_error(request(app, "POST", "/embeddings", json={"input": [1, 2, 3]}), 422, "invalid_type", "input")
    said = tei_error(request(app, "POST", "/embed", json={"inputs": [[5, 6]]}), 422, "validation",
                     "inputs[0] holds token ids")
    assert "LangChain" not in said


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("route", ["/v1/embeddings", "/embeddings"])
def test_openai_routes_answer_faults_in_openais_schema(app, route, fault):
    texts, _, _, says, status, code, where = FAULTS[fault]
    err = openai_error(request(app, "POST", route, json={"input": texts}), status, code, "input" + where)
    assert says.format(name="input") in err["message"]


@pytest.mark.parametrize("route", ["/v1/embeddings", "/embeddings"])
def test_openai_routes_answer_malformed_bodies_in_openais_schema(app, route):
    bad_json = request(app, "POST", route, content=b"{not json", headers={"content-type": "application/json"})
    openai_error(bad_json, 400, "invalid_json")
    openai_error(request(app, "POST", route, json={"model": "tiny"}), 422, "invalid_value", "input")
    openai_error(request(app, "POST", route, json={"input": "x", "encoding_format": "int8"}), 422,
                 "invalid_value", "encoding_format")
    openai_error(request(app, "POST", route, json={"input": "x", "model": "other"}), 404, "model_not_found", "model")
    openai_error(request(app, "POST", route, json={"input": ["z" * 250] * 80}), 413, "body_too_large")
    openai_error(request(app, "GET", route), 405, "method_not_allowed")


def test_the_api_key_is_asked_for_in_each_familys_schema(tiny_encoder):
    app = create_app(tiny_encoder, ServeConfig("tiny", api_key="s3cret"))
    for route in ("/", "/invocations", "/embed", "/similarity", "/tokenize"):
        tei_error(request(app, "POST", route, json={"inputs": "x"}), 401, "validation", "API key")
    for route in ("/v1/embeddings", "/embeddings"):
        openai_error(request(app, "POST", route, json={"input": "x"}), 401, "invalid_api_key")
    assert request(app, "GET", "/ping").status_code == 200
    assert "text/html" in request(app, "GET", "/").headers["content-type"]
    ok = request(app, "POST", "/", json={"inputs": "x"}, headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and len(ok.json()) == 1


@pytest.mark.parametrize("route, body, check", [
    ("/v1/embeddings", {"input": "x"}, lambda r: openai_error(r, 500, "internal_error")),
    ("/embeddings", {"input": "x"}, lambda r: openai_error(r, 500, "internal_error")),
    ("/embed", {"inputs": "x"}, lambda r: tei_error(r, 424, "backend")),
    ("/", {"inputs": "x"}, lambda r: tei_error(r, 424, "backend")),
    ("/similarity", {"inputs": {"source_sentence": "x", "sentences": ["y"]}}, lambda r: tei_error(r, 424, "backend")),
])
def test_a_failing_model_is_a_backend_error_that_leaks_nothing(route, body, check):
    app = create_app(GateEncoder(fail=True), ServeConfig("gate"))
    r = request(app, "POST", route, json=body)
    check(r)
    assert "secret" not in r.text and "/srv" not in r.text and "internal server error" in r.text


def test_a_model_without_a_tokenizer_is_a_tokenizer_error():
    app = create_app(GateEncoder(), ServeConfig("gate"))
    tei_error(request(app, "POST", "/tokenize", json={"inputs": "x"}), 422, "tokenizer", "has no tokenizer")
    tei_error(request(app, "POST", "/embed", json={"inputs": "x", "truncate": True}), 422, "tokenizer")


@pytest.mark.parametrize("route, field", [("/v1/embeddings", "input"), ("/embed", "inputs"), ("/", "inputs")])
def test_a_full_queue_is_429_with_retry_after_in_each_familys_schema(route, field):
    enc = GateEncoder()
    app = create_app(enc, ServeConfig("gate", max_queue=4))

    async def go():
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            enc.gate.clear()
            running = asyncio.create_task(client.post(route, json={field: ["hold"]}))
            while not enc.running.is_set():
                await asyncio.sleep(0.01)
            queued = asyncio.create_task(client.post(route, json={field: ["a", "b", "c"]}))
            while app.state.batcher.queued < 3:
                await asyncio.sleep(0.01)
            refused = await client.post(route, json={field: ["d", "e"]})
            enc.gate.set()
            return refused, await running, await queued

    refused, running, queued = asyncio.run(go())
    if route == "/v1/embeddings":
        message = openai_error(refused, 429, "server_overloaded")["message"]
    else:
        message = tei_error(refused, 429, "overloaded")
    assert int(refused.headers["retry-after"]) >= 1 and "retry" in message
    assert running.status_code == queued.status_code == 200
