"""The evaluation tasks, one a file, each a `Task` subclass decorated with `@register`
(evaluation.registry finds every module of this package)."""
