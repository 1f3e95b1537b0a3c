"""This file implements the optimizer updates that tofu-export captures, as
pure functions of (parameter, gradient, state) so that the traced step is
functional: each update produces new tensors instead of mutating. Each
follows its torch.optim class of PyTorch 1.13 (single-tensor, not
`capturable`), operation by operation.

- `sgd` (torch.optim.SGD, no dampening or Nesterov): with weight decay wd,
  g = g + wd p; p' = p - lr g, or with momentum m: b' = m b + g,
  p' = p - lr b' (the first step of torch's buffer is b' = g: start it at 0).
- `adam` (torch.optim.Adam, amsgrad off): g = g + wd p; then, with `t` the
  step count, m' = b1 m + (1 - b1) g, v' = b2 v + (1 - b2) g^2,
  p' = p - lr / (1 - b1^t') * m' / (sqrt(v') / sqrt(1 - b2^t') + eps).
- `adamw` (torch.optim.AdamW): p = p (1 - lr wd), then Adam's update
  without the g + wd p term.

The step count is a state tensor of the step, `adam.step` (a float32
scalar, as torch 1.13 keeps `state['step']`): t' = t + 1, and the bias
corrections are computed from t' inside the graph, once for all
parameters (every parameter of the graph gets a gradient each step, so
their torch step counts are equal). The runtime carries it across steps
like the moments.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch

STEP = "adam.step"

# PyTorch's defaults (torch.optim.SGD has none for lr: ours is 0.1).
DEFAULTS = {"sgd": {"lr": 0.1, "weight_decay": 0.0},
            "adam": {"lr": 1e-3, "weight_decay": 0.0},
            "adamw": {"lr": 1e-3, "weight_decay": 1e-2}}


@dataclass
class OptimizerConfig:
    """What to capture: `sgd`, `adam` or `adamw`, and their
    hyper-parameters (None: the optimizer's PyTorch default)."""

    name: str = "sgd"
    lr: Optional[float] = None
    momentum: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: Optional[float] = None

    def __post_init__(self):
        if self.name not in DEFAULTS:
            raise ValueError(f"unknown optimizer '{self.name}'")
        if self.lr is None:
            self.lr = DEFAULTS[self.name]["lr"]
        if self.weight_decay is None:
            self.weight_decay = DEFAULTS[self.name]["weight_decay"]

    @property
    def is_adam(self) -> bool:
        return self.name in ("adam", "adamw")

    def options(self) -> Dict:
        """The hyper-parameters, as the graph's metadata records them
        (torch.optim's keyword arguments)."""
        if self.is_adam:
            return {"lr": self.lr, "betas": [self.beta1, self.beta2],
                    "eps": self.eps, "weight_decay": self.weight_decay}
        return {"lr": self.lr, "momentum": self.momentum,
                "weight_decay": self.weight_decay}

    def state_names(self) -> List[str]:
        """Per-parameter state tensors, as name suffixes."""
        if self.is_adam:
            return ["adam_m", "adam_v"]
        if self.momentum:
            return ["momentum"]
        return []


def init_state(cfg: OptimizerConfig, params: Dict[str, torch.Tensor]):
    """Optimizer state tensors (meta), keyed `<param>.<state>`, then the
    shared step count `adam.step` of Adam and AdamW."""
    state = {f"{p}.{s}": torch.empty_like(t)
             for p, t in params.items() for s in cfg.state_names()}
    if cfg.is_adam:
        if STEP in params:
            raise ValueError(f"a parameter is named '{STEP}', the name of "
                             "Adam's step count")
        device = next(iter(params.values())).device if params else "cpu"
        state[STEP] = torch.empty((), dtype=torch.float32, device=device)
    return state


def begin_step(cfg: OptimizerConfig, state) -> Tuple[Dict, Dict]:
    """What every parameter's update shares: returns ({state key: new
    value}, context for `update`). Adam: t' = t + 1 and the bias
    corrections lr / (1 - b1^t') and sqrt(1 - b2^t')."""
    if not cfg.is_adam:
        return {}, {}
    t = state[STEP] + 1
    step_size = cfg.lr / (1 - torch.pow(cfg.beta1, t))
    bias2_sqrt = torch.sqrt(1 - torch.pow(cfg.beta2, t))
    return {STEP: t}, {"step_size": step_size, "bias2_sqrt": bias2_sqrt}


def update(cfg: OptimizerConfig, name: str, p, g, state,
           context: Optional[Dict] = None) -> Tuple:
    """One parameter's update: returns (new_param, {state key: new value}).
    `context` is what `begin_step` returned for this step."""
    if cfg.is_adam:
        return _adam(cfg, name, p, g, state, context)
    if cfg.weight_decay:
        g = torch.add(g, p, alpha=cfg.weight_decay)
    if cfg.momentum:
        key = f"{name}.momentum"
        buf = cfg.momentum * state[key] + g
        return p - cfg.lr * buf, {key: buf}
    return p - cfg.lr * g, {}


def _adam(cfg, name, p, g, state, context):
    mk, vk = f"{name}.adam_m", f"{name}.adam_v"
    if cfg.weight_decay and cfg.name == "adamw":
        p = p * (1 - cfg.lr * cfg.weight_decay)
    elif cfg.weight_decay:
        g = torch.add(g, p, alpha=cfg.weight_decay)
    m = torch.add(state[mk] * cfg.beta1, g, alpha=1 - cfg.beta1)
    v = torch.add(state[vk] * cfg.beta2, g * g, alpha=1 - cfg.beta2)
    denom = torch.sqrt(v) / context["bias2_sqrt"] + cfg.eps
    return p - context["step_size"] * (m / denom), {mk: m, vk: v}
