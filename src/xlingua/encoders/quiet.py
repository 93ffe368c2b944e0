"""Loading a transformers model without its chatter."""
from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def quiet_transformers():
    """No per-file progress bars or "newly initialized pooler" reports from transformers
    (a headless encoder does not use the pooler)."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
