#!/usr/bin/env python3
"""Checks that the operator library covers tofu graphs.

For every op of every graph given, resolves the op's type against the
library's overloads the way the Instantiator does (first overload in source
order whose param NAME SET equals the op's params, whose tensor count equals
the op's input count, and whose `where` guard holds for the op's input
shapes and params) and reports:
  - op types with no spec at all,
  - instances (type, params, input shapes) that no overload accepts,
and, with --tdlc BUILD/bin/tdlc (a tdlc that has --coverage), leaves the
instantiation and output-shape check to tdlc.

This script reads the .tdl files with a light scanner (signatures and
guards only), so it runs without a build; `tdlc --coverage` is the full
check. Exit status: 0 when everything resolves, 1 otherwise.

usage: check-spec-coverage.py [--specs DIR] [-v] GRAPH.json...
"""

import argparse
import collections
import glob
import json
import os
import re
import sys

SIG = re.compile(
    r'\bop\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:<([^>]*)>)?\s*\(([^)]*)\)\s*(?:where\s+(.*?))?=\s*lambda',
    re.S)


def strip_comments(text):
    return re.sub(r'#[^\n]*', '', text)


class Overload:
    def __init__(self, name, params, tensors, guard, where):
        self.name = name
        self.params = params
        self.tensors = tensors
        self.guard = guard
        self.where = where

    def guard_holds(self, shapes, values):
        if not self.guard:
            return True
        env = dict(values)
        tensor_index = {t: i for i, t in enumerate(self.tensors)}
        expr = self.guard
        expr = re.sub(r'\brank\(\s*(\w+)\s*\)',
                      lambda m: str(len(shapes[tensor_index[m.group(1)]])), expr)

        def _dim(t, k):
            shape = shapes[tensor_index[t]]
            if k >= len(shape):
                raise IndexError('dim(%s, %d) of a rank-%d tensor' % (t, k, len(shape)))
            return shape[k]
        env['_dim'] = _dim
        expr = re.sub(r'\bdim\(\s*(\w+)\s*,\s*(\d+)\s*\)', r'_dim("\1", \2)', expr)
        expr = expr.replace('&&', ' and ').replace('||', ' or ')
        expr = re.sub(r'!(?!=)', ' not ', expr)
        expr = re.sub(r'(?<![<>=!])/(?!/)', '//', expr)
        try:
            return bool(eval(expr, {'__builtins__': {}}, env))
        except IndexError:
            return False


def load_library(spec_dir):
    lib = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(spec_dir, '*.tdl'))):
        text = strip_comments(open(path).read())
        for m in SIG.finditer(text):
            name, params, tensors, guard = m.groups()
            pnames = []
            for p in (params or '').split(','):
                p = p.strip()
                if p:
                    pnames.append(p.split(':')[0].strip())
            tnames = [t.strip() for t in tensors.split(',') if t.strip()]
            line = text.count('\n', 0, m.start()) + 1
            lib[name].append(Overload(name, frozenset(pnames), tnames,
                                      (guard or '').strip(),
                                      '%s:%d' % (os.path.basename(path), line)))
    return lib


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('graphs', nargs='+')
    ap.add_argument('--specs', default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'specs'))
    ap.add_argument('-v', '--verbose', action='store_true')
    args = ap.parse_args()

    lib = load_library(args.specs)
    types_seen = set()
    missing_types = collections.Counter()
    unresolved = {}
    instances = set()
    used = collections.Counter()
    for path in args.graphs:
        graph = json.load(open(path))
        tensors = {t['name']: t for t in graph['tensors']}
        for op in graph['ops']:
            ty = op['type']
            types_seen.add(ty)
            shapes = [tensors[i]['shape'] for i in op['inputs']]
            params = op.get('params', {})
            key = (ty, json.dumps(params, sort_keys=True),
                   json.dumps(shapes))
            if key in instances:
                continue
            instances.add(key)
            if ty not in lib:
                missing_types[ty] += 1
                continue
            values = {k: (0 if isinstance(v, str) else v) for k, v in params.items()}
            tried = []
            for ov in lib[ty]:
                if ov.params != frozenset(params):
                    tried.append('%s: params {%s}' % (ov.where, ', '.join(sorted(ov.params))))
                    continue
                if len(ov.tensors) != len(shapes):
                    tried.append('%s: %d tensors' % (ov.where, len(ov.tensors)))
                    continue
                if not ov.guard_holds(shapes, values):
                    tried.append('%s: guard false' % ov.where)
                    continue
                used[(ty, ov.where)] += 1
                break
            else:
                unresolved[key] = (os.path.basename(path), op['name'], tried)

    n_types = len(types_seen)
    ok_types = n_types - len(missing_types) - len({k[0] for k in unresolved} - set(missing_types))
    print('%d graphs, %d op types, %d distinct instances' % (len(args.graphs), n_types, len(instances)))
    for ty in sorted(missing_types):
        print('no spec: %s (%d instances)' % (ty, missing_types[ty]))
    for key, (g, name, tried) in sorted(unresolved.items()):
        print('no overload: %s params %s inputs %s (%s: %s)' % (key[0], key[1], key[2], g, name))
        for t in tried:
            print('    tried %s' % t)
    if args.verbose:
        for (ty, where), n in sorted(used.items()):
            print('used %s %s: %d instances' % (ty, where, n))
    n_inst = len(instances)
    bad = sum(missing_types.values()) + len(unresolved)
    print('op types resolved: %d/%d; instances resolved: %d/%d' % (ok_types, n_types, n_inst - bad, n_inst))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
