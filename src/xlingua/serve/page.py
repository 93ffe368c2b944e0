"""The page: GET / and its two assets (a fixed list, so no path from a request reaches the disk)."""
from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import FileResponse

from xlingua.serve.errors import APIError

router = APIRouter(include_in_schema=False)
ASSETS = {"app.js": "text/javascript", "style.css": "text/css"}


def _static():
    return resources.files("xlingua.serve") / "static"


@router.get("/")
async def page():
    return FileResponse(str(_static() / "index.html"), media_type="text/html")


@router.get("/static/{name}")
async def asset(name: str):
    if name not in ASSETS:
        raise APIError(404, "not found", "not_found")
    return FileResponse(str(_static() / name), media_type=ASSETS[name])
