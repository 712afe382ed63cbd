"""Provider-neutral conversation items: user messages, assistant messages, tool calls and results.

Every item is a pydantic model with a ``role`` discriminator, so a history round-trips through JSON
(sessions, RPC) unchanged. Providers map these to their wire formats; nothing here knows a provider.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class LazyModel(BaseModel):
    """Schemas are built on first use, not at import: start-up time matters in every mode."""

    model_config = ConfigDict(defer_build=True)


_FIELD_SETS: dict[frozenset[str], set[str]] = {}


class HistoryModel(LazyModel):
    """A part of a conversation item, of which a long session holds a few per round.

    pydantic keeps, per instance, the set of the field names it was given (216 bytes for up to
    four names: more than most items' own values). Items of one shape share one such set here;
    assigning a field first gives the instance a set of its own, so ``model_fields_set`` stays
    exact for each instance.
    """

    def model_post_init(self, context: Any, /) -> None:
        given = self.__pydantic_fields_set__
        shared = _FIELD_SETS.setdefault(frozenset(given), given)
        if shared is not given:
            object.__setattr__(self, "__pydantic_fields_set__", shared)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)


StopReason = Literal["stop", "tool_use", "length", "error", "aborted"]
Lane = Literal["user", "steer", "aside", "follow_up", "reminder", "notice"]
USER_LANES: frozenset[Lane] = frozenset({"user", "steer", "follow_up"})  # where a user's own words arrive
ToolStatus = Literal["ok", "error", "refused", "skipped", "cancelled"]


class Usage(HistoryModel):
    """Token counts for one model call (or a sum of them) and its cost in US dollars."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost=self.cost + other.cost,
        )


class ToolCall(HistoryModel):
    """One tool call requested by the model. ``arguments`` is the parsed JSON object.

    When the model sent arguments that are not a JSON object, ``arguments`` is empty and
    ``parse_error`` says what was wrong; the loop turns that into an error result.
    """

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = None
    raw_arguments: str | None = None


class ThinkingBlock(HistoryModel):
    """A block of model reasoning with the provider's signature (needed to send it back)."""

    text: str = ""
    signature: str | None = None
    redacted: bool = False


class ImageRef(HistoryModel):
    """An image attached to a message. The line saved for the message holds only this reference;
    the bytes (``data``, never serialised) live in the session's image store, content-addressed by
    ``sha256``, and are put back when the session is read. ``width``/``height`` are the pixels sent
    (after any downscale); ``original`` the file's own size when it was downscaled."""

    model_config = ConfigDict(frozen=True, defer_build=True)
    media_type: str
    sha256: str
    width: int
    height: int
    size: int
    name: str = ""
    original: tuple[int, int] | None = None
    data: bytes = Field(default=b"", exclude=True, repr=False)


class UserMessage(HistoryModel):
    """Input from outside the model: the user's prompt, a steering or follow-up message, an aside."""

    model_config = ConfigDict(frozen=True, defer_build=True)
    role: Literal["user"] = "user"
    text: str
    lane: Lane = "user"
    source: str = "user"
    images: tuple[ImageRef, ...] = ()


class AssistantMessage(HistoryModel):
    """One model response: text, thinking, tool calls, normalised stop reason and usage."""

    role: Literal["assistant"] = "assistant"
    text: str = ""
    thinking: list[ThinkingBlock] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: StopReason = "stop"
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    model: str | None = None

    @property
    def thinking_text(self) -> str:
        return "".join(b.text for b in self.thinking)


class ToolResult(HistoryModel):
    """The one result every tool call gets, whatever happened to it."""

    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    content: str
    is_error: bool = False
    status: ToolStatus = "ok"
    images: tuple[ImageRef, ...] = ()


Item = Annotated[UserMessage | AssistantMessage | ToolResult, Field(discriminator="role")]
ITEM_ADAPTER: TypeAdapter[Item] = TypeAdapter(Item, config=ConfigDict(defer_build=True))
