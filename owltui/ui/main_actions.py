"""What the user does on the main screen, as Textual delivers it to the app: the keys its bindings
name (``app.abort``, ``app.ctrl_c``…: ``action_*`` methods) and the messages of the input and the
approval prompts. ``MainScreenActions`` is a mixin of ``OwlApp`` (Textual looks these up on the app)
whose methods each hand over to ``control.actions``, ``control.queue_keys`` or
``control.input_routing``. Standard library only at import: the app's module imports it before the
first frame, and none of these runs before the main screen is up."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from owltui.ui.control.app_api import OwlAppApi
    from owltui.ui.widgets.elicit_prompt import ElicitPrompt
    from owltui.ui.widgets.prompt_input import PromptInput
    from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock


class MainScreenActions:
    """The main screen's keys and messages, on the app (``self`` is the app: ``OwlAppApi``)."""

    # ---- keys (bound on the main screen: see ``main_screen``) ------------------------------
    def busy(self: OwlAppApi) -> bool:
        """A run, a `!command` or /init is going (what Esc and Ctrl+C stop)."""
        from owltui.ui.control import actions

        return actions.busy(self)

    def something_to_answer(self: OwlAppApi) -> bool:
        """An approval or an MCP server's question waits (Ctrl+G reaches it)."""
        from owltui.ui.control.elicit_ui import waiting

        return bool(self.runtime.approvals.pending() or waiting(self))

    def action_focus_approval(self: OwlAppApi) -> None:
        from owltui.ui.control import actions

        actions.focus_approval(self)

    def action_abort(self: OwlAppApi) -> None:
        from owltui.ui.control import actions

        actions.abort(self)

    def action_toggle_pause(self: OwlAppApi) -> None:
        from owltui.ui.control import actions

        actions.toggle_pause(self)

    def action_pick_requirement(self: OwlAppApi) -> None:
        self.call_later(self.run_line, "/require")

    async def action_ctrl_c(self: OwlAppApi) -> None:
        from owltui.ui.control import actions

        await actions.ctrl_c(self)

    async def action_ctrl_d(self: OwlAppApi) -> None:
        from owltui.ui.control import actions

        await actions.ctrl_d(self)

    def action_history_search(self: OwlAppApi) -> None:
        from owltui.ui.control import actions

        actions.history_search(self)

    def action_focus_queue(self: OwlAppApi) -> None:
        from owltui.ui.control.queue_keys import focus_queue

        focus_queue(self)

    async def action_steer_now(self: OwlAppApi) -> None:
        from owltui.ui.control.queue_keys import steer_now

        await steer_now(self)

    def action_toggle_tool(self: OwlAppApi) -> None:
        from owltui.ui.control import actions

        actions.toggle_tool(self)

    def action_cycle_mode(self: OwlAppApi) -> None:
        from owltui.ui.control.plan_review import cycle_mode

        cycle_mode(self)

    def action_follow(self: OwlAppApi) -> None:
        self.conversation.follow()

    def action_scroll(self: OwlAppApi, direction: str) -> None:
        from owltui.ui.control import actions

        actions.scroll(self, direction)

    # ---- messages: what the input sends; approvals answered only by a deliberate action ------
    async def on_prompt_input_send(self: OwlAppApi, msg: PromptInput.Send) -> None:
        from owltui.ui.control import input_routing

        await input_routing.on_send(self, msg)

    def on_prompt_input_pop_queue(self: OwlAppApi, _msg: PromptInput.PopQueue) -> None:
        from owltui.ui.control import input_routing

        input_routing.pop_queue(self)

    def on_approval_prompt_decided(self: OwlAppApi, msg: ApprovalPrompt.Decided) -> None:
        self.input.focus()
        self.show_later(self.commands.call("approve", call_id=msg.call_id, decision=msg.decision))

    def on_elicit_prompt_answered(self: OwlAppApi, msg: ElicitPrompt.Answered) -> None:
        from owltui.ui.control.elicit_ui import answer

        answer(self, msg)

    def on_tool_block_approval_closed(self: OwlAppApi, _msg: ToolBlock.ApprovalClosed) -> None:
        self.input.focus()
