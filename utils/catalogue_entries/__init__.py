"""The entries of the model catalogue (utils/catalogue.py): every trainable
layer class of torch.nn, every model class of torchaudio.models and
torchvision's segmentation, video, optical-flow models and detection
backbones, each at a small size with its input and the adapter that turns
its output into one scalar loss.

An entry is a `Case` under a dotted name `FAMILY.NAME` (`nn.Conv1d`,
`audio.Wav2Letter`, `segmentation.fcn_resnet50`). `model.py` in this
directory is the tofu-export model file that builds any entry:
`tofu-export utils/catalogue_entries/model.py:Entry --model-kwargs
'{"name": "nn.Conv1d"}' --input 2x3x8`.
"""

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional


@dataclass
class Case:
    """One catalogue entry.

    build:   () -> nn.Module, the module at a small size (no downloads)
    inputs:  the shapes of its inputs as tofu-export --input spells them
             (`2x3x8`, `2x5:i64`); float inputs of nn entries are scaled
             by a trainable parameter of their shape before the layer
    forward: (module, *inputs) -> tensor or tuple/list/dict of tensors;
             default module(*inputs). The loss is the mean of the squared
             floating-point outputs (`(t * t).mean()`, so that the loss
             itself needs no op beyond mul and mean), summed; a loss
             module's own output is the loss
    targets: () -> list of tensors, registered as buffers `target0`, ...
             and passed to forward after the inputs (loss targets, fixed
             values)
    random:  the step draws random numbers (dropout, RReLU, fractional
             pooling): the replay cannot match eager PyTorch's draws
    exporter_options: extra tofu-export options the entry needs
    """

    build: Callable
    inputs: List[str]
    forward: Optional[Callable] = None
    targets: Optional[Callable] = None
    random: bool = False
    is_loss: bool = False
    exporter_options: List[str] = field(default_factory=list)


# FAMILY -> (module of this package, its table): imported only when used
# (torchaudio and torchvision take seconds to import).
FAMILIES = {
    "nn": ("nn_layers", "CASES"),
    "nn-loss": ("nn_losses", "CASES"),
    "torchaudio": ("audio", "CASES"),
    "segmentation": ("vision", "SEGMENTATION"),
    "video": ("vision", "VIDEO"),
    "optical-flow": ("vision", "OPTICAL_FLOW"),
    "detection": ("vision", "DETECTION"),
}


def family_cases(family: str) -> Dict[str, Case]:
    """NAME -> Case of one family."""
    import importlib
    module, table = FAMILIES[family]
    return getattr(importlib.import_module(f"{__name__}.{module}"), table)


def families() -> Dict[str, Dict[str, Case]]:
    """FAMILY -> NAME -> Case, in catalogue order."""
    return {fam: family_cases(fam) for fam in FAMILIES}


def case(name: str) -> Case:
    """The Case of entry `FAMILY.NAME`; KeyError if there is none."""
    family, _, short = name.partition(".")
    if family not in FAMILIES:
        raise KeyError(name)
    return family_cases(family)[short]


def all_cases() -> Dict[str, Case]:
    """`FAMILY.NAME` -> Case for every entry."""
    return {f"{fam}.{name}": c
            for fam, cases in families().items()
            for name, c in cases.items()}
