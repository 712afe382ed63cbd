"""``python -m owltui.session.commands --rpc-table``: docs/rpc.md's command table, from the declarations."""

from __future__ import annotations

import sys

from owltui.session.commands.spec import rpc_table
from owltui.session.commands.table import rpc_commands

if __name__ == "__main__":
    if sys.argv[1:] != ["--rpc-table"]:
        sys.exit("usage: python -m owltui.session.commands --rpc-table")
    print(rpc_table(rpc_commands()))
