"""Run a list of independent shard tasks: in this process, or as Ray tasks.

Tasks write their own artefacts (atomically) into the work directory, so on a cluster the
work directory must be on a filesystem every node sees (NFS, a mounted bucket)."""
from __future__ import annotations

from typing import Callable, Sequence

from xlingua.encoders.base import Encoder


class Runner:
    def __init__(self, ray_address: str | None = None, show_progress: bool = True):
        self.ray_address = ray_address
        self.local = ray_address is None
        self.show_progress = show_progress
        if not self.local:
            import ray

            if not ray.is_initialized():
                ray.init(address=None if ray_address == "local" else ray_address,
                         log_to_driver=False)

    def map(self, fn: Callable, args: Sequence[tuple], label: str = "tasks") -> list:
        if not args:
            return []
        if self.local:
            return self._local(fn, args, label)
        return self._ray(fn, args, label)

    def _local(self, fn, args, label):
        out = []
        for i, a in enumerate(args):
            if self.show_progress and len(args) > 1:
                print(f"  {label}: shard task {i + 1}/{len(args)}", flush=True)
            out.append(fn(*a))
        return out

    def _ray(self, fn, args, label):
        import ray

        remote = ray.remote(_call_with_threads)
        threads = _thread_settings()
        shared: dict[int, object] = {}  # encoder objects go to the object store once

        def put(x):
            if isinstance(x, Encoder):
                if id(x) not in shared:
                    shared[id(x)] = ray.put(x)
                return shared[id(x)]
            return x

        refs = [remote.remote(threads, fn, *[put(x) for x in a]) for a in args]
        done, pending = [], list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            done += ready
            if self.show_progress:
                print(f"  {label}: {len(done)}/{len(refs)} Ray tasks done", flush=True)
        return ray.get(refs)


def _thread_settings() -> dict:
    """This process's torch and FAISS thread counts. Ray workers start with one thread; a
    different count changes the order of float sums, so vectors and scores would differ in
    the last bits from the local run's. The workers take the driver's counts instead."""
    import faiss
    import torch

    return {"torch": torch.get_num_threads(), "faiss": faiss.omp_get_max_threads()}


def _call_with_threads(threads: dict, fn: Callable, *args):
    import faiss
    import torch

    torch.set_num_threads(threads["torch"])
    faiss.omp_set_num_threads(threads["faiss"])
    return fn(*args)
