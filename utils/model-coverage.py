#!/usr/bin/python3
"""Measures how much of the model zoo the toolchain handles end to end.

For every torchvision classification model (torchvision.models.list_models
of the classification module: 80 in torchvision 0.14), PyTorch's own
sequence modules (tofu-export's torch:KIND models) and the built-in LSTM LM
and GPT, this script

  1. exports one training step with tofu-export (batch 2, a small image:
     64, or what the model needs) and times it;
  2. validates the graph with tofu-graph (exit status 0: every op has a
     spec and an overload and the shapes agree);
  3. runs `tdlc specs/*.tdl --coverage GRAPH.json` and reads, per op type,
     how many distinct instances resolve to an overload.

It writes a markdown table (model, ops, export time, validated, covered %
of distinct instances, the op types with unresolved instances) between the
`model-coverage` markers of docs/OperatorLibrary.md, or to --output.

    model-coverage.py [--bin DIR] [--models NAME,...] [--jobs N]
                      [--keep DIR] [--output FILE] [--timeout S]

Run it from anywhere with Debian's /usr/bin/python3 after scripts/build.sh;
a full run exports about 90 models (a few seconds each on meta tensors).
"""

import argparse
import concurrent.futures
import datetime
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(SRC, "docs", "OperatorLibrary.md")
BEGIN = "<!-- model-coverage:begin -->"
END = "<!-- model-coverage:end -->"

# Options beyond the defaults (--batch 2 --image 64 --classes 10) that a
# model needs: minimum input sizes, fixed image sizes made smaller.
NEEDS = {
    "inception_v3": ["--image", "299"],  # its auxiliary classifier
    "vit_b_16": ["--image", "32", "--model-kwargs", '{"image_size": 32}'],
    "vit_b_32": ["--image", "32", "--model-kwargs", '{"image_size": 32}'],
    "vit_l_16": ["--image", "32", "--model-kwargs", '{"image_size": 32}'],
    "vit_l_32": ["--image", "32", "--model-kwargs", '{"image_size": 32}'],
    "vit_h_14": ["--image", "28", "--model-kwargs", '{"image_size": 28}'],
    "maxvit_t": ["--image", "224"],
}

OTHER_MODELS = [
    ("torch:rnn:2:64", ["--steps", "8"]),
    ("torch:lstm:2:64", ["--steps", "8"]),
    ("torch:gru:2:64", ["--steps", "8"]),
    ("torch:mha:64:4", ["--steps", "8"]),
    ("torch:encoder:2:64:4", ["--steps", "8"]),
    ("torch:decoder:2:64:4", ["--steps", "8"]),
    ("rnn:2:64", ["--steps", "8", "--vocab", "100"]),
    ("gpt:2:64:4:16", ["--vocab", "100"]),
]


def models(only):
    """(model, extra options) of every model to measure."""
    import torchvision.models as tvm
    names = tvm.list_models(module=tvm)
    result = [(f"torchvision:{n}", NEEDS.get(n, ["--image", "64"]))
              for n in names] + OTHER_MODELS
    if only:
        # Known models by name (`resnet18` or `torchvision:resnet18`), any
        # other tofu-export model spec as given (`wresnet:50:2`).
        known = {}
        for m, o in result:
            known[m] = known[m.split(":", 1)[-1]] = (m, o)
        result = [known.get(m, (m, [])) for m in only.split(",")]
    return result


def first_error(text):
    lines = [ln for ln in text.splitlines() if "error" in ln.lower()]
    line = (lines or text.strip().splitlines() or [""])[0]
    return re.sub(r"^tofu-export: error: ", "", line).strip()


TYPE_LINE = re.compile(r"^type (\S+): (.*)$")
SUMMARY = re.compile(r"op types (\d+)/(\d+) covered; instances (\d+)/(\d+) "
                     r"resolved")


def family(op_type):
    """An op type without its output index and tensor-list length:
    `cat_n12` -> `cat_nK`, `split_Tensor__1` -> `split_Tensor`."""
    return re.sub(r"_n\d+", "_nK", re.sub(r"__\d+$", "", op_type))


def coverage(tdlc, graph):
    """(resolved, instances, [op types with unresolved instances])."""
    specs = sorted(glob.glob(os.path.join(SRC, "specs", "*.tdl")))
    proc = subprocess.run([tdlc, *specs, "--coverage", graph],
                          capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    m = SUMMARY.search(out)
    if m is None:
        return None, None, [first_error(out)]
    missing = []
    for line in out.splitlines():
        t = TYPE_LINE.match(line)
        if t and re.search(r"no overload|error|mismatch", t.group(2)) and \
                family(t.group(1)) not in missing:
            missing.append(family(t.group(1)))
    return int(m.group(3)), int(m.group(4)), missing


def measure(model, extra, bindir, workdir, timeout):
    """One row of the table, as a dict."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", model)
    graph = os.path.join(workdir, f"{safe}.json")
    # --allow-missing-specs: the table measures coverage itself (tdlc).
    cmd = [os.path.join(bindir, "tofu-export"), model, "--batch", "2",
           "--classes", "10", "--allow-missing-specs", *extra, "-o", graph]
    row = {"model": model, "options": " ".join(extra)}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        row.update(error=f"export timed out after {timeout} s")
        return row
    row["export_s"] = time.perf_counter() - t0
    if proc.returncode != 0:
        row["error"] = first_error(proc.stderr)
        return row
    import json
    with open(graph) as f:
        row["ops"] = len(json.load(f)["ops"])
    check = subprocess.run([os.path.join(bindir, "tofu-graph"), graph],
                           capture_output=True, text=True)
    row["validated"] = check.returncode == 0
    row["resolved"], row["instances"], row["missing"] = coverage(
        os.path.join(bindir, "tdlc"), graph)
    return row


def table(rows):
    lines = ["| model | options | ops | export | validated | covered | "
             "op types not covered (`_nK`: any list length) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        opts = f"`{r['options']}`" if r["options"] else ""
        if "error" in r:
            lines.append(f"| {r['model']} | {opts} | - | - | no | - | "
                         f"export failed: {r['error'].replace('|', '/')} |")
            continue
        pct = "-" if not r["instances"] else \
            f"{100.0 * r['resolved'] / r['instances']:.0f}%"
        missing = ", ".join(r["missing"]) or "-"
        lines.append(f"| {r['model']} | {opts} | {r['ops']} | "
                     f"{r['export_s']:.1f} s | "
                     f"{'yes' if r['validated'] else 'no'} | {pct} | "
                     f"{missing} |")
    return lines


def summary(rows):
    tv = [r for r in rows if r["model"].startswith("torchvision:")]
    exported = [r for r in tv if "error" not in r]
    valid = [r for r in tv if r.get("validated")]
    others = [r for r in rows if not r["model"].startswith("torchvision:")]
    missing = {}
    for r in rows:
        for t in r.get("missing", []):
            missing[t] = missing.get(t, 0) + 1
    common = sorted(missing.items(), key=lambda kv: (-kv[1], kv[0]))
    return [
        f"torchvision classification models: {len(exported)}/{len(tv)} "
        f"export, {len(valid)}/{len(tv)} validate with tofu-graph; other "
        f"models: {sum('error' not in r for r in others)}/{len(others)} "
        f"export, {sum(bool(r.get('validated')) for r in others)}/"
        f"{len(others)} validate.",
        "",
        "Op types not covered, by the number of models that need them: " +
        (", ".join(f"{t} ({n})" for t, n in common) or "none") + "."]


def write_doc(text, path):
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc:
        raise SystemExit(f"{path} has no '{BEGIN}' marker")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin",
                   help="directory of tofu-export, tofu-graph and tdlc "
                        "(default: where tdlc is on PATH, else build/bin)")
    p.add_argument("--models", default="",
                   help="only these models (comma-separated names; other "
                        "tofu-export model specs are exported as given)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--keep", help="keep the graphs in this directory")
    p.add_argument("--output", help="write the table here instead of "
                                    "docs/OperatorLibrary.md")
    p.add_argument("--timeout", type=int, default=600,
                   help="seconds per export (default 600)")
    args = p.parse_args()
    on_path = shutil.which("tdlc")
    bindir = args.bin or (os.path.dirname(on_path) if on_path else
                          os.path.join(SRC, "build", "bin"))
    workdir = args.keep or tempfile.mkdtemp(prefix="tofu-coverage-")
    os.makedirs(workdir, exist_ok=True)
    todo = models(args.models)
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(measure, m, o, bindir, workdir, args.timeout)
                   for m, o in todo]
        rows = []
        for f in futures:
            rows.append(f.result())
            r = rows[-1]
            print(f"{r['model']}: " + (f"export failed: {r['error']}"
                  if "error" in r else
                  f"{r['ops']} ops, validated={r['validated']}, "
                  f"covered {r['resolved']}/{r['instances']}"), flush=True)
    elapsed = time.perf_counter() - t0
    text = "\n".join(
        [f"Measured {datetime.date.today().isoformat()} by "
         f"`utils/model-coverage.py` ({len(rows)} models, {elapsed:.0f} s "
         "on this machine). *covered*: distinct op instances (type, params, "
         "shapes) that resolve to a spec overload (`tdlc --coverage`); "
         "*validated*: `tofu-graph` accepts the graph.", ""] +
        summary(rows) + [""] + table(rows)) + "\n"
    for line in summary(rows):
        print(line)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        write_doc(text, DOC)
    return 0


if __name__ == "__main__":
    sys.exit(main())
