"""Theme files: the shipped ``*.toml`` themes (``shipped/``), their schema and validated loading
(``file``), and turning them into Textual themes (``loader``)."""
