"""Exports torchvision's ResNet-18 (eval mode) to ONNX with torch.onnx, the
way a user would, for the importer test.

    torch_to_onnx.py OUT.onnx
"""
import sys

import torch
import torchvision

model = torchvision.models.resnet18(num_classes=10).eval()
torch.onnx.export(model, torch.zeros(2, 3, 64, 64), sys.argv[1],
                  opset_version=13, do_constant_folding=True)
