#!/usr/bin/python3
"""The model catalogue: measures, for every trainable layer class of
torch.nn, every model class of torchaudio.models and torchvision's
segmentation, video, optical-flow models and detection backbones (the
entries of utils/catalogue_entries, each at a small size), whether the
toolchain handles its training step end to end:

  exported   tofu-export captures the step with every trainable parameter
             (utils/catalogue_entries/model.py:Entry, batch 2)
  validated  tofu-graph accepts the graph (every op has a spec overload)
  covered    `tdlc --coverage`: every distinct op instance resolves
  matched    the graph replayed with PyTorch's kernels (tofu_export.replay)
             gives the eager step's loss, gradients and updated parameters
             (rtol 1e-4, atol 1e-5); the eager forward and the replay start
             from the same random seed, so that a dropout mask drawn in the
             same order is the same (entries marked `random` draw random
             numbers)
  planned    (--plan) tofu-plan plans the graph for K = 2, 3, 4 and 8
  ran        (--run) tofu-run --check runs the K = 2 plan on threads and
             agrees with the unpartitioned step

It prints one line per entry, the counts per family, and writes a markdown
report (counts per family, the op types still missing and the entries
that need them, one row per entry) between the `catalogue` markers of
docs/OperatorLibrary.md, or to --output; --missing writes the plain list
of missing op types and export errors.

    catalogue.py [--entries NAME,...] [--families F,...] [--jobs N]
                 [--timeout S] [--plan] [--run] [--output FILE]
                 [--missing FILE] [--keep DIR] [--bin DIR]

Exit status: 0 when every entry passed every stage measured, 1 otherwise,
2 on bad usage. A full run (about 180 entries) takes about 15 minutes with
--jobs 2 on 2 cores (docs/OperatorLibrary.md).
"""

import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(SRC, "docs", "OperatorLibrary.md")
BEGIN = "<!-- catalogue:begin -->"
END = "<!-- catalogue:end -->"
MODEL_FILE = os.path.join(SRC, "utils", "catalogue_entries", "model.py")
PLAN_WORKERS = (2, 3, 4, 8)
# The random state both the eager step's forward and the replay start from.
STEP_SEED = 1
# Integers of the inputs (token ids, class ids) are drawn below this.
INT_RANGE = "5"

sys.path.insert(0, os.path.join(SRC, "utils"))


def _model_coverage():
    """utils/model-coverage.py as a module (its coverage reader)."""
    path = os.path.join(SRC, "utils", "model-coverage.py")
    spec = importlib.util.spec_from_file_location("model_coverage", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export_argv(name, case, graph):
    """tofu-export's arguments for entry `name`. The graph is written even
    when ops have no spec (--allow-missing-specs): tdlc --coverage then
    names them, and the replay still checks the step."""
    inputs = [a for spec in case.inputs for a in ("--input", spec)]
    return [f"{MODEL_FILE}:Entry", "--model-kwargs",
            json.dumps({"name": name}), *inputs, "--batch", "2",
            "--classes", INT_RANGE, "--vocab", INT_RANGE,
            "--allow-missing-specs", *case.exporter_options, "-o", graph]


# --- one entry, in its own process (--one) ------------------------------

def _export(argv):
    """Export in this process; (doc or None, error)."""
    from tofu_export import cli, writer
    from tofu_export.errors import ModelError, UsageError
    args = cli.make_parser().parse_args(argv)
    try:
        doc, _ = cli.export(args)
        writer.write(doc, args.output)
    except (ModelError, UsageError) as e:
        return None, str(e)
    except Exception as e:  # an exporter bug: the entry fails, not the run
        return None, f"tofu-export crashed: {type(e).__name__}: {e}"
    return doc, None


def _match(argv, doc):
    """Replays `doc` against an eager step: None when everything matches,
    else what did not."""
    import torch
    from tofu_export import replay
    args, setup = replay.real_setup(argv)
    # The eager forward and the replay start from the same random state,
    # so that a step's random draws (dropout masks) are the same in both
    # when the graph draws them in the eager step's order.
    # The random ops replay PyTorch's draws (replay.DRAWS), not the
    # graph's own, which eager PyTorch does not draw (docs/Export.md,
    # "Random ops"); tofu-run's stage checks the graph's.
    functional_call = replay.functional_call

    def seeded_call(*a, **k):
        torch.manual_seed(STEP_SEED)
        return functional_call(*a, **k)
    replay.functional_call = seeded_call
    try:
        values, expected = replay.eager_step(args, setup, doc)
    finally:
        replay.functional_call = functional_call
    torch.manual_seed(STEP_SEED)
    shape_of = {t["name"]: (t["shape"], replay.DTYPES[t["dtype"]])
                for t in doc["tensors"]}
    values.update({t["name"]: torch.tensor(t["value"], dtype=replay.DTYPES[
        t["dtype"]]).reshape(t["shape"]) for t in doc["tensors"]
        if "value" in t})
    draws, replay.DRAWS = replay.DRAWS, "torch"
    try:
        with torch.no_grad():
            for op in doc["ops"]:
                values[op["outputs"][0]] = replay.run_op(op, values,
                                                         shape_of)
    finally:
        replay.DRAWS = draws
    got = replay.step_results(doc, values)
    bad = [k for k in expected if k not in got or not torch.allclose(
        got[k], expected[k].detach(), rtol=1e-4, atol=1e-5)]
    if bad:
        return f"{len(bad)} of {len(expected)} outputs differ, e.g. " + \
            ", ".join(bad[:3])
    return None


def short_error(text, limit=300):
    """An error without PyTorch's list of dispatch keys, at most `limit`
    characters."""
    text = re.sub(r" This could be because the operator doesn't exist.*",
                  "", text.strip(), flags=re.S)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _first_line(text):
    lines = [ln for ln in text.strip().splitlines() if "error" in ln]
    return (lines or text.strip().splitlines() or [""])[0].strip()


def _plan_and_run(row, graph, bindir, workdir, safe, run, kernels):
    row["planned"] = []
    for k in PLAN_WORKERS:
        plan = os.path.join(workdir, f"{safe}.plan{k}.json")
        proc = subprocess.run(
            [os.path.join(bindir, "tofu-plan"), graph, "--workers", str(k),
             "--quiet", "-o", plan], capture_output=True, text=True)
        if proc.returncode != 0:
            row["plan_error"] = f"K={k}: {_first_line(proc.stderr)}"
            break
        row["planned"].append(k)
    if run and 2 in row["planned"]:
        proc = subprocess.run(
            [os.path.join(bindir, "tofu-run"),
             os.path.join(workdir, f"{safe}.plan2.json"), "--graph", graph,
             "--check", f"--kernels={kernels}"],
            capture_output=True, text=True)
        row["ran"] = proc.returncode == 0
        if not row["ran"]:
            row["run_error"] = _first_line(proc.stdout + proc.stderr)


def measure_one(name, bindir, workdir, plan, run, kernels):
    """Every stage for entry `name`; the row as a dict."""
    sys.path.insert(0, os.path.join(SRC, "tools", "tofu-export"))
    from catalogue_entries import case as entry_case
    case = entry_case(name)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    graph = os.path.join(workdir, f"{safe}.json")
    argv = export_argv(name, case, graph)
    row = {"entry": name, "random": case.random}
    t0 = time.perf_counter()
    doc, error = _export(argv)
    row["export_s"] = time.perf_counter() - t0
    if doc is None:
        row["error"] = error
        return row
    row["ops"] = len(doc["ops"])
    check = subprocess.run([os.path.join(bindir, "tofu-graph"), graph],
                           capture_output=True, text=True)
    row["validated"] = check.returncode == 0
    mc = _model_coverage()
    row["resolved"], row["instances"], row["missing"] = mc.coverage(
        os.path.join(bindir, "tdlc"), graph)
    row["check_s"] = time.perf_counter() - t0 - row["export_s"]
    try:
        row["mismatch"] = _match(argv, doc)
    except Exception as e:  # a replay that fails is a mismatch
        row["mismatch"] = f"replay failed: {str(e).splitlines()[0]}"
    row["replay_s"] = time.perf_counter() - t0 - row["export_s"] - \
        row["check_s"]
    if (plan or run) and row["validated"]:
        _plan_and_run(row, graph, bindir, workdir, safe, run, kernels)
    return row


# --- the whole catalogue ------------------------------------------------

def run_entry(name, args, bindir, workdir):
    """measure_one in a fresh process, with a timeout."""
    cmd = [sys.executable, os.path.abspath(__file__), "--one", name,
           "--bin", bindir, "--keep", workdir,
           f"--kernels={args.kernels}"] + \
        (["--plan"] if args.plan else []) + (["--run"] if args.run else [])
    # Its own process group, so that a timeout also ends the tofu-plan or
    # tofu-run it waits for.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"entry": name, "error": f"timed out after {args.timeout} s",
                "failed": "measuring"}
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        last = (stderr or stdout).strip().splitlines() or [""]
        return {"entry": name, "error": "the measuring process failed: " +
                last[-1], "failed": "measuring"}
    return json.loads(lines[-1])


def covered(r):
    return "error" not in r and r["instances"] is not None and \
        r["resolved"] == r["instances"]


def matched(r):
    return "error" not in r and r.get("mismatch") is None


def passed(r, args):
    ok = "error" not in r and r["validated"] and covered(r) and \
        (matched(r) or r.get("random"))
    if args.plan or args.run:
        ok = ok and r.get("planned") == list(PLAN_WORKERS)
    if args.run:
        ok = ok and r.get("ran")
    return ok


def status_line(r, args):
    if "error" in r:
        return f"{r['entry']}: {r.get('failed', 'export')} failed: " + \
            short_error(r["error"])
    parts = [f"{r['ops']} ops", "validated" if r["validated"] else
             "not validated", f"covered {r['resolved']}/{r['instances']}"]
    parts.append("matched" if r["mismatch"] is None else
                 f"mismatch: {r['mismatch']}")
    if r.get("random"):
        parts.append("random")
    if "planned" in r:
        parts.append("planned K=" + ",".join(map(str, r["planned"])) if
                     r["planned"] else "not planned")
        if "plan_error" in r:
            parts.append(f"plan failed at {r['plan_error']}")
    if "ran" in r:
        parts.append("run --check passed" if r["ran"] else
                     f"run failed: {r['run_error']}")
    if r.get("missing"):
        parts.append("missing " + ", ".join(r["missing"]))
    return f"{r['entry']}: " + "; ".join(parts)


def family_of(r):
    return r["entry"].split(".", 1)[0]


def family_counts(rows, args):
    """[(family, entries, exported, validated, covered, matched, random,
    planned, ran)] and a total row."""
    fams = []
    for r in rows:
        if family_of(r) not in fams:
            fams.append(family_of(r))
    out = []
    for fam in fams + ["total"]:
        rs = [r for r in rows if fam == "total" or family_of(r) == fam]
        out.append((
            fam, len(rs), sum("error" not in r for r in rs),
            sum(bool(r.get("validated")) for r in rs),
            sum(covered(r) for r in rs), sum(matched(r) for r in rs),
            sum(bool(r.get("random")) for r in rs),
            sum(r.get("planned") == list(PLAN_WORKERS) for r in rs),
            sum(bool(r.get("ran")) for r in rs)))
    return out


def missing_ops(rows):
    """op type -> entries whose graph has unresolved instances of it."""
    need = {}
    for r in rows:
        for t in r.get("missing") or []:
            need.setdefault(t, []).append(r["entry"])
    return sorted(need.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def report(rows, args, elapsed):
    took = "" if elapsed is None else \
        f", {elapsed:.0f} s with --jobs {args.jobs}"
    lines = [
        f"Measured {datetime.date.today().isoformat()} by "
        f"`utils/catalogue.py` ({len(rows)} entries{took}). *exported*: tofu-export captures the step "
        "with every trainable parameter; *validated*: tofu-graph accepts "
        "it; *covered*: every distinct op instance resolves to a spec "
        "overload; *matched*: the graph replayed with PyTorch's kernels "
        "gives the eager step's loss, gradients and updates (*random*: "
        "the step draws random numbers; eager step and replay start from "
        "the same seed, so they match when the graph draws them in the "
        "eager order)" +
        ("; *planned*: tofu-plan plans K = 2, 3, 4 and 8" if args.plan or
         args.run else "") +
        ("; *ran*: tofu-run --check passes at K = 2 (threads)" if args.run
         else "") + ".", ""]
    head = "| family | entries | exported | validated | covered | " \
           "matched | random |"
    rule = "|---|---|---|---|---|---|---|"
    if args.plan or args.run:
        head, rule = head + " planned |", rule + "---|"
    if args.run:
        head, rule = head + " ran |", rule + "---|"
    lines += [head, rule]
    for c in family_counts(rows, args):
        cells = list(map(str, c[:7]))
        if args.plan or args.run:
            cells.append(str(c[7]))
        if args.run:
            cells.append(str(c[8]))
        lines.append("| " + " | ".join(cells) + " |")
    need = missing_ops(rows)
    lines += ["", "Op types not covered, by the entries that need them: " +
              ("; ".join(f"`{t}` ({len(es)}: " + ", ".join(
                  e.split(".", 1)[1] for e in es) + ")" for t, es in need)
               or "none") + ".", ""]
    lines += ["| entry | ops | exported | validated | covered | matched | "
              "missing op types or error |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            err = short_error(r["error"], 160).replace("|", "/")
            lines.append(f"| {r['entry']} | - | no | - | - | - | {err} |")
            continue
        pct = "-" if not r["instances"] else \
            f"{100.0 * r['resolved'] / r['instances']:.0f}%"
        match = "yes" if r["mismatch"] is None else "no"
        if r.get("random"):
            match += " (random)"
        note = ", ".join(f"`{t}`" for t in r["missing"])
        if r["mismatch"] is not None and not note:
            note = r["mismatch"]
        if r.get("plan_error"):
            note += f" plan: {r['plan_error']}"
        if r.get("run_error"):
            note += f" run: {r['run_error']}"
        note = note.replace("|", "/")
        lines.append(f"| {r['entry']} | {r['ops']} | yes | "
                     f"{'yes' if r['validated'] else 'no'} | {pct} | "
                     f"{match} | {note} |")
    return "\n".join(lines) + "\n"


def excluded_report():
    from catalogue_entries import audio, nn_layers, vision
    ex = nn_layers.excluded()
    lazy = sorted(n for n, why in ex.items() if why == nn_layers.LAZY_REASON)
    lines = ["Left out of the catalogue, and why:", ""]
    lines += [f"- torch.nn.{n}: {why}" for n, why in
              sorted(ex.items()) if why != nn_layers.LAZY_REASON]
    lines.append(f"- torch.nn.{{{', '.join(lazy)}}}: "
                 f"{nn_layers.LAZY_REASON}")
    lines += [f"- torchaudio.models.{n}: {why}"
              for n, why in audio.EXCLUDED.items()]
    lines += [f"- torchvision {n}: {why}"
              for n, why in vision.EXCLUDED.items()]
    return "\n".join(lines) + "\n"


def missing_note(rows, total):
    """The plain-text list for --missing."""
    now = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    out = [f"# Catalogue gaps ({now} UTC, utils/catalogue.py; {len(rows)} "
           f"of {total} entries measured)", "",
           "Re-measure entries: utils/catalogue.py --entries "
           "FAMILY.NAME,... --output - (utils/catalogue.py --list names "
           "them).", "",
           "## Op types not covered (tdlc --coverage), by entries needing "
           "them", ""]
    for t, es in missing_ops(rows):
        out.append(f"- {t} ({len(es)}): {', '.join(es)}")
    out += ["", "## Entries that fail to export", ""]
    out += [f"- {r['entry']}: {short_error(r['error'])}" for r in rows
            if "error" in r]
    out += ["", "## Entries whose replay does not match eager PyTorch", ""]
    out += [f"- {r['entry']}: {r['mismatch']}" for r in rows
            if "error" not in r and r.get("mismatch")]
    out += ["", "## Validation failures with every op covered", ""]
    out += [f"- {r['entry']}" for r in rows if "error" not in r and
            not r["validated"] and covered(r)]
    out += ["", "## Planning / running failures", ""]
    out += [f"- {r['entry']}: plan {r.get('plan_error', 'ok')}; run "
            f"{r.get('run_error', 'ok')}" for r in rows
            if r.get("plan_error") or r.get("run_error")]
    return "\n".join(out) + "\n"


def merge_results(path, rows):
    """The rows saved in `path` (JSON) with `rows` replacing those of the
    same entries, in catalogue order; saved back to `path`."""
    from catalogue_entries import FAMILIES, family_cases
    saved = {}
    if os.path.exists(path):
        with open(path) as f:
            saved = {r["entry"]: r for r in json.load(f)}
    saved.update({r["entry"]: r for r in rows})
    order = [f"{fam}.{n}" for fam in FAMILIES for n in family_cases(fam)]
    merged = [saved[n] for n in order if n in saved]
    with open(path, "w") as f:
        json.dump(merged, f, indent=1)
    return merged


def write_doc(text, path):
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{path} has no '{BEGIN}' ... '{END}' markers")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)


class UsageError(Exception):
    """Bad command line: exit status 2."""


def select(args):
    from catalogue_entries import FAMILIES, case, family_cases
    if args.entries:
        names = args.entries.split(",")
        unknown = []
        for n in names:
            try:
                case(n)
            except KeyError:
                unknown.append(n)
        if unknown:
            raise UsageError(f"no entry {', '.join(map(repr, unknown))} "
                             "(see --list)")
        return names
    wanted = args.families.split(",") if args.families else list(FAMILIES)
    unknown = [f for f in wanted if f not in FAMILIES]
    if unknown:
        raise UsageError(f"no family {', '.join(map(repr, unknown))} "
                         f"(families: {', '.join(FAMILIES)})")
    return [f"{f}.{n}" for f in wanted for n in family_cases(f)]


def uncatalogued():
    from catalogue_entries import audio, nn_layers, nn_losses
    return [f"torch.nn.{n}" for n in nn_layers.uncatalogued(
        nn_losses.CASES)] + \
        [f"torchaudio.models.{n}" for n in audio.uncatalogued()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", default="",
                   help="only these entries (comma-separated FAMILY.NAME)")
    p.add_argument("--families", default="",
                   help="only these families (comma-separated)")
    p.add_argument("--list", action="store_true",
                   help="list the entries and exit")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=int, default=600,
                   help="seconds per entry, all stages (default 600)")
    p.add_argument("--plan", action="store_true",
                   help="also plan each graph for K = 2, 3, 4, 8")
    p.add_argument("--run", action="store_true",
                   help="also run tofu-run --check on the K = 2 plan "
                        "(implies --plan)")
    p.add_argument("--kernels", default="generated",
                   choices=["generated", "evaluator"],
                   help="tofu-run's kernels for --run (default generated)")
    p.add_argument("--output", help="write the report here (`-`: stdout) "
                                    "instead of docs/OperatorLibrary.md")
    p.add_argument("--missing", help="also write the missing op types and "
                                     "export errors to this file")
    p.add_argument("--results", metavar="FILE.json",
                   help="merge with the rows saved in FILE.json (entries "
                        "measured now replace theirs), report the union "
                        "and save it back: re-measure a few entries of a "
                        "full run")
    p.add_argument("--report-only", action="store_true",
                   help="measure nothing: report the rows of --results "
                        "(those of the selected entries)")
    p.add_argument("--keep", help="keep graphs and plans in this directory")
    p.add_argument("--bin", help="directory of tofu-graph, tdlc, "
                                 "tofu-plan, tofu-run (default: where tdlc "
                                 "is on PATH, else build/bin)")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.jobs < 1 or args.timeout < 1:
        p.error("--jobs and --timeout must be positive")
    args.plan = args.plan or args.run
    on_path = shutil.which("tdlc")
    bindir = args.bin or (os.path.dirname(on_path) if on_path else
                          os.path.join(SRC, "build", "bin"))
    if args.one:
        os.makedirs(args.keep, exist_ok=True)
        print(json.dumps(measure_one(args.one, bindir, args.keep, args.plan,
                                     args.run, args.kernels)))
        return 0
    try:
        names = select(args)
    except UsageError as e:
        print(f"catalogue.py: error: {e}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(names))
        return 0
    for tool in ("tofu-graph", "tdlc", "tofu-plan", "tofu-run"):
        if not os.path.exists(os.path.join(bindir, tool)):
            p.error(f"no {tool} in {bindir} (build first, or --bin DIR)")
    if args.report_only:
        if not args.results or not os.path.exists(args.results):
            p.error("--report-only needs --results FILE.json of a run")
        rows = merge_results(args.results, [])
        wanted = set(names)
        rows = [r for r in rows if r["entry"] in wanted]
        args.plan = any("planned" in r for r in rows)
        args.run = any("ran" in r for r in rows)
        return finish(rows, args, None)
    workdir = args.keep or tempfile.mkdtemp(prefix="tofu-catalogue-")
    os.makedirs(workdir, exist_ok=True)
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_entry, n, args, bindir, workdir)
                   for n in names]
        rows = []
        for f in futures:
            rows.append(f.result())
            print(status_line(rows[-1], args), flush=True)
            # kept current during a long run
            if args.results:
                merge_results(args.results, rows[-1:])
            if args.missing:
                with open(args.missing, "w") as out:
                    out.write(missing_note(rows, len(names)))
    elapsed = time.perf_counter() - t0
    if args.results:
        rows = merge_results(args.results, rows)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return finish(rows, args, elapsed)


def finish(rows, args, elapsed):
    """Prints the counts, writes the report and --missing; the exit
    status."""
    missing_classes = uncatalogued()
    print("uncatalogued classes: " + (", ".join(missing_classes) or
                                      "none"))
    for c in family_counts(rows, args):
        print(f"{c[0]}: {c[1]} entries, {c[2]} exported, {c[3]} validated, "
              f"{c[4]} covered, {c[5]} matched, {c[6]} random" +
              (f", {c[7]} planned" if args.plan or args.run else "") +
              (f", {c[8]} ran" if args.run else ""))
    text = report(rows, args, elapsed) + "\n" + excluded_report()
    if args.output == "-":
        print(text, end="")
    elif args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        write_doc(text, DOC)
    if args.missing:
        with open(args.missing, "w") as f:
            f.write(missing_note(rows, len(rows)))
    ok = all(passed(r, args) for r in rows) and not missing_classes
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
