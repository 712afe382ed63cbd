"""The policy the user chose, beside the tools it governs: ``sandbox`` (the kernel sandbox every
process runs in), ``permissions`` (modes, rules, protected paths: which calls run, ask or are
refused) and ``shell`` (what a bash command runs, parsed with tree-sitter-bash). Imports ``agent``
and the leaf packages only; the exec tools and the session import it."""
