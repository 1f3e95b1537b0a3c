"""A ResNet stem in small (test/Runtime/onednn.test): convolutions without
bias (stride 1 and 2, padding 1 and 3), batch norms, a padded max pooling
and an average pooling, so that the CPU runtime's oneDNN path meets each
problem it computes (forward convolution, its input and weight gradients,
batch norm, max and average pooling). Input [4, 3, 16, 16]; the loss is
cross-entropy of 10 classes against the labels 0, 3, 6, 9."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBnPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.conv3 = nn.Conv2d(16, 16, 3, stride=2, padding=1, bias=False)
        self.avg = nn.AvgPool2d(2)
        self.fc = nn.Linear(16, 10)
        self.register_buffer("labels", torch.tensor([0, 3, 6, 9]))

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))   # 4x8x4x4
        x = F.relu(self.bn2(self.conv2(x)))              # 4x16x4x4
        x = self.avg(self.conv3(x))                      # 4x16x1x1
        return F.cross_entropy(self.fc(x.flatten(1)), self.labels)
