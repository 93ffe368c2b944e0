"""torch.distributed helpers for data-parallel training (DDP under torchrun, gloo or nccl).

The rule every objective follows: gather the batch's embeddings from all processes with an
autograd-aware all-gather, then compute the *global* loss on every process. The backward of
`torch.distributed.nn.functional.all_gather` sums, into each process's local slice, the
gradients all processes computed for it; averaging parameter gradients over processes
(`average_gradients`) then gives exactly the gradient of the global loss, as one process with
the combined batch would. In-batch negatives are thus global, and each anchor is lined up with
its own positive because every process concatenates the slices in rank order.
"""
from __future__ import annotations

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    return dist.get_rank() if is_distributed() else 0


def world_size() -> int:
    return dist.get_world_size() if is_distributed() else 1


def init_from_env() -> bool:
    """Join the process group torchrun describes in the environment (no-op without it)."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or is_distributed():
        return is_distributed()
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    return True


def gather(*tensors: torch.Tensor | None) -> torch.Tensor | tuple:
    """Concatenate each tensor across processes along dim 0 (rank order), keeping gradients
    for the local slices. Several tensors travel in ONE collective: with one all-gather per
    tensor, autograd may run their backward all-to-alls in a different order on different
    processes (their graphs differ, e.g. by a pad), silently swapping gradients between
    tensors of the same shape. Trailing dims must match between the tensors, and each
    tensor's dim 0 must be the same on every process. Returns one tensor or a tuple."""
    out = _gather(tensors)
    return out[0] if len(tensors) == 1 else out


def _gather(tensors) -> tuple:
    if not is_distributed():
        return tuple(tensors)
    present = [t for t in tensors if t is not None]
    sizes = [t.shape[0] for t in present]
    local = torch.cat(present) if len(present) > 1 else present[0]
    if local.requires_grad:
        from torch.distributed.nn.functional import all_gather

        parts = all_gather(local)
    else:
        parts = [torch.empty_like(local) for _ in range(world_size())]
        dist.all_gather(parts, local.contiguous())
    split = [part.split(sizes) for part in parts]
    joined = iter([torch.cat([s[k] for s in split]) for k in range(len(present))])
    return tuple(None if t is None else next(joined) for t in tensors)


def gather_padded(x: torch.Tensor, x_mask: torch.Tensor, y: torch.Tensor, y_mask: torch.Tensor) -> tuple:
    """Gather token tensors (n, L, d) + masks (n, L) of two sides whose L differs between
    processes and sides: pad all to the longest L first, then gather in one collective."""
    if not is_distributed():
        return x, x_mask, y, y_mask
    length = torch.tensor([max(x.shape[1], y.shape[1])])
    dist.all_reduce(length, op=dist.ReduceOp.MAX)
    longest = int(length.item())

    def pad(t, mask):
        extra = longest - t.shape[1]
        return F.pad(t, (0, 0, 0, extra)), F.pad(mask, (0, extra))

    x, x_mask = pad(x, x_mask)
    y, y_mask = pad(y, y_mask)
    x, y = gather(x, y)
    x_mask, y_mask = gather(x_mask, y_mask)
    return x, x_mask, y, y_mask


def average_gradients(params) -> None:
    """All-reduce and average .grad over processes (after backward, before the step).
    Parameters without a gradient this step (another task's head) get zeros on every process
    so the collective calls line up."""
    if not is_distributed():
        return
    n = world_size()
    for p in params:
        if not p.requires_grad:
            continue
        if p.grad is None:
            p.grad = torch.zeros_like(p)
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
        p.grad.div_(n)


def all_reduce_mean(value: float) -> float:
    if not is_distributed():
        return value
    t = torch.tensor([float(value)], dtype=torch.float64)
    dist.all_reduce(t)
    return float(t.item()) / world_size()
