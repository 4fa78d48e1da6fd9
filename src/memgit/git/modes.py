"""The modes git gives tree entries (the only ones a tree can hold)."""

from __future__ import annotations

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_COMMIT = 0o160000  # a gitlink: a submodule's commit
MODE_TREE = 0o040000
REGULAR = (MODE_FILE, MODE_EXEC)
