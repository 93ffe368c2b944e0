"""Every xlingua command as a small, fast job for the fault suite.

A `Job` writes clean inputs for one command into a workspace, gives its command line, names
the input file a bad-input fault goes into (`target`) and reads back its output as bytes
(`result`), so a table of faults can run against every command alike. To put a new command
under the suite, add a Job subclass here and list it in JOBS.
"""
from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

WORDS = {"en": "the a cat dog house car red blue green small big is on in and runs eats".split(),
         "de": "der die katze hund haus auto rot blau grün klein groß ist auf in und läuft isst".split(),
         "fr": "le la chat chien maison voiture rouge bleu vert petit grand est sur dans et court mange".split()}


def sentences(lang: str, n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        idx = [rng.randrange(len(WORDS["en"])) for _ in range(rng.randint(2, 6))]
        out.append(" ".join(WORDS[lang][i] for i in idx))
    return out


def parallel(lang: str, n: int, seed: int = 0) -> list[tuple[str, str]]:
    return list(zip(sentences(lang, n, seed), sentences("en", n, seed)))


def write_text(path: Path, lines, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def read_bytes(path: Path) -> bytes:
    """A file's content, gunzipped when it is gzip."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def put_bytes(path: Path, data: bytes, like: Path | None = None) -> None:
    """Write `data`, gzipped if `like` (default: the old file) was gzip."""
    like = like or path
    gz = like.is_file() and like.read_bytes()[:2] == b"\x1f\x8b"
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)


class Job:
    name = "job"
    #: faults that do not apply to the command (no such input or option)
    skip: frozenset = frozenset()
    #: env the command needs (e.g. where the corpora are)
    env: dict = {}

    def __init__(self, ws: Path, model: Path):
        self.ws, self.model = ws, model
        self.out = ws / "out"

    def setup(self) -> None:
        raise NotImplementedError

    def args(self) -> list[str]:
        raise NotImplementedError

    @property
    def target(self) -> Path:
        """The input file text faults are put in."""
        raise NotImplementedError

    @property
    def output(self) -> Path:
        """The file whose presence means a finished run."""
        raise NotImplementedError

    def result(self) -> bytes:
        return self.output.read_bytes()

    def row(self, text: bytes) -> bytes:
        """`text` as a well-formed line of the target (its other columns added)."""
        return text

    @property
    def missing_names(self) -> Path:
        """What the error for a missing target names."""
        return self.target

    def lang_args(self, code: str) -> list[str]:
        raise NotImplementedError

    def model_args(self, spec: str) -> list[str]:
        raise NotImplementedError

    def changed_args(self) -> list[str]:
        """The command line with a setting changed, for a rerun over a finished/killed run."""
        raise NotImplementedError


class Embed(Job):
    name = "embed"
    skip = frozenset({"mismatched"})

    def setup(self):
        write_text(self.ws / "in.txt", sentences("en", 12))

    def args(self, model=None, lang="en", shard=None):
        extra = ["--shard-size", str(shard)] if shard else []
        out = self.out / "emb" if shard else self.output
        return ["embed", self.target, "-o", out, "-m", model or self.model, "--lang", lang, *extra]

    target = property(lambda self: self.ws / "in.txt")
    output = property(lambda self: self.out / "emb.npy")

    def lang_args(self, code):
        return self.args(lang=code)

    def model_args(self, spec):
        return self.args(model=spec)

    def changed_args(self):
        return [*self.args(), "--dtype", "float16"]


class Mine(Job):
    name = "mine"
    skip = frozenset({"mismatched"})

    def setup(self):
        write_text(self.ws / "s.txt", sentences("en", 12, seed=1))
        write_text(self.ws / "t.txt", sentences("en", 10, seed=2) + sentences("en", 4, seed=1))

    def args(self, model=None, lang="en", k="2"):
        return ["mine", self.target, self.ws / "t.txt", "-o", self.output, "--src-lang", lang, "--tgt-lang", "en",
                "-m", model or self.model, "--workdir", self.ws / "wd", "--k", k, "--shard-size", "5"]

    target = property(lambda self: self.ws / "s.txt")
    output = property(lambda self: self.out / "pairs.tsv.gz")

    def lang_args(self, code):
        return self.args(lang=code)

    def model_args(self, spec):
        return self.args(model=spec)

    def changed_args(self):
        return self.args(k="3")


class MineTwoStage(Mine):
    """mine --rescore: the tiny model as both stages (every list pair a candidate, every pair
    written), so the plan, the re-embedded chunks and the scored pairs are all on the way."""
    name = "mine-rescore"

    def args(self, model=None, lang="en", k="2"):
        return super().args(model, lang, k) + ["--rescore", model or self.model, "--candidate-threshold", "0",
                                               "--threshold", "0", "--no-lid"]


class Eval(Job):
    name = "eval"
    skip = frozenset({"lang", "changed"})

    def setup(self):
        rows = [f"{a}\t{b}\t{(i % 5) + 0.5}" for i, (a, b) in enumerate(parallel("de", 10, seed=3))]
        write_text(self.target, rows)

    def args(self, model=None):
        return ["eval", "sts:sts17_extended", "-m", model or self.model, "--data-dir", self.ws / "bench",
                "-o", self.output, "--no-cache"]

    target = property(lambda self: self.ws / "bench" / "sts17_extended" / "STS.en-de.txt")
    output = property(lambda self: self.out / "r.json")

    def result(self) -> bytes:
        r = json.loads(self.output.read_text())
        for key in ("date", "command", "machine"):
            r.pop(key)
        for task in r["tasks"].values():
            task.pop("seconds")
        return json.dumps(r, sort_keys=True).replace(str(self.ws), "WS").encode()

    def row(self, text):
        return text + b"\tthe cat\t2.5"

    missing_names = property(lambda self: self.target.parent)  # no STS.xx-yy.txt left there

    def model_args(self, spec):
        return self.args(model=spec)


class Train(Job):
    name = "train"
    skip = frozenset({"lang"})

    def setup(self, lr=1e-3, model=None):
        write_text(self.ws / "pairs.tsv", [f"{a}\t{b}" for a, b in parallel("de", 12, seed=4)])
        (self.ws / "r.yaml").write_text(json.dumps({
            "model": str(model or self.model), "output_dir": str(self.out / "run"), "max_steps": 4,
            "batch_size": 4, "max_seq_length": 16, "lr": lr, "warmup_steps": 1, "log_every": 1, "seed": 1,
            "checkpoint_every": 1, "tasks": [{"name": "tr", "objective": "translation_ranking",
                                              "data": {"type": "tsv", "path": str(self.target)}}]}))

    def args(self, resume=True):
        return ["train", self.ws / "r.yaml", *(["--resume"] if resume else [])]

    target = property(lambda self: self.ws / "pairs.tsv")
    output = property(lambda self: self.out / "run" / "final" / "model.safetensors")

    def row(self, text):
        return text + b"\tthe cat"

    def model_args(self, spec):
        self.setup(model=spec)
        return self.args()

    def changed_args(self):
        self.setup(lr=5e-4)
        return self.args()


class TrainStudent(Train):
    """The student recipe (configs/train_mini.yaml) made tiny: layer 1 of the 2-layer model,
    word embeddings frozen, LASER3-style distillation to the full model with translation ranking."""
    name = "train-student"

    def setup(self, lr=1e-3, model=None):
        write_text(self.ws / "pairs.tsv", [f"{a}\t{b}" for a, b in parallel("de", 12, seed=4)])
        model = str(model or self.model)
        (self.ws / "r.yaml").write_text(json.dumps({
            "model": model, "layers": [1], "freeze": ["word_embeddings"], "output_dir": str(self.out / "run"),
            "max_steps": 4, "batch_size": 4, "max_seq_length": 16, "lr": lr, "warmup_steps": 1, "log_every": 1,
            "seed": 1, "checkpoint_every": 1,
            "tasks": [{"name": "kd", "objective": "laser3", "data": {"type": "tsv", "path": str(self.target)},
                       "options": {"teacher": model, "teacher_cache": str(self.ws / "teacher_cache")}}]}))


class _L10n(Job):
    """Commands that read the l10n corpus under $XLINGUA_SHARED/corpora/l10n."""

    def setup(self):
        for lang, seed in (("de", 5), ("fr", 6)):
            write_text(self.ws / "shared" / "corpora" / "l10n" / f"{lang}-en.train.tsv.gz",
                       [f"{a}\t{b}" for a, b in parallel(lang, 60, seed)], gz=True)

    @property
    def env(self):
        return {"XLINGUA_SHARED": str(self.ws / "shared")}

    target = property(lambda self: self.ws / "shared" / "corpora" / "l10n" / "de-en.train.tsv.gz")

    def row(self, text):
        return text + b"\tthe cat"


class Laser(_L10n):
    name = "laser"
    skip = frozenset({"model"})

    def args(self, langs="de,fr", hidden="16"):
        return ["laser", "train", "-o", self.out / "laser", "--langs", langs, "--second-target", "fr",
                "--no-multi30k", "--l10n-pairs", "0", "--vocab-size", "40", "--layers", "1", "--hidden", hidden,
                "--embed-dim", "16", "--dec-hidden", "24", "--max-tokens", "200", "--max-steps", "6",
                "--checkpoint-every", "2"]

    output = property(lambda self: self.out / "laser" / "encoder.pt")

    def lang_args(self, code):
        return self.args(langs=f"de,{code}")

    def changed_args(self):
        return self.args(hidden="24")


class Meaning(_L10n):
    name = "meaning"

    def args(self, base=None, langs="de,fr", batch_size="16"):
        return ["meaning", "train", "-o", self.out / "meaning", "--base", base or self.model, "--langs", langs,
                "--pairs", "40", "--max-epochs", "2", "--batch-size", batch_size, "--select-on", "val-loss", "--dev", ""]

    def changed_args(self):
        return self.args(batch_size="8")

    output = property(lambda self: self.out / "meaning" / "model.pt")

    def lang_args(self, code):
        return self.args(langs=f"de,{code}")

    def model_args(self, spec):
        return self.args(base=spec)


class Score(Job):
    """`score` of one src<TAB>tgt file (the two-file form's line counts: tests/test_score.py)."""
    name = "score"
    skip = frozenset({"changed"})  # no cache or resume: a rerun is a new run

    def setup(self):
        write_text(self.target, [f"{a}\t{b}" for a, b in parallel("de", 12, seed=7)])

    def args(self, model=None, lang="de"):
        return ["score", self.target, "-o", self.output, "-m", model or self.model, "--src-lang", lang,
                "--tgt-lang", "en", "--margin", "--k", "2"]

    target = property(lambda self: self.ws / "pairs.tsv")
    output = property(lambda self: self.out / "scores.tsv")

    def row(self, text):
        return text + b"\tthe cat"

    def lang_args(self, code):
        return self.args(lang=code)

    def model_args(self, spec):
        return self.args(model=spec)


class Align(Job):
    name = "align"
    skip = frozenset({"changed", "mismatched"})  # a new run each time; documents need not be line-aligned

    def setup(self):
        write_text(self.target, [s + "." for s in sentences("de", 8, seed=8)])
        write_text(self.ws / "b.txt", [s + "." for s in sentences("en", 8, seed=8)])

    def args(self, model=None, lang="de"):
        return ["align", self.target, self.ws / "b.txt", "-o", self.output, "-m", model or self.model,
                "--lang-a", lang, "--lang-b", "en"]

    target = property(lambda self: self.ws / "a.txt")
    output = property(lambda self: self.out / "aligned.tsv")

    def lang_args(self, code):
        return self.args(lang=code)

    def model_args(self, spec):
        return self.args(model=spec)


class Prepare(Job):
    name = "prepare"
    skip = frozenset({"model", "mismatched"})  # no model; one input

    def setup(self):
        docs = sentences("en", 24, seed=9)
        write_text(self.target, [f"{a}. {b}. {c}." for a, b, c in zip(docs[0::3], docs[1::3], docs[2::3])])

    def args(self, lang="en", min_chars="3"):
        return ["prepare", self.target, "-o", self.out / "prep", "--lang", lang, "--no-lid",
                "--min-chars", min_chars, "--workdir", self.ws / "wd", "--shard-docs", "3"]

    target = property(lambda self: self.ws / "docs.txt")
    output = property(lambda self: self.out / "prep" / "en.txt")

    def lang_args(self, code):
        return self.args(lang=code)

    def changed_args(self):
        return self.args(min_chars="12")


JOBS = [Embed, Mine, Eval, Train, Laser, Meaning, Score, Align, Prepare]
