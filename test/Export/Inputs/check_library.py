"""Compares the op names tofu-export reads from a spec directory
(tofu_export.library) with those tdlc reports (`--emit=summary
--format=json`). usage: check_library.py TOFU_EXPORT_DIR SPECS_DIR JSON"""

import glob
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
from tofu_export import library  # noqa: E402

files = sorted(glob.glob(os.path.join(sys.argv[2], "*.tdl")))
ours = library.Library(files, sys.argv[2]).names
with open(sys.argv[3]) as f:
    theirs = {op["name"] for op in json.load(f)["operators"]}
if ours != theirs:
    print(f"differ: only tofu-export {sorted(ours - theirs)[:10]}, "
          f"only tdlc {sorted(theirs - ours)[:10]}")
    sys.exit(1)
print(f"same {len(ours)} op names")
