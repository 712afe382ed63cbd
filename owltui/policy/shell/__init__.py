"""What a bash command runs, read statically: the tree-sitter parse, the walk to simple commands
with redirections, words after quote removal, and wrapper programs that run other commands."""
