"""LASER's encoder-decoder at a configurable size (the paper: 5 x 512 BiLSTM encoder,
one 2048-unit LSTM decoder)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from xlingua.encoders.laser_vocab import EOS, PAD


@dataclass
class LaserConfig:
    vocab_size: int
    target_langs: list[str] = field(default_factory=lambda: ["en", "fr"])
    embed_dim: int = 256
    hidden: int = 256  # per direction; the sentence embedding has 2 * hidden dims
    layers: int = 1
    dec_hidden: int = 512
    lang_dim: int = 32
    dropout: float = 0.1
    proj_dim: int = 0  # a linear map of the pooled state to this size (0 = none): a student meets its teacher's size
    # a linear map of the mean of the input vectors added to the pooled state, which enters
    # through a scalar gate that starts at 0 (ReZero): a student on a static encoder's pieces
    # starts where that encoder's mean puts a sentence, and the BiLSTM learns what it misses
    mean_skip: bool = False

    @property
    def sentence_dim(self) -> int:
        return self.proj_dim or 2 * self.hidden

    def to_dict(self) -> dict:
        return asdict(self)


def max_pool(states: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Max over the valid time steps of (B, T, D) states; padded steps never win."""
    mask = torch.arange(states.shape[1], device=states.device)[None, :] < lengths[:, None]
    return states.masked_fill(~mask[:, :, None], float("-inf")).max(dim=1).values


def mean_pool(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Mean over the valid time steps of (B, T, D) inputs."""
    from xlingua.encoders.pooling import pool

    return pool(x, torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None], "mean")


class BiLSTMEncoder(nn.Module):
    """Tokens -> embedding -> stacked BiLSTM -> max-pool over time (-> linear projection);
    with `mean_skip`, gate * that + a linear map of the mean input vector."""

    def __init__(self, config: LaserConfig):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, config.embed_dim, padding_idx=PAD)
        self.lstm = nn.LSTM(config.embed_dim, config.hidden, num_layers=config.layers, bidirectional=True,
                            batch_first=True, dropout=config.dropout if config.layers > 1 else 0.0)
        self.proj = nn.Linear(2 * config.hidden, config.proj_dim) if config.proj_dim else None
        self.dim = config.sentence_dim
        if config.mean_skip:
            self.skip = nn.Linear(config.embed_dim, self.dim, bias=False)
            self.gate = nn.Parameter(torch.zeros(()))
        else:
            self.skip = self.gate = None

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        states, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=tokens.shape[1])
        pooled = max_pool(states, lengths)
        pooled = self.proj(pooled) if self.proj is not None else pooled
        if self.skip is None:
            return pooled
        return self.gate * pooled + self.skip(mean_pool(x, lengths.to(x.device)))


class Decoder(nn.Module):
    """One LSTM layer, no attention. Its initial state is a linear map of the sentence
    embedding, and every input step is [token embedding; sentence embedding; language embedding]."""

    def __init__(self, config: LaserConfig, sent_dim: int):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, config.embed_dim, padding_idx=PAD)
        self.lang = nn.Embedding(len(config.target_langs), config.lang_dim)
        self.init = nn.Linear(sent_dim, 2 * config.dec_hidden)  # h0 and c0
        self.lstm = nn.LSTM(config.embed_dim + sent_dim + config.lang_dim, config.dec_hidden, batch_first=True)
        self.drop = nn.Dropout(config.dropout)
        self.out = nn.Linear(config.dec_hidden, config.vocab_size)

    def forward(self, sent: torch.Tensor, tgt_in: torch.Tensor, lang: torch.Tensor) -> torch.Tensor:
        b, t = tgt_in.shape
        h0, c0 = torch.tanh(self.init(sent)).chunk(2, dim=-1)
        extra = torch.cat([sent, self.lang(lang)], dim=-1)[:, None, :].expand(b, t, -1)
        x = self.drop(torch.cat([self.embed(tgt_in), extra], dim=-1))
        states, _ = self.lstm(x, (h0[None].contiguous(), c0[None].contiguous()))
        return self.out(self.drop(states))


class LaserModel(nn.Module):
    def __init__(self, config: LaserConfig):
        super().__init__()
        self.config = config
        self.encoder = BiLSTMEncoder(config)
        self.decoder = Decoder(config, self.encoder.dim)

    def forward(self, src, src_len, tgt_in, lang) -> torch.Tensor:
        """Logits (B, T, vocab) for teacher-forced decoding of tgt_in into language ids `lang`."""
        return self.decoder(self.encoder(src, src_len), tgt_in, lang)


class LaserStudent(nn.Module):
    """The encoder alone, trained by distillation (LASER3: no decoder); `encoder` and `config`
    as in LaserModel, so checkpoints and encoder.pt are written the same way."""

    def __init__(self, config: LaserConfig):
        super().__init__()
        self.config = config
        self.encoder = BiLSTMEncoder(config)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.encoder(tokens, lengths)


def pad_batch(ids: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded (B, T) tokens and lengths for encoding; empty inputs become a single EOS."""
    ids = [x if len(x) else [EOS] for x in ids]
    out = torch.full((len(ids), max(map(len, ids))), PAD, dtype=torch.long)
    for r, x in enumerate(ids):
        out[r, :len(x)] = torch.tensor(x)
    return out, torch.tensor([len(x) for x in ids])
