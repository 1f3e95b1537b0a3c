"""Meta kernels (output shapes and dtypes only) that PyTorch 1.13 lacks for
the loss functions of torch.nn and for nn.EmbeddingBag's backward.
meta.register_meta_kernels registers them where the build has none."""

import torch


def _reduced(self, reduction, batch_shape):
    """A loss's output: 0-d for reduction mean (1) or sum (2), else the
    per-sample shape."""
    return self.new_empty(batch_shape if reduction == 0 else [])


def _like_second(grad_output, self, *rest, **kwargs):
    """Backward kernels whose gradient has the shape of `self`."""
    return self.new_empty(self.shape)


def _multi_margin_loss(self, target, p=1, margin=1, weight=None,
                       reduction=1):
    return _reduced(self, reduction, self.shape[:1] if self.dim() > 1 else [])


def _multilabel_margin_loss_forward(self, target, reduction):
    out = _reduced(self, reduction, self.shape[:1] if self.dim() > 1 else [])
    return out, self.new_empty(self.shape)


def _nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    return _reduced(self, reduction, target.shape), self.new_empty([])


def _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size,
                                  maximum_indices, num_weights,
                                  scale_grad_by_freq, mode,
                                  per_sample_weights, padding_idx=-1):
    return grad.new_empty([num_weights, grad.shape[-1]])


def _embedding_bag_per_sample_weights_backward(grad, weight, indices,
                                               offsets, offset2bag, mode,
                                               padding_idx=-1):
    return grad.new_empty([indices.numel()])


KERNELS = {
    "smooth_l1_loss_backward": _like_second,
    "huber_loss_backward": _like_second,
    "soft_margin_loss_backward": _like_second,
    "multi_margin_loss": _multi_margin_loss,
    "multi_margin_loss_backward": _like_second,
    "multilabel_margin_loss_forward": _multilabel_margin_loss_forward,
    "multilabel_margin_loss_backward": _like_second,
    "nll_loss2d_forward": _nll_loss2d_forward,
    "_embedding_bag_dense_backward": _embedding_bag_dense_backward,
    "_embedding_bag_per_sample_weights_backward":
        _embedding_bag_per_sample_weights_backward,
}
