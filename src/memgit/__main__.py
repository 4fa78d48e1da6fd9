"""`python -m memgit`: the same entry point as the `memgit` script."""

import sys

from memgit.cli.quick import main

sys.exit(main())
