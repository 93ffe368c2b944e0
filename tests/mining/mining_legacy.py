"""The runs behind tests/mining/legacy/workdirs.tar.gz: work directories of `mine` written by the
pipeline xlingua had before its steps shared one contract (commit 2669b59), with the pairs each
run wrote. Every step type is in one of them: prepare's two steps, shard, embed, concat (two
encoders), import (a store `xlingua embed` wrote), an IVF index and its recall, score, rescore.
Everything is deterministic, so a test can rebuild the inputs and rerun the same calls.

  python tests/mining/mining_legacy.py OUT_DIR   # rebuild the archive's content (old code only)"""
from __future__ import annotations

import sys
from pathlib import Path

from mining_toy import toy_corpus, write_lines

from xlingua.mining import MineConfig, mine
from xlingua.mining.toy import CharNgramEncoder

DE = ["Der Bürgermeister eröffnete am Montag die neue Brücke über den Fluss.",
      "Viele Menschen aus der Stadt kamen zu der kleinen Feier am Ufer.",
      "Die Bauarbeiten hatten fast drei Jahre gedauert und viel Geld gekostet.",
      "Am Abend spielte eine Blaskapelle bekannte Lieder aus der Region."]
BOILER = "Home | Impressum | Kontakt | Datenschutz | © 2024 | AGB | Login"


def write_inputs(root: Path) -> dict:
    """The corpora of the three runs (file names matter to prepare's ids, not to any key)."""
    src, tgt, _ = toy_corpus()
    docs_src, docs_tgt = root / "docs_src.txt", root / "docs_tgt.txt"
    docs_src.write_text(f"{DE[0]} {DE[1]}\n{BOILER}\n{DE[2]}\n", encoding="utf-8")
    edit = [s.replace("die", "dir", 1) for s in DE]
    docs_tgt.write_text(f"{edit[2]} {BOILER}\n{edit[1]} {edit[0]}\n{edit[3]}\n", encoding="utf-8")
    many = [f"{s} {a}" for s in src for a in ("today", "again", "once more")]
    return {"src": write_lines(root / "src.txt", src), "tgt": write_lines(root / "tgt.txt", tgt),
            "docs_src": docs_src, "docs_tgt": docs_tgt,
            "many_src": write_lines(root / "many_src.txt", many),
            "many_tgt": write_lines(root / "many_tgt.txt", [m + "!" for m in many[::-1]])}


def runs(inputs: dict, root: Path, store: Path | None = None) -> dict:
    """The three calls; `store` is the embedding store of run C's source side (kept in the
    archive, since its files' fingerprints are part of the import step's key)."""
    a = dict(src=inputs["docs_src"], tgt=inputs["docs_tgt"], output=root / "a.tsv.gz",
             config=MineConfig("de", "de", mode="intersect"), workdir=root / "wd_a",
             encoder=CharNgramEncoder(dim=256), prepare_format="line")
    b = dict(src=inputs["many_src"], tgt=inputs["many_tgt"], output=root / "b.tsv.gz",
             config=MineConfig("en", "en", shard_size=10, index="IVF4,Flat", nprobe=2, keep=0.5),
             workdir=root / "wd_b", encoder=[CharNgramEncoder(dim=64), CharNgramEncoder(dim=32, n=2)],
             rescore_encoder=CharNgramEncoder(dim=128))
    c = dict(src=inputs["src"], tgt=inputs["tgt"], output=root / "c.tsv.gz",
             config=MineConfig("en", "en", shard_size=5, src_embeddings=str(store or root / "store"),
                               batch_size=3),
             workdir=root / "wd_c", encoder=CharNgramEncoder(dim=64))
    return {"a": a, "b": b, "c": c}


def run(call: dict) -> dict:
    call = dict(call)
    return mine(call.pop("src"), call.pop("tgt"), call.pop("output"), call.pop("config"),
                show_progress=False, **call)


def write_store(path: Path, root: Path) -> None:
    from xlingua.embed import EmbedFilesConfig, embed_files

    embed_files(CharNgramEncoder(dim=64), EmbedFilesConfig([str(path)], str(root / "store"), shard_size=4,
                                                           show_progress=False))


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True)
    inputs = write_inputs(out)
    write_store(inputs["src"], out)
    for call in runs(inputs, out).values():
        run(call)
