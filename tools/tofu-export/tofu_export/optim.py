"""This file implements the optimizer updates that tofu-export captures, as
pure functions of (parameter, gradient, state) so that the traced step is
functional: each update produces new tensors instead of mutating.

- `sgd`: p' = p - lr * g, or with momentum m: b' = m * b + g, p' = p - lr * b'.
- `adam`: m' = b1 m + (1 - b1) g, v' = b2 v + (1 - b2) g^2,
  p' = p - lr_t * m' / (sqrt(v') + eps), with the bias corrections of step
  `t` folded into the constant lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t).
"""

import math
from dataclasses import dataclass
from typing import Dict, List, Tuple

import torch


@dataclass
class OptimizerConfig:
    """What to capture: `sgd` or `adam`, and their hyper-parameters."""

    name: str = "sgd"
    lr: float = 0.1
    momentum: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    step: int = 1

    def state_names(self) -> List[str]:
        """Per-parameter state tensors, as name suffixes."""
        if self.name == "adam":
            return ["adam_m", "adam_v"]
        if self.momentum:
            return ["momentum"]
        return []


def init_state(cfg: OptimizerConfig, params: Dict[str, torch.Tensor]):
    """Optimizer state tensors (meta), keyed `<param>.<state>`."""
    return {f"{p}.{s}": torch.empty_like(t)
            for p, t in params.items() for s in cfg.state_names()}


def update(cfg: OptimizerConfig, name: str, p, g, state) -> Tuple:
    """One parameter's update: returns (new_param, {state key: new value})."""
    if cfg.name == "adam":
        return _adam(cfg, name, p, g, state)
    if cfg.momentum:
        key = f"{name}.momentum"
        buf = cfg.momentum * state[key] + g
        return p - cfg.lr * buf, {key: buf}
    return p - cfg.lr * g, {}


def _adam(cfg, name, p, g, state):
    mk, vk = f"{name}.adam_m", f"{name}.adam_v"
    m = cfg.beta1 * state[mk] + (1 - cfg.beta1) * g
    v = cfg.beta2 * state[vk] + (1 - cfg.beta2) * (g * g)
    lr_t = cfg.lr * math.sqrt(1 - cfg.beta2 ** cfg.step) / (
        1 - cfg.beta1 ** cfg.step)
    return p - lr_t * (m / (torch.sqrt(v) + cfg.eps)), {mk: m, vk: v}
