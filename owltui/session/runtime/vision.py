"""Whether the session's current model accepts images: the catalog's ``vision`` of the model the
agent runs now (``/model`` may switch it), lent to the tools and the ``@`` mentions as the
``images`` service. The demo model and models the catalog does not know take none."""

from __future__ import annotations

from collections.abc import Callable

from owltui.agent.model import Model
from owltui.tools.files.imageload import refusal


class ModelImages:
    """``ImageInput`` over a function that returns the current model."""

    def __init__(self, current: Callable[[], Model]) -> None:
        self.current = current

    def image_refusal(self) -> str | None:
        from owltui.providers.http.stream import HTTPModel  # httpx: only once an image is attached

        model = self.current()
        if isinstance(model, HTTPModel) and model.info.vision:
            return None
        return refusal(model.name)
