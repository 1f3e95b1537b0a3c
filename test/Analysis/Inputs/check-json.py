# Checks tdlc's concrete strategies JSON (on stdin) against an expected
# document: every key of the expected one must be present with an equal
# value (extra keys in the output are allowed, as the contract says).
# Usage: check-json.py EXPECTED.json
import json
import sys


def check(got, want, path):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            sys.exit("%s: expected an object, got %r" % (path, got))
        for key, value in want.items():
            if key not in got:
                sys.exit("%s: missing key %r" % (path, key))
            check(got[key], value, path + "." + key)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            sys.exit("%s: expected %r, got %r" % (path, want, got))
        for i, (g, w) in enumerate(zip(got, want)):
            check(g, w, "%s[%d]" % (path, i))
    elif got != want:
        sys.exit("%s: expected %r, got %r" % (path, want, got))


with open(sys.argv[1]) as f:
    expected = json.load(f)
check(json.load(sys.stdin), expected, "$")
print("json ok")
