"""`python -m memgit`: the same entry point as the `memgit` script."""

from memgit.cli.quick import main_and_exit

main_and_exit()
