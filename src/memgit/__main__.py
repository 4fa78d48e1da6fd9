import sys

from memgit.cli.quick import main

sys.exit(main())
