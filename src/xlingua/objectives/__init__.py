"""Training objectives, one file each: the loss (citing its paper) and its training task,
registered by name with `@register` (see objectives.base)."""
from xlingua.objectives.base import TrainingTask, objective_names, register, task_class

__all__ = ["TrainingTask", "objective_names", "register", "task_class"]
