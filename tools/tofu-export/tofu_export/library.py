"""This file implements what tofu-export knows of the operator library: the
op type names that `specs/*.tdl` define, so that the exporter can tell which
ops of a traced step have a spec (docs/Export.md, "Ops without a spec").

The library is found as the C++ tools find it: the `--spec` files, plus
(unless `--no-default-specs`) every `*.tdl` of the standard library, in
`<prefix>/share/tofu/specs` next to an installed package, else the source
tree's `specs/` (recorded by the build in `_paths.py`, or found beside the
package in a source checkout). Only names are read: `op NAME` at the start
of each definition (TDL, docs/TDL.md "Files and operators"); the specs are
checked by the C++ tools, not here. Torch-free.
"""

import glob
import os
import re
from typing import Iterable, List, Optional, Set

from .errors import UsageError

_COMMENT = re.compile(r"#[^\n]*")
_OP_NAME = re.compile(r"(?:^|;)\s*op\s+([A-Za-z_][A-Za-z0-9_]*)")


def op_names(text: str) -> Set[str]:
    """The operator names a TDL source defines (overloads counted once)."""
    return set(_OP_NAME.findall(_COMMENT.sub("", text)))


def _candidate_dirs() -> List[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    dirs = [os.path.join(prefix, "share", "tofu", "specs")]
    try:
        from . import _paths  # written by the build (tools/tofu-export)
        dirs.append(_paths.SOURCE_SPECS_DIR)
    except ImportError:
        pass
    # a source checkout: tools/tofu-export/tofu_export -> specs/
    dirs.append(os.path.join(prefix, "specs"))
    return dirs


def default_specs_dir() -> Optional[str]:
    """The standard library's directory, or None if none is found."""
    for d in _candidate_dirs():
        if glob.glob(os.path.join(d, "*.tdl")):
            return d
    return None


class Library:
    """The op type names of the loaded spec files."""

    def __init__(self, files: Iterable[str], where: str):
        self.files = list(files)
        self.where = where  # for messages: the directory or the files
        self.names: Set[str] = set()
        for path in self.files:
            try:
                with open(path, encoding="utf-8") as f:
                    self.names |= op_names(f.read())
            except OSError as e:
                raise UsageError(f"cannot read spec file '{path}': "
                                 f"{e.strerror}")

    def has(self, op_type: str) -> bool:
        return op_type in self.names


def load(spec_files: List[str], no_default: bool) -> Optional[Library]:
    """The library of `--spec` files plus the standard one; None when there
    is neither (then nothing is checked or decomposed)."""
    files, where = [], []
    if not no_default:
        d = default_specs_dir()
        if d is not None:
            files += sorted(glob.glob(os.path.join(d, "*.tdl")))
            where.append(d)
    for f in spec_files:
        if not os.path.isfile(f):
            raise UsageError(f"no such spec file '{f}'")
        files.append(f)
        where.append(f)
    if not files:
        return None
    return Library(files, ", ".join(where))
