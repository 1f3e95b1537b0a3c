"""Replays tofu-graphs written by tofu-export with PyTorch's CPU kernels.

Each op is run as the ATen op named by its `aten` field, its arguments
rebuilt from the naming rules; tensors it does not read get zeros (or None).
The graph inputs get the values of an eager PyTorch training step of the
same model (random inputs, initialized parameters, random optimizer state),
so that a replay yields every tensor of a real step. Shared by
test/Export/Inputs/run_graph.py (which compares a replay with the eager
step) and utils/check-specs-against-torch.py (which checks each op's TDL
spec on the op's actual inputs and outputs).
"""

import contextlib
import re

import torch
from tofu_export.stateless import functional_call

from tofu_export import (cli, models, naming, optim, philox, random_ops, step,
                         torch_fixes)

# PyTorch kernels that compute wrong values get corrected ones (the
# reference of every comparison must be right; see torch_fixes).
torch_fixes.install()

DTYPES = models.DTYPE_NAMES  # tofu-graph dtype -> torch dtype


def list_param(params, name):
    keys = sorted((int(k[len(name) + 1:]), k) for k in params
                  if re.fullmatch(re.escape(name) + r"_\d+", k))
    return [params[k] for _, k in keys] if keys else None


def value_of(v):
    return float(v) if isinstance(v, str) else v


def unread_value(packet, arg, params, out, first):
    """A stand-in for a tensor argument the op does not read: only its
    shape matters to the kernel."""
    if packet.endswith("norm_backward") and arg == "input":
        return torch.zeros_like(first)  # the shape of grad_out
    if packet.startswith("native_layer_norm") and arg in ("weight", "bias"):
        return torch.ones(list_param(params, "normalized_shape"))
    if packet.startswith("native_batch_norm") and arg in (
            "weight", "bias", "running_mean", "running_var"):
        return torch.ones(out.shape[1] if out.dim() > 1 else out.shape[0])
    if packet.startswith("_embedding_bag"):
        # nn.EmbeddingBag's index tensors that the mode does not use: i64
        # stand-ins of the shapes its kernels check (first: grad [B, D])
        if arg == "maximum_indices":
            return torch.zeros(first.shape, dtype=torch.long)
        if arg == "bag_size":
            return torch.zeros(first.shape[0], dtype=torch.long)
        return torch.zeros(0, dtype=torch.long)
    return torch.zeros_like(out)  # e.g. conv backward's input or weight


def string_arg(op, packet, overload, schema, arg):
    """A string argument, from the type name (naming rule 6: a non-default
    value is appended to the name, before the `_no<arg>` suffixes)."""
    base = packet if overload == "default" else f"{packet}_{overload}"
    rest = re.sub(r"__\d+$", "", op["type"])[len(base):]
    for a in schema.arguments:
        rest = rest.replace(f"_no{a.name}", "")
    values = [v for v in re.sub(r"_n\d+$", "", rest).split("_") if v]
    strings = [a.name for a in schema.arguments
               if isinstance(a.type, torch.StringType)]
    if len(values) == len(strings):
        return values[strings.index(arg.name)]
    return arg.default_value if arg.has_default_value() else None


def build_args(op, schema, values, out):
    """Arguments of the ATen call behind `op` (positional, then keyword)."""
    packet, overload = op["aten"].split(".")
    m = re.search(r"__(\d+)$", op["type"])
    k = int(m.group(1)) if m else 0
    entry = naming.reads_entry(packet, overload, op["params"])
    reads = None if entry is None else entry["outputs"][k]
    inputs = iter(op["inputs"])
    params = op["params"]
    args = []
    for a in schema.arguments:
        t = a.type
        optional = isinstance(t, torch.OptionalType)
        inner = t.getElementType() if optional else t
        if isinstance(inner, torch.TensorType):
            if f"_no{a.name}" in op["type"]:
                args.append(None)
            elif reads is not None and a.name not in reads:
                args.append(unread_value(packet, a.name, params, out,
                                         values[op["inputs"][0]]))
            else:
                args.append(values[next(inputs)])
        elif naming._is_tensor_list_type(inner):
            # `_n<count>` in the type (rule 7); Tensor?[] too (index.Tensor)
            count = int(re.search(r"_n(\d+)(?=_|$)", op["type"]).group(1))
            args.append([values[next(inputs)] for _ in range(count)])
        elif isinstance(inner, torch.StringType):
            args.append(string_arg(op, packet, overload, schema, a))
        elif a.name == "output_mask":
            args.append([i == k for i in range(a.N or 3)])  # bool[N]
        elif a.name in ("dtype", "input_dtype"):
            args.append(out.dtype)
        elif a.name in params:
            args.append(value_of(params[a.name]))
        elif list_param(params, a.name) is not None:
            args.append(list_param(params, a.name))
        elif a.has_default_value():
            args.append(a.default_value)
        else:
            args.append(None)
    positional = [v for a, v in zip(schema.arguments, args)
                  if not a.kwarg_only]
    keywords = {a.name: v for a, v in zip(schema.arguments, args)
                if a.kwarg_only}
    return positional, keywords, k


# Whose draws the random ops (dropout's masks, rand, ...) replay: "graph",
# the graph's own Philox draws (tofu_export.philox), which tofu-run and the
# evaluator compute too; or "torch", PyTorch's generator, drawn in graph
# order, which is the eager step's order, so that a replay started from the
# eager step's random state draws the eager masks (utils/catalogue.py's
# comparison with eager PyTorch).
DRAWS = "graph"


def random_op(op, values, out):
    """The value of a random op of specs/random.tdl (see DRAWS); its first
    input is the step counter, a second one bernoulli_probs' probabilities
    or normal_Tensor_float's mean."""
    params = {k: value_of(v) for k, v in op["params"].items()}
    ins = [values[i] for i in op["inputs"]]
    tensors = [x.double().numpy() for x in ins[1:]] + [None, None]
    if DRAWS == "graph" and "seed" in params:
        value = philox.random_op(op["type"], params, float(ins[0]),
                                 tuple(out.shape), tensors[0], tensors[1])
        return torch.from_numpy(value).to(out.dtype)
    tensor = ins[1] if len(ins) > 1 else None
    kind = op["type"]
    if kind == "bernoulli":
        return out.bernoulli_(params["p"])
    if kind == "bernoulli_probs":
        return torch.bernoulli(tensor).to(out.dtype)
    if kind == "uniform":
        return out.uniform_(params["from"], params["to"])
    if kind == "exponential":
        return out.exponential_(params["lambd"])
    if kind == "normal":
        return out.normal_(params["mean"], params["std"])
    if kind == "normal_Tensor_float":
        return torch.normal(tensor, params["std"]).to(out.dtype)
    if kind == "normal_float_Tensor":
        return torch.normal(params["mean"], tensor).to(out.dtype)
    if kind == "normal_Tensor_Tensor":
        return torch.normal(tensor, ins[2]).to(out.dtype)
    return torch.randint(int(params["low"]), int(params["high"]),
                         tuple(out.shape)).to(out.dtype)


def run_op(op, values, shape_of):
    shape, dtype = shape_of[op["outputs"][0]]
    out = torch.empty(shape, dtype=dtype)
    if op["type"] == "full":
        return torch.full(shape, op["params"]["value"], dtype=dtype)
    if op["type"] in random_ops.RANDOM_TYPES:
        return random_op(op, values, out)
    if op["type"].startswith("convolution_backward__2"):
        # The bias gradient reads only grad_output, but the kernel insists
        # on a real weight; it is grad_output summed over all but dim 1.
        g = values[op["inputs"][0]]
        return g.sum(dim=[d for d in range(g.dim()) if d != 1]).to(dtype)
    if op["type"] in ("view", "expand"):
        x = values[op["inputs"][0]]
        return x.reshape(shape) if op["type"] == "view" else x.expand(shape)
    if re.fullmatch(r"nll_loss(2d)?_forward(_noweight)?__1", op["type"]):
        # total_weight: the count (or the summed class weights) of the
        # targets that are not ignored (its unread `self` has no shape to
        # rebuild it from).
        target = values[op["inputs"][0]]
        kept = target != op["params"]["ignore_index"]
        if len(op["inputs"]) == 1:
            return kept.sum().to(dtype)
        weight = values[op["inputs"][1]]
        return weight[target[kept]].sum().to(dtype)
    if re.fullmatch(r"_embedding_bag(_noper_sample_weights)?__[12]",
                    op["type"]):
        return embedding_bag_bags(op, values, dtype)
    if op["type"] in ("mm_transposed", "addmm_transposed"):
        return run_transposed_product(op, values)
    packet, overload = op["aten"].split(".")
    if packet in ("as_strided", "as_strided_scatter") and op["inputs"]:
        # A graph's tensors have no layout: its strides and offset index
        # the contiguous form of the input (tofu_export.strided).
        first = op["inputs"][0]
        values = {**values, first: values[first].contiguous()}
    aten_op = getattr(getattr(torch.ops.aten, packet), overload)
    args, kwargs, k = build_args(op, aten_op._schema, values, out)
    try:
        result = aten_op(*args, **kwargs)
    except (RuntimeError, IndexError) as e:
        raise RuntimeError(f"op {op['name']} ({op['type']}): {e}") from None
    return result[k] if isinstance(result, (tuple, list)) else result


def embedding_bag_bags(op, values, dtype):
    """_embedding_bag's offset2bag (output 1: the bag of each index) and
    bag sizes (output 2), as the mean and max modes' kernels compute them;
    the sum mode's kernel leaves them empty or zero, so the replay computes
    them here for every mode (naming.READS: its backward reads them)."""
    indices, offsets = (values[n] for n in op["inputs"])
    count = indices.shape[0]
    k = torch.arange(count).unsqueeze(1)
    bags = (offsets.unsqueeze(0) <= k).sum(1) - 1
    if op["type"].endswith("__1"):
        return bags.to(dtype)
    kept = indices != op["params"]["padding_idx"]
    return torch.zeros(offsets.shape[0], dtype=dtype).index_add_(
        0, bags, kept.to(dtype))


def run_transposed_product(op, values):
    """mm/addmm with operands read transposed (tofu_export.fold)."""
    args = [values[i] for i in op["inputs"]]
    params = op["params"]
    first = len(args) - 2
    for i, flag in enumerate((params["ta"], params["tb"])):
        if flag:
            args[first + i] = args[first + i].t()
    if op["type"] == "mm_transposed":
        return torch.mm(*args)
    return torch.addmm(*args, beta=value_of(params["beta"]),
                       alpha=value_of(params["alpha"]))


def real_setup(argv):
    """The model of `argv`, built for real on the CPU, with its options."""
    args = cli.make_parser().parse_args(argv)
    # The replay checks what the graph computes, also for ops that have no
    # spec yet: the graph is written anyway (they are listed as warnings).
    args.allow_missing_specs = True
    meta = models.meta
    saved = meta.meta_construction, meta.to_meta
    meta.meta_construction, meta.to_meta = contextlib.nullcontext, lambda m: m
    try:
        setup = models.resolve(args.model, cli._options(args))
    finally:
        meta.meta_construction, meta.to_meta = saved
    return args, setup


def random_like(t, high):
    if t.dtype in (torch.int64, torch.int32):
        return torch.randint(0, high, t.shape, dtype=t.dtype)
    return torch.randn(t.shape, dtype=t.dtype)


def eager_step(args, setup, doc):
    """Values of the graph inputs and the eager step's results by name."""
    torch.manual_seed(0)
    model = setup.module.train()
    ints = min(args.classes, args.vocab)
    values = {n: p.detach().clone() for n, p in model.named_parameters()}
    values.update({n: b.clone() for n, b in model.named_buffers()})
    inputs = [setup.constants[n] if n in setup.constants else
              random_like(t, ints) for n, t in setup.inputs]
    values.update({n: x for (n, _), x in zip(setup.inputs, inputs)})
    loss_kind = doc["metadata"]["loss"]
    target_t = next((t for t in doc["tensors"] if t["name"] == "target"),
                    None)
    if target_t is not None:
        values["target"] = random_like(torch.empty(
            target_t["shape"], dtype=DTYPES[target_t["dtype"]]), ints)
    cfg = cli.optimizer_config(args)
    params = {n: values[n].clone().requires_grad_(True)
              for n, _ in model.named_parameters()}
    state = {}
    for p in params:
        for s in cfg.state_names():
            values[f"{p}.{s}"] = torch.rand_like(params[p])
            state[f"{p}.{s}"] = values[f"{p}.{s}"]
    if cfg.is_adam:
        values[optim.STEP] = state[optim.STEP] = torch.rand(()) * 5
    has_rng = any(t["name"] == random_ops.STEP for t in doc["tensors"])
    if has_rng:  # the random ops' step counter (eager draws its own masks)
        values[random_ops.STEP] = torch.tensor(3.0)
    out = functional_call(model, {**params, **dict(model.named_buffers())},
                          tuple(inputs))
    loss = step.make_loss(loss_kind)(out, values.get("target"))
    grads = torch.autograd.grad(loss, list(params.values()), allow_unused=True)
    expected = {"loss": loss.detach()}
    if has_rng:
        expected[f"new:{random_ops.STEP}"] = values[random_ops.STEP] + 1
    shared, context = optim.begin_step(cfg, state)
    expected.update({f"new:{s}": v for s, v in shared.items()})
    for (n, p), g in zip(params.items(), grads):
        if g is None:
            continue
        expected[f"grad:{n}"] = g
        new_p, new_s = optim.update(cfg, n, p.detach(), g, state, context)
        expected[f"new:{n}"] = new_p
        expected.update({f"new:{s}": v for s, v in new_s.items()})
    return values, expected


def step_results(doc, values):
    """The step's results by the keys eager_step uses: `new:PARAM` for an
    update, `grad:PARAM` for a gradient, `loss` for the output."""
    got = {}
    for t in doc["tensors"]:
        if "updates" in t:
            got[f"new:{t['updates']}"] = values[t["name"]]
        elif "grad_of" in t:
            got[f"grad:{t['grad_of']}"] = values[t["name"]]
        elif t["role"] == "output":
            got["loss"] = values[t["name"]]
    return got


def replay(argv):
    """Exports the model of `argv` and replays its graph. Returns the graph
    document, every tensor's value by name, and the eager step's results
    (`loss`, `grad:P`, `new:P`, `new:P.STATE`)."""
    args, setup = real_setup(argv)
    doc, _ = cli.export(args)
    values, expected = eager_step(args, setup, doc)
    shape_of = {t["name"]: (t["shape"], DTYPES[t["dtype"]])
                for t in doc["tensors"]}
    values.update({t["name"]: torch.tensor(t["value"], dtype=DTYPES[
        t["dtype"]]).reshape(t["shape"]) for t in doc["tensors"]
        if "value" in t})
    with torch.no_grad():
        for op in doc["ops"]:
            values[op["outputs"][0]] = run_op(op, values, shape_of)
    return doc, values, expected
