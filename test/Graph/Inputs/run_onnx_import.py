"""Exports PyTorch models with torch.onnx (static shapes, eval mode), imports
each with tofu-graph, and runs the imported graph with PyTorch's CPU kernels
(tofu_export.replay: each op as the ATen op its type names) on the ONNX
file's parameters and a random input, comparing the graph's output with the
model's. This checks that the importer's lowerings (and its constant
folding) compute what the ONNX model computes, not only that the shapes
validate.

    run_onnx_import.py TOFU_EXPORT_DIR TOFU_GRAPH OUTDIR MODEL...

MODEL: resnet50, densenet121, mobilenet_v2 (torchvision, 32x32 images),
lraspp, deeplabv3 (MobileNetV3), r2plus1d_18 (torchvision segmentation and
video, small inputs), fpn (the ResNet-18 FPN detection backbone),
wav2letter, convtasnet, deepspeech, conformer, wav2vec2 (torchaudio, small
configurations; DeepSpeech's bidirectional ReLU RNN is an RNN node,
Conformer's GLU a Split),
vit (a two-layer VisionTransformer), layers (torch.nn layers beyond the
classifiers': 1-d/3-d convolution and pooling, ConvTranspose, instance and
group norm, PReLU, ELU, SELU, CELU, Softplus, LeakyReLU, HardSigmoid,
logsumexp, amax, nearest and bilinear upsampling, pixel shuffle,
reflection and replication padding), lstm (a two-layer nn.LSTM and a
linear head on the last step), bilstm (one bidirectional layer), gru (a
two-layer bidirectional nn.GRU: GRU nodes); exported
at opset 13, or at N with MODEL@N (vit@17: LayerNormalization nodes).
Prints `MODEL: N ops ran, output matches` per model, or the mismatch;
exits 1 on any mismatch.
"""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, sys.argv[1])

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torchaudio  # noqa: E402
import torchvision  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from torchvision.models.detection import backbone_utils  # noqa: E402
from torchvision.models.vision_transformer import VisionTransformer  # noqa: E402

from tofu_export import models, replay  # noqa: E402


class LSTMNet(torch.nn.Module):
    def __init__(self, layers=2, bidirectional=False):
        super().__init__()
        self.lstm = torch.nn.LSTM(16, 32, num_layers=layers, batch_first=True,
                                  bidirectional=bidirectional)
        self.fc = torch.nn.Linear(64 if bidirectional else 32, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class GRUNet(torch.nn.Module):
    """A two-layer bidirectional nn.GRU (torch.onnx writes GRU nodes with
    linear_before_reset=1) and a linear head on the last step."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, 12, num_layers=2, batch_first=True,
                                bidirectional=True)
        self.fc = torch.nn.Linear(24, 5)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(y[:, -1])


class FPNLevels(torch.nn.Module):
    """torchvision's ResNet-18 FPN detection backbone, its pyramid levels
    flattened into one output."""

    def __init__(self):
        super().__init__()
        self.fpn = backbone_utils.resnet_fpn_backbone(
            backbone_name="resnet18", weights=None, trainable_layers=5)

    def forward(self, x):
        return torch.cat([v.flatten(1) for v in self.fpn(x).values()], 1)


class FirstOutput(torch.nn.Module):
    """The first output of a torchaudio model that returns (output,
    lengths), called with constant `lengths` if given."""

    def __init__(self, model, lengths=None):
        super().__init__()
        self.model = model
        self.lengths = lengths

    def forward(self, x):
        if self.lengths is None:
            return self.model(x)[0]
        return self.model(x, torch.tensor(self.lengths))[0]


class Layers(torch.nn.Module):
    """torch.nn layers beyond the classifiers' (1-d and 3-d convolution and
    pooling, transposed convolution, instance and group norm, the
    parameterised activations, reductions), on views of one image batch."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.conv1d = nn.Conv1d(4, 6, 3, padding=1)
        self.pool1d = nn.MaxPool1d(2)
        self.deconv = nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1,
                                         output_padding=1)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.gnorm = nn.GroupNorm(2, 4)
        self.prelu = nn.PReLU(4)
        self.avgpool = nn.AvgPool2d(2)
        self.conv3d = nn.Conv3d(1, 2, 3, padding=1)
        self.pool3d = nn.AvgPool3d(2)
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        n = x.shape[0]
        a = self.pool1d(torch.nn.functional.elu(self.conv1d(x.flatten(2))))
        b = self.deconv(x)
        b = self.gnorm(self.inorm(b))
        b = torch.nn.functional.leaky_relu(self.prelu(b), 0.1)
        b = self.avgpool(torch.nn.functional.softplus(b))
        b = torch.nn.functional.selu(b)
        c = self.conv3d(x.unsqueeze(1))
        c = self.pool3d(torch.nn.functional.celu(c, 0.5))
        d = torch.logsumexp(x, dim=1) + torch.amax(x, dim=1)
        f = torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest")
        f = torch.nn.functional.pixel_shuffle(f, 2)
        g = torch.nn.functional.interpolate(x, scale_factor=2,
                                            mode="bilinear")
        g = torch.nn.functional.pad(g, (1, 2, 2, 1), mode="reflect")
        g = torch.nn.functional.pad(g, (1, 1, 0, 0), mode="replicate")
        e = torch.nn.functional.hardsigmoid(self.head(x.mean((2, 3))))
        return torch.cat([a.reshape(n, -1), b.reshape(n, -1),
                          c.reshape(n, -1), d.reshape(n, -1), e,
                          f.reshape(n, -1), g.reshape(n, -1)], 1)


def make(name):
    image = torch.randn(2, 3, 32, 32)
    if name == "vit":
        return VisionTransformer(image_size=32, patch_size=16, num_layers=2,
                                 num_heads=2, hidden_dim=64, mlp_dim=128,
                                 num_classes=10), image
    if name == "lstm":
        return LSTMNet(), torch.randn(2, 5, 16)
    if name == "layers":
        return Layers(), torch.randn(2, 4, 8, 8)
    if name == "gru":
        return GRUNet(), torch.randn(2, 5, 8)
    if name == "conformer":  # GLU: a Split node
        return FirstOutput(torchaudio.models.Conformer(
            input_dim=8, num_heads=2, ffn_dim=16, num_layers=1,
            depthwise_conv_kernel_size=3), [6, 4]), torch.randn(2, 6, 8)
    if name == "wav2vec2":
        return FirstOutput(torchaudio.models.wav2vec2_model(
            extractor_mode="group_norm",
            extractor_conv_layer_config=[(8, 10, 5), (8, 3, 2)],
            extractor_conv_bias=False, encoder_embed_dim=16,
            encoder_projection_dropout=0.0, encoder_pos_conv_kernel=4,
            encoder_pos_conv_groups=2, encoder_num_layers=1,
            encoder_num_heads=2, encoder_attention_dropout=0.0,
            encoder_ff_interm_features=32, encoder_ff_interm_dropout=0.0,
            encoder_dropout=0.0, encoder_layer_norm_first=False,
            encoder_layer_drop=0.0, aux_num_out=5)), torch.randn(1, 400)
    if name == "deepspeech":  # a bidirectional ReLU nn.RNN: an RNN node
        return torchaudio.models.DeepSpeech(n_feature=8, n_hidden=16,
                                            n_class=5), \
            torch.randn(2, 1, 6, 8)
    if name == "lraspp":
        return torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            num_classes=3, weights_backbone=None), torch.randn(1, 3, 64, 64)
    if name == "r2plus1d_18":
        return torchvision.models.video.r2plus1d_18(num_classes=4), \
            torch.randn(1, 3, 4, 16, 16)
    if name == "deeplabv3":
        return torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
            num_classes=3, weights_backbone=None), torch.randn(1, 3, 32, 32)
    if name == "fpn":
        return FPNLevels(), torch.randn(1, 3, 64, 64)
    if name == "wav2letter":
        return torchaudio.models.Wav2Letter(num_classes=5, num_features=1), \
            torch.randn(1, 1, 400)
    if name == "convtasnet":
        return torchaudio.models.ConvTasNet(
            num_sources=2, enc_kernel_size=8, enc_num_feats=16,
            msk_kernel_size=3, msk_num_feats=8, msk_num_hidden_feats=16,
            msk_num_layers=2, msk_num_stacks=1), torch.randn(1, 1, 64)
    if name == "bilstm":
        return LSTMNet(layers=1, bidirectional=True), torch.randn(2, 4, 16)
    return getattr(torchvision.models, name)(num_classes=10), image


def aten_of(op_type):
    """The ATen op behind a library op type (naming rules: overload
    suffix, `_nN` input counts, `__K` output indices, `_no<arg>`)."""
    base = re.sub(r"__\d+$", "", op_type)
    base = re.sub(r"_n\d+$", "", base)
    base = re.sub(r"_no(bias|weight)$", "", base)
    head, _, tail = base.rpartition("_")
    try:
        getattr(getattr(torch.ops.aten, head), tail)
        return f"{head}.{tail}"
    except (AttributeError, RuntimeError):
        return f"{base}.default"


def constants(model):
    """Values of the ONNX model's initializers and Constant nodes, and of
    the Expand nodes of constants the importer folds (LSTM initial states)."""
    values = {i.name: numpy_helper.to_array(i)
              for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            values[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
        elif node.op_type == "Expand" and node.input[0] in values:
            shapes = {v.name: [d.dim_value for d in
                               v.type.tensor_type.shape.dim]
                      for v in model.graph.value_info}
            values[node.output[0]] = np.broadcast_to(
                values[node.input[0]], shapes[node.output[0]]).copy()
    return values


def run(spec, tofu_graph, outdir):
    name, _, opset = spec.partition("@")
    torch.manual_seed(0)
    module, x = make(name)
    module.eval()
    path = os.path.join(outdir, spec.replace("@", "-opset") + ".onnx")
    torch.onnx.export(module, x, path, opset_version=int(opset or 13),
                      do_constant_folding=True)
    doc = json.loads(subprocess.run(
        [tofu_graph, path, "--emit=json"], check=True,
        capture_output=True, text=True).stdout)
    model = onnx.shape_inference.infer_shapes(onnx.load(path), data_prop=True)
    known = constants(model)
    shape_of = {t["name"]: (t["shape"], models.DTYPE_NAMES[t["dtype"]])
                for t in doc["tensors"]}
    values = {}
    for t in doc["tensors"]:
        if t["role"] == "input":
            values[t["name"]] = x
        elif "value" in t:  # a constant the importer folded
            values[t["name"]] = torch.tensor(
                [float(v) for v in t["value"]],  # "-inf" is a string
                dtype=models.DTYPE_NAMES[t["dtype"]]).reshape(t["shape"])
        elif t["role"] == "param":
            values[t["name"]] = torch.from_numpy(np.array(known[t["name"]]))
    for op in doc["ops"]:
        op["aten"] = aten_of(op["type"])
        values[op["outputs"][0]] = replay.run_op(op, values, shape_of)
    out = [t["name"] for t in doc["tensors"] if t["role"] == "output"]
    with torch.no_grad():
        expected = module(x)
    if isinstance(expected, dict):  # torchvision's segmentation models
        expected = expected["out"]
    got = values[out[0]]
    if got.shape != expected.shape or not torch.allclose(
            got, expected, rtol=1e-4, atol=1e-5):
        err = (got - expected).abs().max().item() \
            if got.shape == expected.shape else "shape"
        print(f"{spec}: output differs (max abs error {err})")
        return False
    print(f"{spec}: {len(doc['ops'])} ops ran, output matches")
    return True


def main():
    tofu_graph, outdir = sys.argv[2], sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    ok = all([run(name, tofu_graph, outdir) for name in sys.argv[4:]])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
