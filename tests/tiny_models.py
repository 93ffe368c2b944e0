"""Tiny random BERTs with a word-level, WordPiece or e5 (unigram) tokenizer, built in a test (no download)."""
from __future__ import annotations


def tiny_bert(words: list[str], max_length: int, hidden: int = 32, seed: int = 0, layers: int = 2):
    """(BertModel without pooler, PreTrainedTokenizerFast): [CLS] words [SEP], one id a word."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *words])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]",
                                  cls_token="[CLS]", sep_token="[SEP]", model_max_length=max_length)
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_length)
    return BertModel(cfg, add_pooling_layer=False), tok


def make_tiny_e5_dir(path, pieces: list[str], spare_rows: int = 0, hidden: int = 32, seed: int = 0,
                     meta: dict | None = None):
    """A tiny random BERT with an e5 (unigram) tokenizer over `pieces`, saved as xlingua saves
    e5-small (with `meta` in its xlingua.json); `spare_rows` embedding rows past the last piece,
    as e5-small has."""
    import torch
    from transformers import BertConfig, BertModel

    from xlingua.encoders.saving import save_encoder
    from xlingua.encoders.tokenizer import E5Tokenizer, build_e5_tokenizer

    vocab = ["<s>", "<pad>", "</s>", "<unk>", *pieces]
    scores = [0.0] * 4 + [-1.0 - 0.01 * i for i in range(len(pieces))]
    table = {1: ""}  # e5's map deletes U+0001, which E5Tokenizer relies on
    tok = E5Tokenizer(build_e5_tokenizer(vocab, scores, 3, 0, 2, 1, table).to_str(), table, "")
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(vocab) + spare_rows, hidden_size=hidden, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128, pad_token_id=1)
    save_encoder(BertModel(cfg, add_pooling_layer=False), tok, path, pooling="mean", normalize=True,
                 max_seq_length=128, meta=meta)
    return path
