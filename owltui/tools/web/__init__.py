"""The ``fetch`` tool: a URL read as Markdown (``fetch.py``), over a cookieless client that follows
redirects one hop at a time (``client.py``), HTML turned into Markdown by markdownify
(``markdown.py``)."""
