"""torchvision's segmentation, video and optical-flow models and detection
backbones at small sizes (no pretrained weights: nothing is downloaded).
Whole detection models are left out: their step is not static (anchor
matching, non-maximum suppression and the number of proposals depend on
the values); their backbones are entries.
"""

import torch
import torchvision.models as tvm
from torchvision.models.detection import backbone_utils
from torchvision.models.video import mvit

from . import Case

EXCLUDED = {
    "detection models (fasterrcnn_*, fcos_*, keypointrcnn_*, maskrcnn_*, "
    "retinanet_*, ssd*)": "not a static step: box matching, "
                          "non-maximum suppression and proposal counts "
                          "depend on the values",
}


def _v(build, inputs, forward=None, random=False):
    return Case(build=build, inputs=list(inputs), forward=forward,
                random=random)


def _segmentation(name):
    ctor = getattr(tvm.segmentation, name)
    return lambda: ctor(weights=None, weights_backbone=None, num_classes=3)


def _out(m, x):
    return m(x)["out"]


SEGMENTATION = {
    name: _v(_segmentation(name), ["2x3x32x32"], forward=_out)
    for name in tvm.list_models(module=tvm.segmentation)}


def _video(name):
    ctor = getattr(tvm.video, name)
    return lambda: ctor(weights=None, num_classes=4)


def _s3d_small():
    """S3D on 16x32x32 clips: its head's average pool has a fixed 2x7x7
    window (16x224x224 clips), here a 2x1x1 one; the classifier's dropout
    is turned off."""
    model = tvm.video.s3d(weights=None, num_classes=4, dropout=0.0)
    model.avgpool = torch.nn.AvgPool3d((2, 1, 1), stride=1)
    return model


def _mvit_tiny(v2):
    """MViT with two blocks on 4x32x32 clips (torchvision's builders fix
    the clip size at 16x224x224); v1's or v2's block options."""
    blocks = [
        mvit.MSBlockConfig(num_heads=1, input_channels=8,
                           output_channels=8, kernel_q=[3, 3, 3],
                           kernel_kv=[3, 3, 3], stride_q=[1, 1, 1],
                           stride_kv=[1, 2, 2]),
        mvit.MSBlockConfig(num_heads=2, input_channels=8,
                           output_channels=16, kernel_q=[3, 3, 3],
                           kernel_kv=[3, 3, 3], stride_q=[1, 2, 2],
                           stride_kv=[1, 1, 1]),
    ]
    return lambda: mvit.MViT(
        spatial_size=(32, 32), temporal_size=4, block_setting=blocks,
        residual_pool=v2, residual_with_cls_embed=not v2, rel_pos_embed=v2,
        proj_after_attn=v2, dropout=0.0, num_classes=4)


VIDEO = {
    "r3d_18": _v(_video("r3d_18"), ["2x3x4x16x16"]),
    "mc3_18": _v(_video("mc3_18"), ["2x3x4x16x16"]),
    "r2plus1d_18": _v(_video("r2plus1d_18"), ["2x3x4x16x16"]),
    "s3d": _v(_s3d_small, ["2x3x16x32x32"]),
    "mvit_v1_b": _v(_mvit_tiny(False), ["2x3x4x32x32"]),
    "mvit_v2_s": _v(_mvit_tiny(True), ["2x3x4x32x32"]),
}


def _flows(m, a, b):
    return m(a, b, num_flow_updates=2)


# RAFT's correlation pyramid has 4 levels, each half the last, over features
# at 1/8 of the frame: 128x128 frames give 16, 8, 4 and 2 pixels (with 64x64
# frames the last level is 1x1, where RAFT's normalization of the sampling
# grid divides by width - 1 = 0 and the whole step is NaN).
OPTICAL_FLOW = {
    name: _v(lambda name=name: getattr(tvm.optical_flow, name)(weights=None),
             ["1x3x128x128", "1x3x128x128"], forward=_flows)
    for name in tvm.list_models(module=tvm.optical_flow)}


def _features(m, x):
    return list(m(x).values())


DETECTION = {
    "resnet_fpn_backbone(resnet18)": _v(
        lambda: backbone_utils.resnet_fpn_backbone(
            backbone_name="resnet18", weights=None, trainable_layers=5),
        ["2x3x64x64"], forward=_features),
    "mobilenet_backbone(mobilenet_v3_small, fpn)": _v(
        lambda: backbone_utils.mobilenet_backbone(
            backbone_name="mobilenet_v3_small", weights=None, fpn=True,
            trainable_layers=6),
        ["2x3x64x64"], forward=_features),
}
