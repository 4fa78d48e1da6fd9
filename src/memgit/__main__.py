import sys

from memgit.fast_cli import main

sys.exit(main())
