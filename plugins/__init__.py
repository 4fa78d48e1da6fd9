"""memgit's agent bundles (claude-code, codex, shell), shipped inside the package as
``memgit.bundles``: pyproject.toml maps this folder there (package-dir), so an
installed memgit and an editable checkout both find them with importlib.resources
(memgit.agents.install.bundle_dir). This file only makes the folder a package."""
