"""Load and fault benchmark of `xlingua serve`, on 127.0.0.1 only, bounded in count and time.

1. In-process `encode` throughput of the model on the benchmark's sentences (the ceiling).
2. Load: `--clients` concurrent clients for `--seconds`, requests of mixed sizes (1-32 texts),
   with oversize (413) and malformed (400 / 422) requests mixed in and clients that hang up
   mid-request. Throughput (texts/s answered), p50 / p99 latency, responses by code; every
   answer is checked: a 200 has one vector per text, an error is OpenAI-schema JSON.
3. Fault: the same load while the server is killed with -9 and restarted; requests cut by the
   kill and refused while it is down are counted, and the time until it answers again.
4. Baselines on the same model directory under the same load (valid requests only):
   infinity-emb (`infinity_emb v2`) when it is installed and starts offline, else its exact
   error is recorded; sentence-transformers behind a minimal FastAPI endpoint.

  nice -n 19 .venv/bin/python benchmarks/serve_load.py --model bundled:torch --clients 8 --seconds 30 \
      --infinity-exe .venv-infinity/bin/infinity_emb

infinity-emb's pins (numpy<2, sentence-transformers<4, ...) need a virtual environment of its
own: `python3.11 -m venv .venv-infinity && .venv-infinity/bin/pip install torch==2.13.0
'infinity-emb[server,torch]==0.0.78'` (docs/serving.md).

Sentences: a fixed-seed sample of the l10n dev files (as `xlingua bench embed`), or --sentences FILE.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np

SIZES = (1, 2, 4, 8, 16, 32)
MIX = {"valid": 0.85, "oversize": 0.04, "malformed": 0.04, "hangup": 0.07}


# ---- servers --------------------------------------------------------------------------------
class Server:
    def __init__(self, name: str, cmd: list[str], port: int, path: str, model_name: str | None, env=None):
        self.name, self.cmd, self.port, self.path, self.model_name = name, cmd, port, path, model_name
        self.url = f"http://127.0.0.1:{port}"
        self.env = env
        self.proc = None
        self.log = None

    def start(self, timeout: float = 600) -> float:
        t0 = time.perf_counter()
        self.log = open(f"{os.environ.get('TMPDIR', '/tmp')}/serve_load_{self.name}_{self.port}.log", "ab")
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT, env=self.env,
                                     start_new_session=True)
        import httpx

        while time.perf_counter() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}: {self.tail()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return time.perf_counter() - t0
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"{self.name} did not answer /health within {timeout} s: {self.tail()}")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.log:
            self.log.close()

    def tail(self) -> str:
        try:
            return Path(self.log.name).read_bytes()[-600:].decode("utf-8", "replace").strip()
        except OSError:
            return ""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def xlingua_server(model: str, max_items: int) -> Server:
    port = free_port()
    cmd = [sys.executable, "-m", "xlingua.cli", "serve", "--model", model, "--host", "127.0.0.1",
           "--port", str(port), "--max-items", str(max_items), "--served-model-name", "m"]
    return Server("xlingua", cmd, port, "/v1/embeddings", "m")


def st_server(model_dir: str) -> Server:
    port = free_port()
    cmd = [sys.executable, os.path.abspath(__file__), "--st-server", model_dir, "--port", str(port)]
    return Server("sentence-transformers", cmd, port, "/v1/embeddings", None)


def infinity_server(model_dir: str, exe: str | None = None) -> Server | str:
    """infinity-emb serving the directory, or the reason it cannot run here. `exe`: its
    `infinity_emb` command, e.g. from a venv of its own (its pins differ from xlingua's)."""
    import shutil

    exe = exe or shutil.which("infinity_emb") or str(Path(sys.executable).with_name("infinity_emb"))
    if not os.path.exists(exe):
        return "infinity-emb is not installed (no infinity_emb command; see --infinity-exe)"
    port = free_port()
    cmd = [exe, "v2", "--model-id", model_dir, "--port", str(port), "--host", "127.0.0.1",
           "--engine", "torch", "--device", "cpu", "--no-bettertransformer"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return Server("infinity-emb", cmd, port, "/embeddings", None, env=env)


def run_st_server(model_dir: str, port: int) -> None:
    """The minimal sentence-transformers endpoint (runs in its own process)."""
    import uvicorn
    from fastapi import FastAPI
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu")
    app = FastAPI()

    @app.get("/health")
    def health():
        return {"status": "ok"}

    @app.post("/v1/embeddings")
    def embeddings(body: dict):
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vecs = model.encode(texts, normalize_embeddings=True)
        return {"object": "list", "model": model_dir,
                "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]}

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# ---- clients --------------------------------------------------------------------------------
class Stats:
    def __init__(self):
        self.latency: list[float] = []
        self.codes: Counter = Counter()
        self.kinds: Counter = Counter()
        self.texts_ok = 0
        self.unclear = 0  # answers that are neither the right vectors nor a clear JSON error
        self.transport: Counter = Counter()

    def summary(self, seconds: float) -> dict:
        lat = np.array(self.latency) if self.latency else np.zeros(1)
        return {"seconds": round(seconds, 1), "texts_per_s": round(self.texts_ok / seconds, 1),
                "requests_ok": len(self.latency), "p50_ms": round(float(np.percentile(lat, 50)) * 1000, 1),
                "p99_ms": round(float(np.percentile(lat, 99)) * 1000, 1),
                "codes": dict(sorted(self.codes.items())), "kinds": dict(self.kinds),
                "transport_errors": dict(self.transport), "unclear_answers": self.unclear}


async def client(http, server: Server, pool: list[str], rng: random.Random, done, stats: Stats,
                 faults: bool, max_items: int, dim: list) -> None:
    import httpx

    kinds, weights = zip(*MIX.items()) if faults else (("valid",), (1.0,))
    while not done():
        kind = rng.choices(kinds, weights)[0]
        n = rng.choice(SIZES)
        texts = rng.sample(pool, n)
        body: dict | bytes = {"input": texts}
        if server.model_name:
            body["model"] = server.model_name
        timeout = 60.0
        if kind == "oversize":
            body["input"] = rng.choice([pool[:1] * (max_items + 1), ["x" * 30_000]])
        elif kind == "malformed":
            body = rng.choice([b'{"input": ["unterminated', {"input": ["ok", 7]}])
        elif kind == "hangup":
            timeout = 0.02
        stats.kinds[kind] += 1
        t0 = time.perf_counter()
        try:
            if isinstance(body, bytes):
                r = await http.post(server.url + server.path, content=body, timeout=timeout,
                                    headers={"content-type": "application/json"})
            else:
                r = await http.post(server.url + server.path, json=body, timeout=timeout)
        except httpx.TimeoutException:
            stats.transport["client hung up" if kind == "hangup" else "timeout"] += 1
            continue
        except httpx.HTTPError as exc:
            stats.transport[type(exc).__name__] += 1
            await asyncio.sleep(0.05)
            continue
        took = time.perf_counter() - t0
        stats.codes[r.status_code] += 1
        try:
            data = r.json()
        except ValueError:
            stats.unclear += 1
            continue
        if r.status_code == 200:
            rows = data.get("data", [])
            if not dim:
                dim.append(len(rows[0]["embedding"]))
            # a hang-up request answered within its 20 ms is a right answer, not an unclear one
            if kind not in ("valid", "hangup") or len(rows) != len(texts) or any(len(x["embedding"]) != dim[0] for x in rows):
                stats.unclear += 1
                continue
            stats.latency.append(took)
            stats.texts_ok += len(texts)
        elif not (isinstance(data.get("error"), dict) and data["error"].get("message")) and server.name == "xlingua":
            stats.unclear += 1


async def load(server: Server, pool: list[str], clients: int, seconds: float, seed: int, faults: bool,
               max_items: int, done=None) -> tuple[Stats, float]:
    """`clients` clients until `seconds` have passed (or until `done()` says so)."""
    import httpx

    stats, dim = Stats(), []
    limits = httpx.Limits(max_connections=clients * 2, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits) as http:
        t0 = time.perf_counter()
        done = done or (lambda: time.perf_counter() > t0 + seconds)
        await asyncio.gather(*(client(http, server, pool, random.Random(seed * 1000 + i), done, stats, faults,
                                      max_items, dim) for i in range(clients)))
    return stats, time.perf_counter() - t0


def fault_run(server: Server, pool, clients, seconds, seed, max_items) -> dict:
    """The mixed load; a third of `seconds` in, the server is killed with -9 and restarted; the
    load goes on until it has answered for the other two thirds again (the restart itself is
    bounded by Server.start's timeout)."""
    result, t0 = {}, time.perf_counter()
    state = {"back_at": None, "failed": False}

    def killer():
        time.sleep(seconds / 3)
        server.kill()
        result["killed_at_s"] = round(time.perf_counter() - t0, 1)
        t1 = time.perf_counter()
        try:
            server.start()
        except RuntimeError as exc:
            result["restart_error"] = str(exc)
            state["failed"] = True
        result["down_s"] = round(time.perf_counter() - t1, 1)
        state["back_at"] = time.perf_counter()

    def done():
        if state["failed"]:
            return True
        return state["back_at"] is not None and time.perf_counter() > state["back_at"] + 2 * seconds / 3

    thread = threading.Thread(target=killer)
    thread.start()
    stats, took = asyncio.run(load(server, pool, clients, seconds, seed, True, max_items, done))
    thread.join()
    return {**result, **stats.summary(took)}


def inprocess_rate(model: str, texts: list[str]) -> float:
    from xlingua.encoders.loading import load_encoder

    enc = load_encoder(model)
    enc.encode(texts[:64])  # warm up
    t0 = time.perf_counter()
    enc.encode(texts)
    rate = len(texts) / (time.perf_counter() - t0)
    del enc
    gc.collect()
    return rate


def model_dir(model: str) -> str | None:
    """The directory a baseline can load: the bundled model's converted copy, or a model dir."""
    if model.startswith("bundled"):
        from xlingua.encoders.e5_base import converted_dir

        return str(converted_dir())
    path = model.split(":", 1)[1] if model.startswith("bf16:") else model
    return path if os.path.isdir(path) else None


def sentences(path: str | None, n: int, seed: int) -> list[str]:
    if path:
        from xlingua.data.text import read_lines

        return [line.text for line in read_lines(path) if line.text.strip()]
    from xlingua.bench.embed import sample_sentences

    return sample_sentences(n=n, seed=seed)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30.0, help="per load run (each run is bounded by it)")
    ap.add_argument("--sentences", help="a text file of sentences (default: l10n dev sample)")
    ap.add_argument("--pool", type=int, default=4000, help="sentences sampled for the requests")
    ap.add_argument("--max-items", type=int, default=64)
    ap.add_argument("--baselines", nargs="*", default=["infinity-emb", "sentence-transformers"])
    ap.add_argument("--infinity-exe", help="the infinity_emb command (default: on PATH or beside python)")
    ap.add_argument("--no-fault", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="serve_load")
    ap.add_argument("--st-server", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.st_server:
        run_st_server(args.st_server, args.port)
        return {}
    pool = sentences(args.sentences, args.pool, args.seed)
    report = {"model": args.model, "clients": args.clients, "seconds": args.seconds, "pool": len(pool),
              "max_items": args.max_items, "mix": MIX, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "cpus": os.cpu_count()}
    report["inprocess_texts_per_s"] = round(inprocess_rate(args.model, pool[:2000]), 1)
    print(f"in-process encode: {report['inprocess_texts_per_s']} texts/s", flush=True)

    server = xlingua_server(args.model, args.max_items)
    try:
        report["xlingua_start_s"] = round(server.start(), 1)
        stats, took = asyncio.run(load(server, pool, args.clients, args.seconds, args.seed, False, args.max_items))
        report["xlingua_valid"] = stats.summary(took)
        stats, took = asyncio.run(load(server, pool, args.clients, args.seconds, args.seed + 1, True, args.max_items))
        report["xlingua_mixed"] = stats.summary(took)
        if not args.no_fault:
            report["xlingua_fault"] = fault_run(server, pool, args.clients, args.seconds, args.seed + 2, args.max_items)
    finally:
        server.stop()
    rate = report["xlingua_valid"]["texts_per_s"]
    report["served_vs_inprocess"] = round(rate / report["inprocess_texts_per_s"], 3)
    print(json.dumps({k: report[k] for k in report if k.startswith("xlingua")}, indent=1), flush=True)

    directory = model_dir(args.model)
    for name in args.baselines:
        if directory is None:
            report[name] = {"error": f"{args.model} has no model directory a baseline can load"}
            continue
        base = infinity_server(directory, args.infinity_exe) if name == "infinity-emb" else st_server(directory)
        if isinstance(base, str):
            report[name] = {"error": base}
            continue
        try:
            base.start()
            stats, took = asyncio.run(load(base, pool, args.clients, args.seconds, args.seed, False, args.max_items))
            report[name] = stats.summary(took)
            report[f"xlingua_vs_{name}"] = round(rate / max(report[name]["texts_per_s"], 1e-9), 2)
        except RuntimeError as exc:
            report[name] = {"error": str(exc)}
        finally:
            base.stop()
        print(name, json.dumps(report[name]), flush=True)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "serve_load.json").write_text(json.dumps(report, indent=1))
    (out / "serve_load.md").write_text(markdown(report))
    print(markdown(report))
    return report


def markdown(r: dict) -> str:
    lines = [f"`{r['model']}`, {r['clients']} clients x {r['seconds']} s per run, {r['cpus']} CPUs, {r['date']}",
             f"in-process encode: {r['inprocess_texts_per_s']} texts/s; served (valid load) / in-process: "
             f"{r['served_vs_inprocess']}", "",
             "| run | texts/s | p50 ms | p99 ms | codes | transport | unclear |", "|---|---:|---:|---:|---|---|---:|"]
    for key in ("xlingua_valid", "xlingua_mixed", "xlingua_fault", "infinity-emb", "sentence-transformers"):
        s = r.get(key)
        if not s:
            continue
        if "error" in s:
            lines.append(f"| {key} | not run: {s['error'][:300]} | | | | | |")
            continue
        lines.append(f"| {key} | {s['texts_per_s']} | {s['p50_ms']} | {s['p99_ms']} | {s['codes']} | "
                     f"{s['transport_errors']} | {s['unclear_answers']} |")
    for key in ("xlingua_vs_infinity-emb", "xlingua_vs_sentence-transformers"):
        if key in r:
            lines.append(f"\n{key.replace('_', ' ')}: {r[key]}x")
    if "xlingua_fault" in r:
        f = r["xlingua_fault"]
        lines.append(f"\nkill -9 at {f.get('killed_at_s')} s; answering again after {f.get('down_s')} s")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
