"""A live server on 127.0.0.1 and the clients people use with TEI and OpenAI servers: the
official `openai` client (its base64 default included), `huggingface_hub`'s InferenceClient
(which posts to the server's root), and LangChain's HuggingFaceEndpointEmbeddings and
OpenAIEmbeddings. Each gets `encode`'s vectors; their errors carry the server's message."""
from __future__ import annotations

import huggingface_hub as hub
import langchain_huggingface
import langchain_openai
import numpy as np
import openai
import pytest
from huggingface_hub.errors import HfHubHTTPError

from tests.serve.conftest import LiveServer
from xlingua.serve import ServeConfig

TEXTS = ["the red cat", "a dog runs to the house", "die katze ist klein"]


def cosines(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.fixture(autouse=True)
def hub_may_reach_the_local_server(monkeypatch):
    """Under HF_HUB_OFFLINE=1 (read once, when huggingface_hub is first imported, perhaps by an
    earlier test) its client refuses every request, even to 127.0.0.1."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


@pytest.fixture(scope="module")
def server(tiny_encoder):
    with LiveServer(tiny_encoder, ServeConfig("tiny", api_key="k1", max_items=8)) as live:
        yield live


def test_openai_client_gets_the_encoders_vectors(server, tiny_encoder):
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="k1", max_retries=0)
    want = tiny_encoder.encode(TEXTS)
    default = client.embeddings.create(model="tiny", input=TEXTS)  # asks for base64
    np.testing.assert_allclose([d.embedding for d in default.data], want, atol=1e-6)
    floats = client.embeddings.create(model="tiny", input=TEXTS[0], encoding_format="float")
    np.testing.assert_allclose(floats.data[0].embedding, want[0], atol=1e-6)
    assert default.model == "tiny" and default.usage.total_tokens > 0
    assert [m.id for m in client.models.list()] == ["tiny"]

    wrong = openai.OpenAI(base_url=f"{server.url}/v1", api_key="nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as err:
        wrong.embeddings.create(model="tiny", input="x")
    assert err.value.body["code"] == "invalid_api_key"
    with pytest.raises(openai.BadRequestError) as err:
        client.embeddings.create(model="tiny", input=[])
    assert err.value.status_code == 400 and err.value.body["code"] == "empty_input"


def test_huggingface_hub_client_gets_the_openai_clients_vectors(server, tiny_encoder):
    client = hub.InferenceClient(model=server.url, token="k1")
    want = tiny_encoder.encode(TEXTS)

    one = client.feature_extraction(TEXTS[0])
    assert one.shape == (1, tiny_encoder.dim)
    many = client.feature_extraction(TEXTS)
    assert many.shape == (len(TEXTS), tiny_encoder.dim)
    via_openai = openai.OpenAI(base_url=f"{server.url}/v1", api_key="k1", max_retries=0)
    theirs = [d.embedding for d in via_openai.embeddings.create(model="tiny", input=TEXTS).data]
    assert cosines(many, theirs).min() >= 0.9999
    assert cosines(many, want).min() >= 0.9999 and cosines(one, want[:1]).min() >= 0.9999

    sims = client.sentence_similarity(TEXTS[0], other_sentences=TEXTS[1:])
    np.testing.assert_allclose(sims, cosines(want[1:], want[:1].repeat(2, 0)), atol=1e-5)


def test_huggingface_hub_errors_carry_the_servers_message(server):
    client = hub.InferenceClient(model=server.url, token="k1")
    with pytest.raises(HfHubHTTPError) as err:
        client.feature_extraction(["ok"] * 9)
    assert err.value.response.status_code == 422
    assert err.value.server_message == "inputs has 9 items, over the limit of 8 per request"
    with pytest.raises(HfHubHTTPError) as err:
        hub.InferenceClient(model=server.url, token="nope").feature_extraction("x")
    assert err.value.response.status_code == 401 and "API key" in err.value.server_message


def test_sentence_similarity_ranks_a_translation_above_an_unrelated_sentence():
    """A real model (the packaged static-small, which loads in seconds) through the client."""
    from xlingua import load_encoder

    enc = load_encoder("static-small")
    source = "The cat sleeps on the sofa."
    others = ["Stock prices fell sharply today.", "Die Katze schläft auf dem Sofa.",
              "Le chat dort sur le canapé."]
    with LiveServer(enc, ServeConfig("static-small")) as live:
        sims = hub.InferenceClient(model=live.url).sentence_similarity(source, other_sentences=others)
    assert sims[1] > sims[0] and sims[2] > sims[0]
    vecs = enc.encode([source, *others])
    np.testing.assert_allclose(sims, cosines(vecs[1:], vecs[:1].repeat(3, 0)), atol=1e-5)


def test_langchain_huggingface_embeddings(server, tiny_encoder):
    # langchain-huggingface refuses a URL as `model`: the URL goes to the client's call instead
    emb = langchain_huggingface.HuggingFaceEndpointEmbeddings(model="tiny", model_kwargs={"model": server.url},
                                           huggingfacehub_api_token="k1")
    want = tiny_encoder.encode(TEXTS)
    assert cosines(emb.embed_documents(TEXTS), want).min() >= 0.9999
    assert cosines([emb.embed_query(TEXTS[1])], want[1:2]).min() >= 0.9999


def test_langchain_openai_embeddings_send_text_only_when_told(server, tiny_encoder, monkeypatch):
    emb = langchain_openai.OpenAIEmbeddings(model="tiny", base_url=f"{server.url}/v1", api_key="k1",
                              check_embedding_ctx_length=False, chunk_size=8, max_retries=0)
    texts = [f"{t} {i}" for i in range(4) for t in TEXTS]  # 12 texts: two requests of at most 8
    assert cosines(emb.embed_documents(texts), tiny_encoder.encode(texts)).min() >= 0.9999

    # By default it sends tiktoken ids. tiktoken's vocabulary is a download; a byte-level one
    # stands in for it, so the real code path sends real lists of ints.
    import tiktoken

    bytes_only = tiktoken.Encoding("bytes", pat_str=r"\S+|\s+", special_tokens={},
                                   mergeable_ranks={bytes([i]): i for i in range(256)})
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: bytes_only)
    default = langchain_openai.OpenAIEmbeddings(model="tiny", base_url=f"{server.url}/v1", api_key="k1", max_retries=0)
    with pytest.raises(openai.UnprocessableEntityError) as err:
        default.embed_documents(TEXTS)
    assert err.value.body["code"] == "invalid_type"
    assert "check_embedding_ctx_length=False" in err.value.body["message"]
