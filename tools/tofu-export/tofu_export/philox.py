"""This file implements TDL's random builtins in NumPy, bit for bit as
include/tofu/TDL/Philox.def defines them for the evaluator and the
generated kernels (docs/TDL.md, "Random builtins"): Philox-4x32-10 under
the key (seed, stream) over the counter (n mod 2^32, n / 2^32,
step mod 2^32, step / 2^32), n the element's row-major index. The replay
(tofu_export.replay) computes the graph's random ops with it, and the
tests compare it with the C++ evaluator and kernels.
"""

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = np.uint64(0xFFFFFFFF)


def _counter(value) -> int:
    """A builtin's argument as an integer: floor, two's complement 64 bits;
    NaN, infinities and values beyond +-2^63 give 0."""
    v = float(value)
    if not (-9.2e18 <= v < 9.2e18):
        return 0
    return int(np.floor(v)) & 0xFFFFFFFFFFFFFFFF


def philox4x32(key, counters):
    """The 10-round Philox-4x32 of `counters` (an array [..., 4] of uint32)
    under `key` (two ints): an array [..., 4] of uint32."""
    c = [counters[..., i].astype(np.uint64) for i in range(4)]
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & MASK,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & MASK]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return np.stack([x.astype(np.uint32) for x in c], axis=-1)


def blocks(seed, stream, step, count):
    """The generator's blocks for elements 0 .. count-1."""
    n = np.arange(count, dtype=np.uint64)
    t = _counter(step)
    ctr = np.stack([n & MASK, n >> np.uint64(32),
                    np.full_like(n, t & 0xFFFFFFFF),
                    np.full_like(n, t >> 32)], axis=-1).astype(np.uint32)
    return philox4x32((_counter(seed), _counter(stream)), ctr)


def rand_uniform(seed, stream, step, shape):
    """rand_uniform over a whole output of `shape` (float64, in [0, 1))."""
    count = int(np.prod(shape, dtype=np.int64))
    x = blocks(seed, stream, step, count)[:, 0]
    return ((x >> np.uint32(8)).astype(np.float64) / 16777216.0).reshape(shape)


def rand_normal(seed, stream, step, shape):
    """rand_normal over a whole output of `shape` (float64; Box-Muller)."""
    count = int(np.prod(shape, dtype=np.int64))
    b = blocks(seed, stream, step, count)
    u1 = ((b[:, 0] >> np.uint32(8)).astype(np.float64) + 1.0) / 16777216.0
    u2 = (b[:, 1] >> np.uint32(8)).astype(np.float64) / 16777216.0
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)
    return z.reshape(shape)


def random_op(op_type, params, step, shape, tensor=None, tensor2=None):
    """The value (float64) of a random op of specs/random.tdl whose params
    are `params`, at step `step`; `tensor` (and `tensor2`) are the op's
    tensor inputs after the step (bernoulli_probs' self, the normal ops'
    mean or std, normal_Tensor_Tensor's mean and std)."""
    seed, stream = params["seed"], params["stream"]
    if op_type in ("bernoulli", "bernoulli_probs", "uniform", "randint",
                   "exponential"):
        u = rand_uniform(seed, stream, step, shape)
        if op_type == "bernoulli":
            return (u < float(params["p"])).astype(np.float64)
        if op_type == "bernoulli_probs":
            return (u < np.asarray(tensor, dtype=np.float64)).astype(
                np.float64)
        if op_type == "uniform":
            lo, hi = float(params["from"]), float(params["to"])
            return lo + (hi - lo) * u
        if op_type == "exponential":
            return -np.log(1.0 - u) / float(params["lambd"])
        lo, hi = int(params["low"]), int(params["high"])
        return lo + np.floor(u * (hi - lo))
    z = rand_normal(seed, stream, step, shape)
    if op_type == "normal":
        return float(params["mean"]) + float(params["std"]) * z
    if op_type == "normal_Tensor_float":
        return np.asarray(tensor, dtype=np.float64) + float(params["std"]) * z
    if op_type == "normal_float_Tensor":
        return float(params["mean"]) + np.asarray(tensor, np.float64) * z
    if op_type == "normal_Tensor_Tensor":
        return np.asarray(tensor, np.float64) + \
            np.asarray(tensor2, np.float64) * z
    raise ValueError(f"'{op_type}' is not a random op")
