"""The sentence-transformers peers of `xlingua bench embed`, driven from xlingua's side: a process
under the peers' Python runs st_peer.py (or another script speaking its protocol), loads a peer
and embeds each round's texts; the bench times the peer by what that process measured (its own
wall and CPU seconds), so that passing texts and vectors between the two costs nothing on the
peer's account. A peer that cannot load is skipped with the reason it gave.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).with_name("st_peer.py")
#: what st_peer.py runs, in the order the bench lists them
PEERS = ("st:torch", "st:onnx", "st:openvino", "st:onnx-int8", "st:openvino-int8")


class PeerError(RuntimeError):
    """A peer that could not load or run; its message is the reason, one line."""


class PeerProcess:
    """A peer's process: `python script`, its stderr appended to work/peers.log."""

    def __init__(self, python: str, work: Path, script: Path = SCRIPT):
        self.work = Path(work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.log = self.work / "peers.log"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "PYTHONUNBUFFERED": "1"}
        try:
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen([python, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=log, env=env, text=True, encoding="utf-8")
        except OSError as exc:
            raise PeerError(f"cannot start {python}: {exc.strerror or exc}") from None
        self.versions = self.call(cmd="hello")["versions"]

    def call(self, **msg) -> dict:
        try:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            raise PeerError(f"the peer's process ended (exit {self.proc.wait()}); its output is in {self.log}")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise PeerError(reply.get("reason") or "failed without a reason")
        return reply

    def load(self, peer: str, model_dir: Path, calibration: list[str] | None = None) -> "PeerEncoder":
        texts = None
        if calibration:
            texts = self.work / "calibration.json"
            texts.write_text(json.dumps(calibration, ensure_ascii=False), encoding="utf-8")
        reply = self.call(cmd="load", peer=peer, model=str(model_dir), work=str(self.work),
                          calibration=str(texts) if texts else None)
        return PeerEncoder(self, peer, reply["name"], reply["load_seconds"])

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class PeerEncoder:
    """One peer, with the `encode` of an xlingua encoder; `last_timing` is (wall, CPU) seconds of
    the last call as the peers' process measured them."""

    def __init__(self, process: PeerProcess, peer: str, name: str, load_seconds: float):
        self.process, self.peer, self.name, self.load_seconds = process, peer, name, load_seconds
        self.last_timing: tuple[float, float] | None = None

    def encode(self, texts) -> np.ndarray:
        out = self.process.work / f"{self.peer.replace(':', '-')}.npy"
        reply = self.process.call(cmd="encode", peer=self.peer, texts=list(texts), out=str(out))
        self.last_timing = (reply["seconds"], reply["cpu_seconds"])
        vectors = np.load(out)
        out.unlink()
        return vectors
