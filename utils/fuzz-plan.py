#!/usr/bin/env python3
"""Mutation fuzzing of the plan reader and of tofu-run's inputs.

For each GRAPH.json and worker count it writes a valid plan with tofu-plan,
then makes mutants of one of five kinds and runs the tools on each:

  plan       the plan JSON mutated structurally (wrong types, missing and
             extra fields, bad regions, wrong counts, huge and negative
             numbers, wrong worker counts, compact `steps` layouts of
             tensors, a `search` or `graph` gone bad,
             bytes of the text): `tofu-plan --verify` and `tofu-run`;
             a third of them are "repaired" first (their numbers set to
             the cost model's, as tofu-run's refusal gives them, and their
             mutations kept to other valid steps and covering regions), so
             that they reach the lowering and the executor
  graph      the graph JSON given with --graph, mutated the same way
  npy        a valid --input .npy of a graph input, mutated (truncated,
             a bad magic, version or header, wrong shape or dtype, data
             too short or long), or a bad NAME=FILE
  flags      tofu-run's flags with bad values (--steps, --seed, --timeout,
             --tolerance, --inject-failure, --kernels, --backend, ...)
  reference  a --reference file (from --save-reference), mutated

Every run must exit 0, 1 or 2 (tofu-run also 3 with a mutated --check,
but not a repaired plan run with --check-repaired), within the
time limit, without a sanitizer report on stderr; the first mutant that
does not is saved (with --save) and reported, and the script exits 1.

    fuzz-plan.py --tofu-plan BIN --tofu-run BIN GRAPH.json... [--workers 1,2,4]
                 [--count N | --minutes M] [--seed S] [--timeout T]
                 [--save DIR] [--kinds plan,graph,npy,flags,reference]
"""
import argparse
import copy
import json
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

KINDS = ["plan", "graph", "npy", "flags", "reference"]

# Values of the wrong type, out of range or at the edges of int64.
ODD_VALUES = [None, True, False, "", "x", "split:i", -1, 0, 1, 2, 3, 7,
              65536, 65537, 2**31, 2**32 + 1, 2**53 + 1, 2**63 - 1, 2**63,
              2**64, -2**63, -2**63 - 1, 1.5, -0.0, 1e308, -1e308, [], [[]],
              [0], [0, 1], [[0, 1]], [[-1, 2]], [[1, 0]], {}, {"region": None},
              {"a": 1}, "replicate", "reduce:", "split:", ":", "split:i:j"]


class Failure(Exception):
    pass


# ---------------------------------------------------------------- JSON trees

def paths_of(value, prefix=()):
    """Every path into a JSON value (lists of keys and indices)."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths_of(child, prefix + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from paths_of(child, prefix + (i,))


def get_at(value, path):
    for key in path:
        value = value[key]
    return value


def set_at(root, path, new):
    if not path:
        return new
    get_at(root, path[:-1])[path[-1]] = new
    return root


def odd_number(rng, n):
    return rng.choice([n + 1, n - 1, -n, 2 * n, n + 2**32, -1, 0, 2**63 - 1,
                       2**63, -2**63, float(n) + 0.5, str(n), None])


def mutate_tree(root, rng):
    """One generic structural mutation of a JSON document."""
    paths = list(paths_of(root))
    path = rng.choice(paths)
    target = get_at(root, path)
    choice = rng.randrange(8)
    if choice == 0 and path:  # delete a field or an element
        parent = get_at(root, path[:-1])
        del parent[path[-1]]
        return root
    if choice == 1:  # a value of another type or out of range
        return set_at(root, path, copy.deepcopy(rng.choice(ODD_VALUES)))
    if choice == 2 and isinstance(target, (int, float)) and \
            not isinstance(target, bool):
        return set_at(root, path, odd_number(rng, int(target)))
    if choice == 3 and isinstance(target, list) and target:  # duplicate
        i = rng.randrange(len(target))
        target.insert(rng.randrange(len(target) + 1), copy.deepcopy(target[i]))
        return root
    if choice == 4 and isinstance(target, list) and len(target) > 1:
        i, j = rng.randrange(len(target)), rng.randrange(len(target))
        target[i], target[j] = target[j], target[i]
        return root
    if choice == 5 and isinstance(target, list):  # truncate
        del target[rng.randrange(len(target) + 1):]
        return root
    if choice == 6 and isinstance(target, dict):  # an extra field
        target[rng.choice(["extra", "steps", "region", "workers", "name",
                           "shape", "levels"])] = copy.deepcopy(
                               rng.choice(ODD_VALUES))
        return root
    # Copy one value over another of the document.
    other = copy.deepcopy(get_at(root, rng.choice(paths)))
    return set_at(root, path, other)


def mutate_bytes(data, rng):
    """Byte-level damage to a serialized document."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randint(0, len(data))
        choice = rng.randrange(4)
        if choice == 0:
            del data[pos:pos + rng.randint(1, 16)]
        elif choice == 1:
            data[pos:pos] = rng.choice([b"{", b"}", b"[", b"]", b",", b"\"",
                                        b"-", b"9" * 30, b"\x00", b"\xff",
                                        b"1e999", b"null"])
        elif choice == 2:
            data[pos:pos] = data[pos:pos + rng.randint(1, 40)]
        else:
            del data[pos:]
    return bytes(data)


# ------------------------------------------------------------ plan mutations

def plan_mutation(plan, graph, rng):
    """One plan-aware structural mutation (the numbers are left as they are)."""
    k = plan.get("workers", 1)
    ops, tensors = plan.get("ops", []), plan.get("tensors", [])
    choice = rng.randrange(13)
    if choice == 0:
        plan["workers"] = rng.choice([k + 1, k - 1, 0, -1, 2 * k, 65537,
                                      2**31, 2**63 - 1, str(k), 1.0 * k])
    elif choice == 1:
        plan["levels"] = rng.choice([[], [k], [1], [0], [-2], [k, k],
                                     [2] * 20, [2**20], [2**21], [3],
                                     list(reversed(plan.get("levels", [])))])
    elif choice == 2 and ops:  # wrong step counts, unknown variables
        op = rng.choice(ops)
        steps = op.get("steps", [])
        op["steps"] = rng.choice([
            steps[:-1], steps + ["replicate"], steps * 2, [],
            "".join(map(str, steps)), ["split:zz"] * len(steps),
            ["reduce:" + s.split(":")[-1] if isinstance(s, str) else s
             for s in steps],
            [s.replace(":", "") if isinstance(s, str) else s for s in steps],
            [None] * len(steps), [["split:i"]] * len(steps)])
    elif choice == 3 and ops:  # ops renamed, reordered, dropped, duplicated
        i, j = rng.randrange(len(ops)), rng.randrange(len(ops))
        action = rng.randrange(4)
        if action == 0:
            ops[i]["name"] = rng.choice([ops[j].get("name"), "", "nope", 1])
        elif action == 1:
            ops[i], ops[j] = ops[j], ops[i]
        elif action == 2:
            del ops[i]
        else:
            ops.insert(i, copy.deepcopy(ops[j]))
    elif choice == 4 and tensors:  # bad regions
        tensor = rng.choice(tensors)
        workers = tensor.get("workers", [])
        if workers and isinstance(workers[0], dict):
            w = rng.choice(workers)
            region = w.get("region")
            if isinstance(region, list) and region and \
                    isinstance(region[0], list):
                d = rng.randrange(len(region))
                lo, hi = region[d][0], region[d][1]
                region[d] = rng.choice([
                    [hi, lo], [lo - 1, hi], [lo, hi + 1], [-5, hi],
                    [lo, 2**62], [-2**63, 2**63 - 1], [lo], [lo, hi, hi],
                    [lo, lo], [0, 0], [str(lo), hi], [lo, 1.5]])
                if rng.randrange(4) == 0:
                    region.append([0, rng.choice([1, 2, 2**40])])
                elif rng.randrange(4) == 0:
                    region.pop()
            else:
                w["region"] = rng.choice([[], None, [[0, 1]], [[0, 2**62]]])
    elif choice == 5 and tensors:  # wrong worker counts per tensor
        tensor = rng.choice(tensors)
        workers = tensor.get("workers", [])
        tensor["workers"] = rng.choice([workers[:-1], workers + workers[:1],
                                        [], workers * 3])
    elif choice == 6 and tensors:  # tensors renamed, reordered, dropped
        i, j = rng.randrange(len(tensors)), rng.randrange(len(tensors))
        if rng.randrange(2):
            tensors[i], tensors[j] = tensors[j], tensors[i]
        else:
            tensors[i]["name"] = tensors[j].get("name")
    elif choice == 7:  # the numbers
        key = rng.choice(["comm_bytes", "resident_bytes_per_worker",
                          "peak_bytes_per_worker"])
        value = plan.get(key)
        if isinstance(value, list) and value and rng.randrange(2):
            i = rng.randrange(len(value))
            if isinstance(value[i], int):
                value[i] = odd_number(rng, value[i])
        elif isinstance(value, list):
            plan[key] = rng.choice([value[:-1], value + value, [], [-1] * k,
                                    [2**63 - 1] * k])
        elif isinstance(value, int):
            plan[key] = odd_number(rng, value)
    elif choice == 8:  # the search record
        search = plan.setdefault("search", {"kind": "recursive",
                                            "exact": False,
                                            "factorings": [[2]],
                                            "approximations": []})
        if isinstance(search, dict):
            field = rng.choice(["kind", "exact", "factorings",
                                "approximations"])
            search[field] = copy.deepcopy(rng.choice(
                ODD_VALUES + [[[1]], [[2**21]], [[-2]], [[2, "x"]],
                              [{"kind": 1}], [{"kind": "k"}],
                              [{"kind": "k", "message": "m"}]]))
    elif choice == 9:  # the graph field
        plan["graph"] = rng.choice(["", "/", "nope.json", ".", "/dev/null",
                                    "/nonexistent/g.json", 7, None])
    elif choice == 10:  # format and version
        key = rng.choice(["format", "version"])
        plan[key] = rng.choice(["tofu-graph", "tofu-plan", 0, 2, 1.0, None])
    elif choice == 11 and tensors:  # compact layouts gone bad
        tensor = rng.choice(tensors)
        levels = plan.get("levels", [])
        n = len(levels) if isinstance(levels, list) else 1
        rank = len(tensor_shape(graph, tensor))
        step = lambda: rng.choice(  # noqa: E731
            ["replicate", f"split:{rng.randrange(rank + 2)}", "split:254",
             "split:255", "split:-1", "split:", "split:x", "reduce:0", "", 3,
             None])
        tensor["steps"] = [step() for _ in range(max(0, n + rng.choice(
            [0, 0, -1, 1])))]
        if rng.randrange(2):
            tensor.pop("workers", None)
    else:
        return mutate_tree(plan, rng)
    return plan


def tensor_shape(graph, tensor):
    for t in graph["tensors"]:
        if t["name"] == tensor.get("name"):
            return t["shape"]
    return []


def repairable_mutation(plan, graph, rng):
    """A mutation the plan checker may accept: another valid-looking step,
    a region made whole, two workers' regions swapped."""
    ops, tensors = plan["ops"], plan["tensors"]
    pool = sorted({s for op in ops for s in op["steps"]} | {"replicate"})
    shapes = {t["name"]: t["shape"] for t in graph["tensors"]}
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(4)
        if any("workers" not in t for t in tensors):
            choice = rng.randrange(2)  # keep to the steps of ops
        if choice == 0 and ops and plan["levels"]:
            op = rng.choice(ops)
            op["steps"][rng.randrange(len(op["steps"]))] = rng.choice(pool)
        elif choice == 1 and len(ops) > 1:
            a, b = rng.sample(range(len(ops)), 2)
            ops[a]["steps"], ops[b]["steps"] = ops[b]["steps"], ops[a]["steps"]
        elif choice == 2 and tensors:
            tensor = rng.choice(tensors)
            shape = shapes.get(tensor["name"], [])
            if rng.randrange(2):
                whole = [[0, n] for n in shape]
                rng.choice(tensor["workers"])["region"] = whole
            else:  # a compact layout instead of the regions
                tensor["steps"] = [rng.choice(
                    ["replicate"] + [f"split:{d}" for d in range(len(shape))])
                    for _ in plan["levels"]]
                del tensor["workers"]
        elif tensors:
            tensor = rng.choice(tensors)
            workers = tensor["workers"]
            if len(workers) > 1:
                a, b = rng.sample(range(len(workers)), 2)
                workers[a], workers[b] = workers[b], workers[a]
    return plan


NUMBER_FIXES = [
    (re.compile(r"\bcomm_bytes is (-?\d+), but the cost model gives (-?\d+)"),
     lambda plan, m: plan.__setitem__("comm_bytes", int(m.group(2)))),
    (re.compile(r"\b(resident|peak)_bytes_per_worker\[(\d+)\] is (-?\d+), "
                r"but the cost model gives (-?\d+)"),
     lambda plan, m: plan[m.group(1) + "_bytes_per_worker"].__setitem__(
         int(m.group(2)), int(m.group(4)))),
    (re.compile(r"\b(resident|peak)_bytes_per_worker has (\d+) entries for "
                r"(\d+) workers"),
     lambda plan, m: plan.__setitem__(
         m.group(1) + "_bytes_per_worker", [0] * int(m.group(3)))),
]


STEP_FIX = re.compile(r"op '([^']*)': step '([^']*)' is not a strategy of "
                      r"the operator \(it has: ([^)]*)\)")


def repair_numbers(plan, stderr, rng):
    """Sets the numbers tofu-run's refusal names to the cost model's, or a
    step it names to one of the operator's; false when it names none."""
    m = STEP_FIX.search(stderr)
    if m:
        for op in plan["ops"]:
            if op["name"] == m.group(1) and m.group(2) in op["steps"]:
                valid = [s.strip() for s in m.group(3).split(",")]
                op["steps"][op["steps"].index(m.group(2))] = rng.choice(valid)
                return True
        return False
    fixed = False
    for pattern, fix in NUMBER_FIXES:
        for m in pattern.finditer(stderr):
            fix(plan, m)
            fixed = True
    return fixed


# ------------------------------------------------------------- npy mutations

NPY_DESCR = {"f32": "<f4", "f64": "<f8", "i64": "<i8", "i32": "<i4",
             "i8": "|i1", "bool": "|b1"}
NPY_SIZE = {"<f4": 4, "<f8": 8, "<i8": 8, "<i4": 4, "|i1": 1, "|b1": 1}


def npy_bytes(descr, shape, data, header_extra="", version=1, fortran="False"):
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    header = (f"{{'descr': '{descr}', 'fortran_order': {fortran}, "
              f"'shape': ({dims}), {header_extra}}}")
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    raw = header.encode()
    size = struct.pack("<H", len(raw)) if version == 1 else \
        struct.pack("<I", len(raw))
    return b"\x93NUMPY" + bytes([version, 0]) + size + raw + data


def npy_mutant(tensor, rng):
    """A --input file for `tensor` (a graph JSON tensor), most often bad."""
    descr = NPY_DESCR.get(tensor["dtype"], "<f4")
    shape = list(tensor["shape"])
    count = 1
    for n in shape:
        count *= n
    data = bytes(rng.randrange(256) for _ in range(min(count, 4096) *
                                                   NPY_SIZE[descr]))
    if count > 4096:
        data = data * (count // 4096) + data[:(count % 4096) * NPY_SIZE[descr]]
    valid = npy_bytes(descr, shape, data)
    choice = rng.randrange(11)
    if choice == 0:
        return valid
    if choice == 1:  # truncated anywhere, often inside the header
        return valid[:rng.randrange(rng.choice([16, 80, len(valid)]))]
    if choice == 2:
        return b"\x93NUMPZ" + valid[6:]
    if choice == 3:  # another version; a header length past the end
        return valid[:6] + bytes([rng.choice([0, 2, 3, 255]), 0]) + valid[8:] \
            if rng.randrange(2) else valid[:8] + b"\xff\xff" + valid[10:]
    if choice == 4:
        return npy_bytes(rng.choice(list(NPY_SIZE) + ["<c8", ">f4", "<f2",
                                                      "O", "", "'"]),
                         shape, data)
    if choice == 5:  # wrong shapes (data to match, or not)
        bad = rng.choice([[], [0], [-1] + shape[1:], shape + [1], shape[:-1],
                          [2**62] + shape[1:], [2**31, 2**31, 2**31],
                          [n + 1 for n in shape], ["a"], [1.5]])
        return npy_bytes(descr, bad, data)
    if choice == 6:
        return npy_bytes(descr, shape, data, fortran=rng.choice(
            ["True", "1", "", "'False'"]))
    if choice == 7:  # data short or long
        return npy_bytes(descr, shape, data[:-1] if rng.randrange(2) and data
                         else data + b"\x00" * rng.randint(1, 9))
    if choice == 8:  # header text damaged
        header_end = valid.index(b"\n")
        return mutate_bytes(valid[:header_end], rng) + valid[header_end:]
    if choice == 9:
        return npy_bytes(descr, shape, data, version=2)
    return npy_bytes(descr, shape, data, header_extra=rng.choice(
        ["'shape': (1,), ", "'descr': '<f8', ", "'x': (", "'fortran_order':"]))


# ------------------------------------------------------------ flag mutations

def flag_mutants(rng, ops, names):
    """A few of tofu-run's flags, most with bad values."""
    choices = [
        ["--steps", rng.choice(["0", "-1", "abc", "2", "4294967296", "1e3",
                                ""])],
        ["--seed", rng.choice(["-1", "abc", "18446744073709551616", "5"])],
        ["--timeout", rng.choice(["0", "-1", "nan", "inf", "1e-9", "1e300",
                                  "abc", "30"])],
        ["--tolerance", rng.choice(["nan", "-1", "inf", "x", "0", "1e-300"])],
        ["--inject-failure", rng.choice(
            ["abc", "1", "1:", ":1", "0:0", "99:0", f"0:{ops}",
             f"0:{max(ops - 1, 0)}", "-1:0", "0:-1", "4294967296:0",
             "1:2:3"])],
        ["--kernels", rng.choice(["generated", "evaluator", "bogus", ""])],
        ["--backend", rng.choice(["cpu", "cuda", "cuda-host", "gpu"])],
        ["--transport", rng.choice(["threads", "bogus", ""])],
        ["--check"],
        ["--reference", rng.choice(["/nonexistent/ref", "/dev/null", "."])],
        ["--save-reference", rng.choice(["/nonexistent/dir/ref", "."])],
        ["--report", rng.choice(["/nonexistent/dir/r.json", "."])],
        ["--evaluator-op", rng.choice(names + ["nope", ""])],
        ["--spec", rng.choice(["/nonexistent.tdl", "/dev/null", "."])],
        ["--input", rng.choice(["noequals", "=x.npy", "nope=/dev/null",
                                f"{rng.choice(names)}=/dev/null"])],
        ["--bogus-flag"],
        ["--graph", rng.choice(["/nonexistent.json", "/dev/null", "."])],
        ["extra-positional.json"],
    ]
    picked = rng.sample(choices, rng.randint(1, 3))
    return [arg for flag in picked for arg in flag]


# ----------------------------------------------------------------- the runs

class Fuzzer:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.rng = random.Random(args.seed)
        self.exits = {}
        self.kinds = {k: 0 for k in KINDS}
        self.runs = 0
        self.reached_executor = 0
        self.repaired_ran = 0
        self.failures = []
        self.env = dict(os.environ)
        self.env.setdefault("TOFU_KERNEL_CACHE",
                            os.path.join(tmp, "kernel-cache"))
        # A sanitizer report must not hide behind exit status 1.
        self.env.setdefault("ASAN_OPTIONS", "exitcode=86:detect_leaks=0")
        self.env.setdefault("UBSAN_OPTIONS",
                            "print_stacktrace=1:halt_on_error=1:exitcode=87")

    def run(self, kind, argv, allowed, mutant_files):
        self.runs += 1
        # In a session of its own, so that a hang ends with its children
        # (the kernel compiler).
        proc = self.start(argv)
        try:
            out, err = proc.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            self.fail(kind, argv, f"no exit within {self.args.timeout} s",
                      "", mutant_files)
        done = subprocess.CompletedProcess(argv, proc.returncode, out, err)
        stderr = done.stderr.decode("utf-8", "replace")
        if "Sanitizer" in stderr or "runtime error:" in stderr:
            self.fail(kind, argv, "sanitizer report", stderr, mutant_files)
        if done.returncode not in allowed:
            status = f"exit status {done.returncode}" if done.returncode >= 0 \
                else f"killed by {signal.Signals(-done.returncode).name}"
            self.fail(kind, argv, status, stderr, mutant_files)
        self.exits[done.returncode] = self.exits.get(done.returncode, 0) + 1
        if self.args.verbose:
            first = stderr.strip().splitlines()[:1] or [""]
            print(f"{kind}: exit {done.returncode}: {first[0][:160]}")
        stdout = done.stdout.decode("utf-8", "replace")
        if stdout.startswith("step ") or "bytes per step" in stdout:
            self.reached_executor += 1
        return done.returncode, stderr

    def start(self, argv):
        # A tool being relinked (by a build beside this run) cannot be
        # started for a moment.
        for attempt in range(5):
            try:
                return subprocess.Popen(argv, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=self.env,
                                        cwd=self.tmp, start_new_session=True)
            except OSError as error:
                if attempt == 4:
                    raise Failure(f"FAIL: cannot run {argv[0]}: {error}")
                time.sleep(2)

    def fail(self, kind, argv, problem, stderr, mutant_files):
        where = self.tmp
        if self.args.save:
            where = self.args.save
            if self.args.keep_going:
                where = os.path.join(where, f"failure-{len(self.failures)}")
            os.makedirs(where, exist_ok=True)
            for path in mutant_files:
                target = os.path.join(where, os.path.basename(path))
                with open(path, "rb") as src, open(target, "wb") as dst:
                    dst.write(src.read())
        lines = stderr.strip().splitlines()[-12:]
        files = ", ".join(os.path.basename(p) for p in mutant_files)
        kept = f"  files in {where}: {files}" if self.args.save else \
            f"  files: {files} (not kept: pass --save DIR)"
        raise Failure(f"FAIL: {kind} mutant {sum(self.kinds.values())}: "
                      f"{problem}\n  command: {' '.join(argv)}\n{kept}"
                      + "".join("\n  | " + line for line in lines))

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    def run_tool(self, plan_path, graph_path, extra=(), files=(), kind="plan",
                 allowed=None):
        argv = [self.args.tofu_run, plan_path, "--graph", graph_path,
                "--steps", "1", "--timeout", "20"] + list(extra)
        if allowed is None:
            allowed = {0, 1, 2, 3} if "--check" in extra else {0, 1, 2}
        return self.run(kind, argv, allowed, list(files))

    def verify(self, plan_path, graph_path, files):
        return self.run("plan", [self.args.tofu_plan, "--verify", plan_path,
                                 graph_path], {0, 1, 2}, files)

    # One mutant of each kind.
    def plan_mutant(self, seed):
        plan = copy.deepcopy(seed["plan"])
        if self.rng.randrange(3) == 0:
            return self.repaired_plan_mutant(seed, plan)
        for _ in range(self.rng.randint(1, 3)):
            plan = plan_mutation(plan, seed["graph"], self.rng) \
                if isinstance(plan, dict) else mutate_tree(plan, self.rng)
        text = json.dumps(plan)
        data = mutate_bytes(text.encode(), self.rng) if self.rng.randrange(6) == 0 \
            else text.encode()
        path = self.write("mutant.plan.json", data)
        self.verify(path, seed["graph_path"], [path])
        self.run_tool(path, seed["graph_path"], files=[path])

    def repaired_plan_mutant(self, seed, plan):
        plan = repairable_mutation(plan, seed["graph"], self.rng)
        path = self.write("mutant.plan.json", json.dumps(plan))
        self.verify(path, seed["graph_path"], [path])
        for _ in range(2 * plan["workers"] + 8):
            # A plan the checks accept must compute what the unpartitioned
            # graph does: --check's exit 3 is a failure here.
            status, stderr = self.run_tool(
                path, seed["graph_path"],
                ["--check"] if self.args.check_repaired else [], [path],
                allowed={0, 1, 2})
            if status == 0:
                self.repaired_ran += 1
            if status != 1 or not repair_numbers(plan, stderr, self.rng):
                return
            path = self.write("mutant.plan.json", json.dumps(plan))

    def graph_mutant(self, seed):
        graph = copy.deepcopy(seed["graph"])
        for _ in range(self.rng.randint(1, 3)):
            graph = mutate_tree(graph, self.rng) if isinstance(graph, dict) \
                else graph
        text = json.dumps(graph)
        data = mutate_bytes(text.encode(), self.rng) if self.rng.randrange(6) == 0 \
            else text.encode()
        path = self.write("mutant.graph.json", data)
        self.verify(seed["plan_path"], path, [path])
        self.run_tool(seed["plan_path"], path, files=[path], kind="graph")

    def npy_mutant(self, seed):
        inputs = [t for t in seed["graph"]["tensors"]
                  if t.get("role") in ("input", "param")]
        tensor = self.rng.choice(inputs)
        path = self.write("mutant.npy", npy_mutant(tensor, self.rng))
        name = tensor["name"] if self.rng.randrange(8) else \
            self.rng.choice([t["name"] for t in seed["graph"]["tensors"]])
        self.run_tool(seed["plan_path"], seed["graph_path"],
                      ["--input", f"{name}={path}"], [path], kind="npy")

    def flags_mutant(self, seed):
        names = [op["name"] for op in seed["plan"]["ops"]]
        extra = flag_mutants(self.rng, len(names), names)
        self.run_tool(seed["plan_path"], seed["graph_path"], extra,
                      kind="flags")

    def reference_mutant(self, seed):
        ref = seed.get("reference")
        if ref is None:
            ref_path = os.path.join(self.tmp, f"seed-{seed['id']}.ref")
            self.run_tool(seed["plan_path"], seed["graph_path"],
                          ["--save-reference", ref_path], kind="reference")
            with open(ref_path, "rb") as f:
                ref = seed["reference"] = f.read()
        data = mutate_bytes(ref, self.rng) if self.rng.randrange(2) \
            else self._damage_sizes(ref)
        path = self.write("mutant.ref", data)
        self.run_tool(seed["plan_path"], seed["graph_path"],
                      ["--check", "--reference", path], [path],
                      kind="reference")

    def _damage_sizes(self, ref):
        """A reference whose type byte or size field is corrupted."""
        data = bytearray(ref)
        header_end = data.index(b"\n", data.index(b"\n") + 1) + 1
        name_end = data.index(b"\n", header_end)
        field = name_end + 1
        if self.rng.randrange(2):
            data[field] = self.rng.choice([6, 7, 255])
        else:
            data[field + 1:field + 9] = struct.pack(
                "<Q", self.rng.choice([0, 1, 2**63, 2**64 - 1,
                                       len(data), len(data) * 2]))
        return bytes(data)

    def make_seeds(self):
        seeds = []
        for graph_path in self.args.graphs:
            with open(graph_path) as f:
                graph = json.load(f)
            for k in self.args.workers:
                plan_path = os.path.join(self.tmp, f"seed-{len(seeds)}.plan.json")
                subprocess.run([self.args.tofu_plan, graph_path, "--workers",
                                str(k), "--quiet", "-o", plan_path],
                               check=True, env=self.env)
                with open(plan_path) as f:
                    plan = json.load(f)
                seed = {"id": len(seeds), "graph": graph,
                        "graph_path": os.path.abspath(graph_path),
                        "plan": plan, "plan_path": plan_path}
                # The seed itself runs (and compiles the kernels once).
                status, _ = self.run_tool(plan_path, seed["graph_path"],
                                          kind="seed")
                if status != 0:
                    raise Failure(f"FAIL: the seed plan {plan_path} of "
                                  f"{graph_path} does not run")
                seeds.append(seed)
        return seeds

    def fuzz(self):
        seeds = self.make_seeds()
        kinds = self.args.kinds
        deadline = time.time() + self.args.minutes * 60 \
            if self.args.minutes else None
        n = 0
        last_progress = time.time()
        while (n < self.args.count) if deadline is None else \
                (time.time() < deadline):
            kind = kinds[n % len(kinds)]
            seed = self.rng.choice(seeds)
            try:
                getattr(self, kind + "_mutant")(seed)
            except Failure as failure:
                if not self.args.keep_going:
                    raise
                print(failure, flush=True)
                self.failures.append(str(failure))
            self.kinds[kind] += 1
            n += 1
            if self.args.progress and \
                    time.time() - last_progress > self.args.progress * 60:
                last_progress = time.time()
                print(f"fuzz-plan: {n} mutants so far: {self.summary()}",
                      flush=True)
        return n

    def summary(self):
        kinds = ", ".join(f"{self.kinds[k]} {k}" for k in self.args.kinds)
        exits = ", ".join(f"{self.exits.get(s, 0)} exit {s}"
                          for s in (0, 1, 2, 3))
        return (f"({kinds}): {self.runs} runs ({exits}; "
                f"{self.reached_executor} reached the executor, "
                f"{self.repaired_ran} of them repaired plan mutants)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="+", metavar="GRAPH.json")
    parser.add_argument("--tofu-plan", required=True)
    parser.add_argument("--tofu-run", required=True)
    parser.add_argument("--workers", default="1,2,4",
                        type=lambda s: [int(k) for k in s.split(",")])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--minutes", type=float, default=None,
                        help="run this long instead of --count mutants")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--kinds", default=",".join(KINDS),
                        type=lambda s: s.split(","))
    parser.add_argument("--check-repaired", action="store_true",
                        help="run repaired plan mutants with --check, and "
                             "fail on results beyond its tolerance")
    parser.add_argument("--keep-going", action="store_true",
                        help="report each failure and go on (with --save, "
                             "each failure's files in DIR/failure-N)")
    parser.add_argument("--progress", type=float, default=None,
                        metavar="MINUTES",
                        help="print the counts so far every MINUTES")
    parser.add_argument("--verbose", action="store_true",
                        help="print each run's exit status and first line")
    parser.add_argument("--save", default=None,
                        help="directory to keep a failing mutant in")
    args = parser.parse_args()
    for kind in args.kinds:
        if kind not in KINDS:
            parser.error(f"unknown kind '{kind}' (known: {', '.join(KINDS)})")

    with tempfile.TemporaryDirectory() as tmp:
        fuzzer = Fuzzer(args, tmp)
        try:
            n = fuzzer.fuzz()
        except Failure as failure:
            print(failure)
            return 1
    if fuzzer.failures:
        print(f"fuzz-plan: {n} mutants: {len(fuzzer.failures)} failures")
        return 1
    print(f"fuzz-plan: {n} mutants {fuzzer.summary()}, "
          f"0 crashes, sanitizer reports or hangs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
