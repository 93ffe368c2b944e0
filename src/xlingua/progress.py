"""Shared progress-bar pieces (rich)."""
from __future__ import annotations

from rich.progress import ProgressColumn
from rich.text import Text


class RateColumn(ProgressColumn):
    """Items per second, e.g. `812 sent/s`."""

    def __init__(self, unit: str = "it"):
        super().__init__()
        self.unit = unit

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text(f"- {self.unit}/s")
        return Text(f"{speed:,.0f} {self.unit}/s")
