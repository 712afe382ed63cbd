"""``fetch``: a web page as Markdown for the model.

The permission policy decides the first URL before the call runs (``permission_web``: the
``[allow] fetch`` hosts run, others ask); a redirect to another host is put to the same policy from
inside the call (the session's ``services.permissions``, under the call's own id, so an approval
shows it as this call's), and without a policy such a redirect is reported, not followed. At most
``MAX_BYTES`` of the body are read; a big page goes out whole and the loop saves it as a large
result, with the exact ``read_result`` call to page through it. A binary body is refused with its
type and size, never read into the context. Aborting the run (its scope, or the cancel token)
closes the connection at once.
"""

from __future__ import annotations

from typing import ClassVar

import anyio
from pydantic import BaseModel, Field

from owltui.agent.messages import ToolCall
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.tools.base import Params
from owltui.tools.web.client import FetchFailed, Page, get_page, human_size
from owltui.tools.web.markdown import to_text

__all__ = ["MAX_BYTES", "FetchParams", "FetchTool"]

MAX_BYTES = 5 * 1024 * 1024  # of the body, as it comes off the wire (after its transfer encoding)
ERROR_BODY = 2000  # characters of an error page's text kept


class FetchParams(Params):
    url: str = Field(description="http(s) URL")


def _heading(page: Page) -> str:
    where = page.url + (f" (redirected from {page.redirects[0]})" if page.redirects else "")
    size = human_size(len(page.body))
    cut = f"; cut at the {human_size(MAX_BYTES)} cap" if page.truncated else ""
    return f"{where}\n[{page.content_type or 'no content type'}, {size}{cut}]\n\n"


def _binary(page: Page) -> str:
    size = f"{human_size(page.length)}" if page.length is not None else "size not given"
    return (
        f"{page.url} is {page.content_type or 'binary data'} ({size}), not a page or text: fetch "
        "reads HTML, text and JSON only."
    )


class FetchTool:
    name: ClassVar[str] = "fetch"
    description: ClassVar[str] = (
        "Read a web page as Markdown (text and JSON as is). A big page is saved for read_result."
    )
    params: ClassVar[type[BaseModel]] = FetchParams
    read_only: ClassVar[bool] = True

    async def run(self, args: FetchParams, ctx: ToolContext) -> ToolOutput:
        async def check_hop(origin: str, to: str) -> str | None:
            policy = ctx.services.permissions
            if policy is None:
                return "nothing here can approve another host; fetch that URL itself if it is wanted"
            hop = ToolCall(id=ctx.call_id, name=self.name, arguments={"url": to, "redirected_from": origin})
            return await policy.check(hop, True)

        pages: list[Page] = []
        failure: list[str] = []
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await ctx.cancel.wait()
                tg.cancel_scope.cancel()

            async def work() -> None:
                try:
                    pages.append(
                        await get_page(args.url, check_hop=check_hop, say=ctx.progress, max_bytes=MAX_BYTES)
                    )
                except FetchFailed as exc:
                    failure.append(str(exc))
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            tg.start_soon(work)
        if failure:
            raise ToolError(failure[0])
        if not pages:
            raise ToolError(f"Cancelled ({ctx.cancel.reason or 'aborted'}); the connection was closed.")
        page = pages[0]
        details = {"url": page.url, "status": f"HTTP {page.status}", "content_type": page.content_type}
        if page.kind == "binary":
            return ToolOutput(_binary(page), is_error=True, details=details)
        text = await anyio.to_thread.run_sync(to_text, page.kind, page.body, page.charset, page.url)
        if page.status >= 400:
            shown = text[:ERROR_BODY] + ("…" if len(text) > ERROR_BODY else "")
            return ToolOutput(
                f"{page.url} answered HTTP {page.status} {page.reason}.\n\n{shown}".rstrip(),
                is_error=True,
                details=details,
            )
        return ToolOutput(_heading(page) + text, details=details)
