"""A tiny random BERT with a word-level tokenizer, built in a test (no download)."""
from __future__ import annotations


def tiny_bert(words: list[str], max_length: int, hidden: int = 32, seed: int = 0):
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
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_length)
    return BertModel(cfg, add_pooling_layer=False), tok
