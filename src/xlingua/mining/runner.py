"""Runs the steps of mining.step, in this process or with their items as Ray tasks, and owns
what every step shares: skipping a finished step, progress, timing, and writing the summary
only once all items are done.

Items write their own files (atomically) into the work directory, so on a cluster the work
directory must be on a filesystem every node sees (NFS, a mounted bucket)."""
from __future__ import annotations

import resource
import time
from contextlib import contextmanager

from xlingua.io import remove_stale_partials
from xlingua.mining.cache import peak_memory_mb
from xlingua.mining.step import Output, Step


class Runner:
    def __init__(self, ray_address: str | None = None, show_progress: bool = True):
        self.ray_address = ray_address
        self.local = ray_address is None
        self.show_progress = show_progress
        self.timings: dict[str, dict] = {}
        if not self.local:
            import ray

            if not ray.is_initialized():
                ray.init(address=None if ray_address == "local" else ray_address,
                         log_to_driver=False)

    def run(self, step: Step, label: str) -> Output:
        """The step's Output: loaded when its summary exists, else computed (only the items
        without files) and summarized."""
        with self.timed(label) as stage:
            if step.done():
                stage["cached"] = True
                return step.load()
            step.dir.mkdir(parents=True, exist_ok=True)
            remove_stale_partials(step.dir)  # what a killed run was writing
            todo = [item for item in step.items() if not step.item_done(item)]
            if todo:
                (self._ray if step.spread and not self.local else self._local)(step, todo, label)
            return step.finish(step.summarize())

    @contextmanager
    def timed(self, label: str):
        """Times a block under `label` (a step, or work outside steps such as writing)."""
        stage = {"cached": False}
        t0, c0 = time.perf_counter(), _cpu_seconds()
        yield stage
        # CPU seconds of this process and the processes it started and waited for (not Ray
        # workers' work): unlike wall time, unmoved by other jobs sharing the machine
        self.timings[label] = {"seconds": round(time.perf_counter() - t0, 3),
                               "cpu_seconds": round(_cpu_seconds() - c0, 3),
                               "cached": stage["cached"], "peak_rss_mb": round(peak_memory_mb(), 1)}

    def log(self, message: str) -> None:
        if self.show_progress:
            print(message, flush=True)

    def _local(self, step, items, label):
        sizes = [step.item_rows(item) for item in items]
        unit = "rows" if any(s is not None for s in sizes) else "items"
        # items without rows (a step's plan or summing-up) count as none
        sizes = [s or 0 for s in sizes] if unit == "rows" else [1] * len(items)
        total, done, t0 = sum(sizes), 0, time.perf_counter()
        for item, size in zip(items, sizes):
            step.run(item, self.show_progress)
            done += size
            if len(items) > 1:
                self.log(f"  [{label}] {rate_line(done, total, time.perf_counter() - t0, unit)}")

    def _ray(self, step, items, label):
        import ray

        remote = ray.remote(_run_item)
        threads = _thread_settings()
        shared = ray.put(step)  # the step (an encoder with it) goes to the object store once
        pending = [remote.remote(threads, shared, item) for item in items]
        refs, done = list(pending), 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            done += len(ready)
            self.log(f"  {label}: {done}/{len(refs)} Ray tasks done")
        ray.get(refs)


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def rate_line(done: int, total: int, seconds: float, unit: str) -> str:
    """`300,000/1,000,000 rows, 2,400 rows/s, about 4m52s left`: a stage's progress in one line."""
    rate = done / seconds if seconds > 0 else 0.0
    left = (total - done) / rate if rate else 0.0
    minutes, secs = divmod(int(round(left)), 60)
    return f"{done:,}/{total:,} {unit}, {rate:,.1f} {unit}/s, about {minutes}m{secs:02d}s left"


def _thread_settings() -> dict:
    """This process's torch and FAISS thread counts. Ray workers start with one thread; a
    different count changes the order of float sums, so vectors and scores would differ in
    the last bits from the local run's. The workers take the driver's counts instead."""
    import faiss
    import torch

    return {"torch": torch.get_num_threads(), "faiss": faiss.omp_get_max_threads()}


def _run_item(threads: dict, step: Step, item) -> None:
    import faiss
    import torch

    torch.set_num_threads(threads["torch"])
    faiss.omp_set_num_threads(threads["faiss"])
    step.run(item, False)  # a worker's progress bars would land in its log
