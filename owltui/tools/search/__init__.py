"""Search tools: ``grep``, ``find`` and ``ls`` on ripgrep (``rg``), their globs and the streamed
grep output reader."""
