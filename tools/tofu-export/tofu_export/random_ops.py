"""This file implements the random ops' seed policy (docs/Export.md,
"Random ops"): after conversion, every random op of the graph (the types of
specs/random.tdl: dropout's `bernoulli` mask, `bernoulli_probs`, `uniform`,
`normal`, `normal_Tensor_float`, `normal_float_Tensor`,
`normal_Tensor_Tensor`, `exponential`, `randint`) draws from the counter-based
generator of TDL's random builtins, keyed by (seed, stream, step, element):

- `seed` (int param): the graph's seed, `--seed` (default 0), in
  [0, 2^32); the metadata records it as `random.seed`;
- `stream` (int param): the op's number among the graph's random ops, in
  graph order (0, 1, ...), so that no two ops draw the same values;
- `step`: the graph's step counter, the scalar f32 state tensor `rng.step`
  read as the op's first input; the step increments it
  (`update.rng.step.add_Scalar`, which `updates` it), so each step draws
  new values, and the runtime carries it across steps like Adam's
  `adam.step`;
- `size_0`, ... (int params): the output's shape, from which the spec
  computes each element's row-major index.

A graph without random ops is left as it is.
"""

from typing import Dict, List

RANDOM_TYPES = ("bernoulli", "bernoulli_probs", "uniform", "normal",
                "normal_Tensor_float", "normal_float_Tensor",
                "normal_Tensor_Tensor", "exponential", "randint")
STEP = "rng.step"
GENERATOR = "philox4x32-10"


class RandomOpsError(Exception):
    pass


def seed_random_ops(doc: dict, seed: int) -> bool:
    """Give the random ops of `doc` their seed, stream, shape and step
    input, and add the step counter and its update. Returns whether the
    graph has random ops."""
    ops = [op for op in doc["ops"] if op["type"] in RANDOM_TYPES]
    if not ops:
        return False
    names = {t["name"] for t in doc["tensors"]}
    update = "update.rng.step.add_Scalar"
    for taken in (STEP, update):
        if taken in names:
            raise RandomOpsError(f"a tensor is named '{taken}', the name of "
                                 "the random ops' step counter")
    shapes: Dict[str, List[int]] = {t["name"]: t["shape"]
                                    for t in doc["tensors"]}
    for stream, op in enumerate(ops):
        params = {k: v for k, v in op["params"].items()
                  if not k.startswith("size_")}
        params["seed"] = seed
        params["stream"] = stream
        for k, extent in enumerate(shapes[op["outputs"][0]]):
            params[f"size_{k}"] = extent
        op["params"] = params
        op["inputs"] = [STEP] + op["inputs"]
    doc["tensors"].append({"name": STEP, "shape": [], "dtype": "f32",
                           "role": "state"})
    doc["tensors"].append({"name": update, "shape": [], "dtype": "f32",
                           "role": "output", "updates": STEP})
    doc["ops"].append({"name": update, "type": "add_Scalar",
                       "inputs": [STEP], "outputs": [update],
                       "params": {"other": 1, "alpha": 1},
                       "group": "update.rng.step", "aten": "add.Scalar"})
    return True


def metadata(seed: int) -> dict:
    """The graph metadata's `random` entry: the seed policy."""
    return {"generator": GENERATOR, "seed": seed, "step": STEP,
            "key": "(seed, stream)",
            "counter": "(element index, step)"}
