"""New tokenizer pieces on a tiny e5-style model: pieces the tokenizer lacks are appended, every
existing piece keeps its id and row, a new row is the mean of its old parts' rows (a character
no piece holds a fresh row of its own, not <unk>'s, shared by every piece it is in), text with the
new pieces splits into them, and the saved model reads the same everywhere."""
import json

import numpy as np
import pytest
import torch

from tests.tiny_models import make_tiny_e5_dir
from tests.training.conftest import make_tiny_model_dir
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.new_pieces import add_pieces, learn_pieces, piece_splitter, spared, text_scripts, written_in

PIECES = ["▁", "a", "b", "c", "▁a", "▁ab", "ab", "bc"]  # scores -1.00, -1.01, ... in this order


def ids_of(encoder):
    return {p: i for i, (p, _) in enumerate(json.loads(encoder.tokenizer.json)["model"]["vocab"])}


def test_added_pieces_keep_old_ids_and_rows_and_start_at_their_parts_mean(tmp_path):
    enc = TransformerEncoder(make_tiny_e5_dir(tmp_path / "tiny", PIECES, spare_rows=2))
    old_ids = ids_of(enc)
    old_rows = enc.model.get_input_embeddings().weight.detach().clone()
    before = enc.tokenizer.content_ids(["ab c", "abc ⵣa"])
    # ⵣ is in no piece: the split isolates it as one <unk>, then "a" after it
    assert before[1] == [old_ids["▁ab"], old_ids["c"], old_ids["▁"], 3, old_ids["a"]]
    # "▁abc" is "▁ab" + "c" for the old tokenizer (-1.05 - 1.03 beats "▁a" + "bc", -1.04 - 1.07)
    split = piece_splitter(enc.tokenizer)
    assert split("▁abc") == [old_ids["▁ab"], old_ids["c"]]
    assert split("ⵣa") == ["ⵣ", old_ids["a"]]

    new = add_pieces(enc, [("▁abc", -0.5), ("▁a", -0.1), ("ⵣa", -30.0), ("▁ⵣ", -2.0)])

    assert new == [12, 13, 14]  # "▁a" exists and is skipped; 12 pieces before
    ids = ids_of(enc)
    assert all(ids[p] == i for p, i in old_ids.items())
    rows = enc.model.get_input_embeddings().weight.detach()
    assert rows.shape[0] == 15 and enc.model.config.vocab_size == 15  # 2 spare rows reused, one more added
    assert torch.equal(rows[:12], old_rows[:12])
    torch.testing.assert_close(rows[12], (old_rows[old_ids["▁ab"]] + old_rows[old_ids["c"]]) / 2)
    z = 2 * rows[13] - old_rows[old_ids["a"]]  # ⵣ's own row: the same in both pieces holding it
    torch.testing.assert_close(rows[14], (old_rows[old_ids["▁"]] + z) / 2)
    assert not torch.allclose(z, old_rows[3], atol=1e-3)  # not <unk>'s row
    from xlingua.encoders.new_pieces import unknown_char_rows

    torch.testing.assert_close(z, unknown_char_rows(old_rows[:12], ["ⵣ"])["ⵣ"])
    drawn = unknown_char_rows(old_rows[:12].repeat(50, 1), [chr(0x2D30 + i) for i in range(400)])
    spread = torch.stack(list(drawn.values())).std(0) / old_rows[:12].std(0)
    assert 0.85 < spread.mean().item() < 1.15  # rows at the size of the existing ones
    scores = dict(map(tuple, json.loads(enc.tokenizer.json)["model"]["vocab"]))
    assert scores["ⵣa"] == pytest.approx(-1.07)  # raised to the lowest score: <unk>'s score stays
    assert scores["▁abc"] == -0.5

    after = enc.tokenizer.content_ids(["ab c", "abc ⵣa"])
    assert after[0] == before[0]  # text without the new pieces splits as before
    assert after[1] == [ids["▁abc"], ids["▁"], ids["ⵣa"]]  # ⵣ is no longer isolated

    enc.save(tmp_path / "extended")
    again = TransformerEncoder(tmp_path / "extended")
    assert again.tokenizer.content_ids(["ab c", "abc ⵣa"]) == after
    texts = ["abc ⵣa", "ab c"]
    np.testing.assert_allclose(again.encode(texts), enc.encode(texts), atol=1e-6)
    from sentence_transformers import SentenceTransformer

    np.testing.assert_allclose(SentenceTransformer(str(tmp_path / "extended"), device="cpu").encode(texts),
                               enc.encode(texts), atol=1e-5)


def test_no_missing_piece_changes_nothing_and_other_tokenizers_are_refused(tmp_path):
    enc = TransformerEncoder(make_tiny_e5_dir(tmp_path / "tiny", PIECES))
    assert add_pieces(enc, [("▁ab", -1.0), ("c", -2.0)]) == []
    with pytest.raises(ValueError, match="e5's unigram tokenizer; this model has a hf tokenizer"):
        add_pieces(TransformerEncoder(make_tiny_model_dir(tmp_path / "wordpiece")), [("x", -1.0)])


def test_learned_pieces_cover_every_character_as_the_tokenizer_sees_text():
    texts = ["ⵜⴰⵎⴰⵣⵉⵖⵜ ⵜⴳⴰ  ⵜⵓⵜⵍⴰⵢⵜ", "ⴰⵎⴰⵣⵉⵖ ⵉⴳⴰ ⴰⵎⴷⴷⴰⴽⴽⵍ"] * 20
    pieces = learn_pieces(texts, 40, {1: ""})
    assert pieces == learn_pieces(texts, 40, {1: ""})  # the same pieces every time
    assert len(pieces) <= 40 and all(isinstance(s, float) for _, s in pieces)
    names = {p for p, _ in pieces}
    assert set("".join(texts).replace(" ", "")) <= {c for p in names for c in p}
    assert not any(" " in p for p in names) and any(p.startswith("▁") for p in names)


def test_only_pieces_in_the_texts_own_scripts_are_kept():
    texts = ["ⵍⵉⵍⵢⴰⵏ ⴷⵢⴰⵏⴰ ⴳⵉⵛ (14 ⴽⵟⵓⴱⵕ, 1893) Basque “ⵜⴰⵎⴰⵣⵉⵖⵜ”"] + ["ⵍⵉⵍⵢⴰⵏ ⴷⵢⴰⵏⴰ ⴳⵉⵛ ⵜⴰⵎⴰⵣⵉⵖⵜ"] * 5 \
        + ["لِلِيَنْ دِيَنَ"] * 2
    assert text_scripts(texts) == {"Tfng", "Arab"}  # Latin is under 5 % of the letters; digits do not count
    pieces = [("▁ⵜⴰ", -1.0), ("Basque", -1.0), ("▁1893", -1.0), ("“ⵜ", -1.0), ("ⵉⵛ", -2.0), ("▁لِ", -3.0), ("▁", -4.0)]
    assert written_in(pieces, {"Tfng", "Arab"}) == [("▁ⵜⴰ", -1.0), ("ⵉⵛ", -2.0), ("▁لِ", -3.0)]  # kasra: inherited
    assert written_in(pieces, {"Latn"}) == [("Basque", -1.0)]


def test_spared_drops_the_pieces_a_known_text_would_use_round_by_round_until_it_splits_as_before(tmp_path):
    enc = TransformerEncoder(make_tiny_e5_dir(tmp_path / "tiny", PIECES, spare_rows=2))
    known = ["abca", "ab c"]
    before = enc.tokenizer.content_ids(known)
    pieces = [("▁abca", -0.1), ("▁abc", -0.5), ("▁cab", -0.3), ("ⵣa", -2.0), ("▁a", -0.1)]
    # round 1: "▁abca" takes "abca"; without it, round 2: "▁abc" + "a" (-1.51) beats the old
    # "▁ab" + "c" + "a" (-3.09); then nothing new fits the known text. "▁a" is not new.
    assert spared(enc.tokenizer, pieces, known) == [("▁cab", -0.3), ("ⵣa", -2.0)]
    assert spared(enc.tokenizer, pieces, []) == pieces[:4]
    # a character the tokenizer splits off alone in a known text keeps every piece holding it out
    assert spared(enc.tokenizer, pieces, ["ⵣb"]) == [("▁abca", -0.1), ("▁abc", -0.5), ("▁cab", -0.3)]
    add_pieces(enc, spared(enc.tokenizer, pieces, known))
    assert enc.tokenizer.content_ids(known) == before
    assert enc.tokenizer.content_ids(["cab"]) == [[ids_of(enc)["▁cab"]]]


def test_resplit_finds_the_texts_the_new_pieces_split_differently_and_counts_the_pieces(tmp_path):
    from xlingua.encoders.new_pieces import resplit

    enc = TransformerEncoder(make_tiny_e5_dir(tmp_path / "tiny", PIECES, spare_rows=2))
    old = enc.tokenizer
    add_pieces(enc, [("▁cab", -0.3), ("▁abc", -0.5)])
    texts = ["ab c", "cab cab", "bc", "abc ab"]
    changed, used = resplit(old, enc.tokenizer, texts)
    assert changed == [1, 3]  # "ab c" and "bc" hold neither new piece
    assert used == {"▁cab": 2, "▁abc": 1}
    with pytest.raises(ValueError, match="not the first with pieces appended"):
        resplit(enc.tokenizer, old, texts)
