import sys

from memgit.cli import main

sys.exit(main())
