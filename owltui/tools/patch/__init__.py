"""The ``apply_patch`` tool: ``parser`` (V4A patch text -> hunks), ``apply`` (hunks -> new file text,
pure), ``tool`` (the tool: paths, encodings, all-or-nothing atomic writes)."""
