"""Executes tofu-graphs written by tofu-export with PyTorch's CPU kernels and
compares what the step produces (the loss, every parameter's gradient, every
new parameter and optimizer state) with an eager PyTorch training step of the
same model on the same values. This checks that a graph's types, inputs (in
order, with None optionals and unread tensors left out), params and roles
describe the step exactly.

usage: run_graph.py TOFU_EXPORT_DIR -- MODEL [OPTIONS] [-- MODEL [OPTIONS]]...
The replay itself is tofu_export.replay: each op is run as the ATen op named
by its `aten` field, its arguments rebuilt from the naming rules.
Prints one line per model: `MODEL: N ops ran, M outputs match` or the first
mismatches; exits 1 on any mismatch.
"""

import sys

sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402

from tofu_export import replay  # noqa: E402


def run_model(argv):
    doc, values, expected = replay.replay(argv)
    got = replay.step_results(doc, values)
    problems = [key for key in expected
                if key not in got or not torch.allclose(
                    got[key], expected[key].detach(), rtol=1e-4, atol=1e-5)]
    name = " ".join(argv)
    if problems:
        print(f"{name}: {len(problems)} mismatches, e.g. {problems[:4]}")
        return False
    print(f"{name}: {len(doc['ops'])} ops ran, {len(expected)} outputs match")
    return True


def main():
    groups, cur = [], None
    for a in sys.argv[2:]:
        if a == "--":
            cur = []
            groups.append(cur)
        else:
            cur.append(a)
    ok = all([run_model(g) for g in groups])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
