"""`xlingua serve`: one process, the model loaded once, an HTTP API and a page."""
from xlingua.serve.app import ServeConfig, create_app, served_name

__all__ = ["ServeConfig", "create_app", "served_name"]
