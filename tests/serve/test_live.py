"""A live server on 127.0.0.1 and the official `openai` client (its base64 default included):
vectors equal `encode` on the same texts."""
from __future__ import annotations

import numpy as np
import pytest

from tests.serve.conftest import LiveServer
from xlingua.serve import ServeConfig

TEXTS = ["the red cat", "a dog runs to the house", "die katze ist klein"]


def test_openai_client_gets_the_encoders_vectors(tiny_encoder):
    openai = pytest.importorskip("openai")
    with LiveServer(tiny_encoder, ServeConfig("tiny", api_key="k1")) as server:
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
