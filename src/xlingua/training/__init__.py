"""`xlingua train`: multi-task fine-tuning of sentence encoders (mUSE, DuEAM, OneAligner
objectives). Entry points: `load_config`, `Trainer`, `train`."""
from xlingua.training.config import TrainConfig, load_config


def train(config, resume: bool = False, show_progress: bool = True, override=()):
    from xlingua.training.trainer import train as _train

    return _train(config, resume=resume, show_progress=show_progress, override=override)


__all__ = ["TrainConfig", "load_config", "train"]
