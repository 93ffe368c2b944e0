"""Resuming after a kill ends with the same weights as an unbroken run; two gloo processes
take the same step as one process with the combined batch."""
import json
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from xlingua.training.config import config_from_dict
from xlingua.training.model import SentenceModel
from xlingua.training.trainer import Trainer


def tasks_for(pairs_file, xnli_dir, text_file):
    return [
        {"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)},
         "options": {"hard_negatives": 1, "margin": 0.2}},
        {"name": "nli", "objective": "nli", "data": {"type": "xnli", "langs": ["en", "de"], "data_dir": str(xnli_dir)},
         "options": {"hidden": 8}},
        {"name": "next", "objective": "response_ranking", "data": {"type": "ordered_text", "paths": [str(text_file)]},
         "options": {"hidden": 8}},
        {"name": "dueam", "objective": "dueam", "data": {"type": "dueam_weak", "pairs": ["en-de"], "data_dir": str(xnli_dir)}},
        {"name": "one", "objective": "onealigner", "data": {"type": "tsv", "path": str(pairs_file)}},
    ]


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "story.txt"
    path.write_text("The cat runs. The dog eats. A small house is red. The car is blue. The cat sleeps. "
                    "The dog runs. A big car. The red house.\n")
    return path


def make_config(model_dir, out, tasks, **kw):
    cfg = {"model": str(model_dir), "output_dir": str(out), "tasks": tasks, "batch_size": 4,
           "max_seq_length": 16, "lr": 1e-3, "warmup_steps": 2, "log_every": 1, "seed": 5}
    cfg.update(kw)
    return config_from_dict(cfg)


class Kill(Exception):
    pass


def test_resume_after_kill_matches_unbroken_run(tiny_model_dir, pairs_file, xnli_dir, text_file, tmp_path):
    tasks = [t for t in tasks_for(pairs_file, xnli_dir, text_file) if t["name"] in ("tr", "nli", "dueam")]
    kw = {"max_steps": 5, "checkpoint_every": 2}
    whole = Trainer(make_config(tiny_model_dir, tmp_path / "whole", tasks, **kw))
    whole.train(show_progress=False)

    def kill_at_3(step):
        if step == 3:
            raise Kill

    broken = Trainer(make_config(tiny_model_dir, tmp_path / "broken", tasks, **kw))
    with pytest.raises(Kill):
        broken.train(on_step=kill_at_3, show_progress=False)
    resumed = Trainer(make_config(tiny_model_dir, tmp_path / "broken", tasks, **kw))
    resumed.train(resume=True, show_progress=False)
    assert resumed.step == 5
    for (name, a), b in zip(whole.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.equal(a, b), name
    for a, b in zip(whole.tasks.state_dict().values(), resumed.tasks.state_dict().values()):
        assert torch.equal(a, b)
    steps = [json.loads(l)["step"] for l in (tmp_path / "broken" / "log.jsonl").read_text().splitlines()]
    assert steps == list(range(6))  # no step logged twice, none missing
    # and the run did change the weights
    start = SentenceModel.load(str(tiny_model_dir)).state_dict()
    assert any(not torch.equal(a, b) for a, b in zip(start.values(), whole.model.state_dict().values()))


def plain_sgd(trainer):
    # Compare updates with SGD: Adam's first step is ~lr * sign(grad), which turns float
    # rounding noise in near-zero gradient entries into full-size differences.
    trainer.optimizer = torch.optim.SGD(trainer.params, lr=0.5)
    # a constant schedule bound to the new optimizer (the old one would never step)
    trainer.scheduler = torch.optim.lr_scheduler.LambdaLR(trainer.optimizer, lambda step: 1.0)


def _worker(rank, world, init_file, cfg_dict, out_file):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        trainer = Trainer(config_from_dict(cfg_dict))
        trainer.model.eval()  # no dropout: masks would differ between the two layouts
        plain_sgd(trainer)
        losses = [trainer.train_step()["loss"] for _ in range(len(trainer.tasks))]
        if rank == 0:
            torch.save({"losses": losses, "params": trainer.model.state_dict(),
                        "heads": trainer.tasks.state_dict()}, out_file)
        # both leave together: gloo can abort a rank that tears down while its peer still works
        dist.barrier()
    finally:
        dist.destroy_process_group()


def test_two_processes_equal_one_with_the_combined_batch(tiny_model_dir, pairs_file, xnli_dir, text_file, tmp_path):
    tasks = tasks_for(pairs_file, xnli_dir, text_file)
    single = Trainer(make_config(tiny_model_dir, tmp_path / "single", tasks, batch_size=6, max_steps=5))
    single.model.eval()
    plain_sgd(single)
    losses = [single.train_step()["loss"] for _ in range(5)]

    cfg = make_config(tiny_model_dir, tmp_path / "ddp", tasks, batch_size=3, max_steps=5).to_dict()
    out_file = tmp_path / "ddp.pt"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # spawn, not fork: a forked child can hang in the OpenMP pool the parent already started
    mp.spawn(_worker, args=(2, str(tmp_path / "init"), cfg, str(out_file)), nprocs=2, join=True)
    got = torch.load(out_file, weights_only=False)
    assert got["losses"] == pytest.approx(losses, abs=1e-5)
    start = SentenceModel.load(str(tiny_model_dir)).state_dict()
    assert any(not torch.equal(a, b) for a, b in zip(start.values(), got["params"].values()))
    for (name, a), b in zip(single.model.state_dict().items(), got["params"].values()):
        torch.testing.assert_close(a, b, atol=2e-6, rtol=1e-4, msg=lambda m: name + m)
    for (name, a), b in zip(single.tasks.state_dict().items(), got["heads"].values()):
        torch.testing.assert_close(a, b, atol=2e-6, rtol=1e-4, msg=lambda m: name + m)
