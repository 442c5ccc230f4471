"""Where the suite writes the files that are also checked in (COMPATIBILITY.md, docs/images/*.png):
under pytest's temporary directory, unless the make target that regenerates them (`make compat`,
`make docs-images`) names the checked-in path in an environment variable. `make test` then leaves
`git status` as it found it."""

from __future__ import annotations

import os
from pathlib import Path

COMPAT_MATRIX_ENV = "KAFKITO_COMPAT_MATRIX"  # `make compat`: the COMPATIBILITY.md to rewrite
DOCS_IMAGES_ENV = "KAFKITO_DOCS_IMAGES"  # `make docs-images`: the directory of the console's screenshots


def output_path(env_var: str, scratch: Path) -> Path:
    """The path named by `env_var`, else `scratch` (a path under pytest's temporary directory)."""
    named = os.environ.get(env_var, "").strip()
    return Path(named) if named else scratch
