"""Recomputes a megatron-3d (or fsdp/ZeRO-3) plan's step from the formulas
of docs/Machines.md and the machine file, independently of tofu-plan, and
checks the plan's numbers: the record's step equals
estimated_step_seconds.total, the formula's step equals it (relative
1e-9), and TFLOP/s per GPU is Eq. (3) over that step.

usage: megatron_formula.py PLAN.json MACHINE.json [megatron_3d|zero_3]
"""
import json
import math
import sys


def main():
    plan = json.load(open(sys.argv[1]))
    c = json.load(open(sys.argv[2]))["cluster"]
    key = sys.argv[3] if len(sys.argv) > 3 else "megatron_3d"
    rec = plan[key]
    tr = rec["transformer"]
    gpu, links = c["gpu"], c["links"]
    peak = gpu["peak_flops"]["bf16"] * gpu["gemm_efficiency"]
    hbm = gpu["memory_bandwidth"] * gpu["memory_efficiency"]
    sms, (tm, tn) = gpu["multiprocessors"], gpu["gemm_tile"]
    node, net = links["node"], links["network"]
    base = c["collectives"]["latency"]

    def mem(nbytes):
        return nbytes / hbm

    def gemm(m, n, k, cnt=1):
        waves = math.ceil(math.ceil(m / tm) * math.ceil(n / tn) * cnt / sms)
        busy = min(1.0, m * n * cnt / (waves * sms * tm * tn))
        return max(2 * m * n * k * cnt / (peak * busy),
                   mem(2 * (m * k + k * n + m * n) * cnt))

    def gemm_bwd(m, n, k, cnt=1):
        return gemm(m, k, n, cnt) + gemm(k, n, m, cnt)

    def ring(kind, nbytes, ranks, nodes):
        if ranks <= 1:
            return 0.0
        steps = 2 * (ranks - 1) if kind == "ar" else ranks - 1
        inter = 0 if nodes <= 1 else (2 * (nodes - 1) if kind == "ar"
                                      else nodes - 1)
        bw = (net if nodes > 1 else node)["bus_bandwidth"]
        lat = base + (steps - inter) * node["step_latency"] + \
            inter * net["step_latency"]
        return lat + nbytes * steps / ranks / bw

    L, h, a = tr["layers"], tr["hidden"], tr["heads"]
    s, V, B = tr["sequence"], tr["vocabulary"], tr["batch"]
    params = tr["parameters"]

    def layer(b, t):
        bs, d, heads = b * s, h / a, b * a / t
        shapes = [(bs, 3 * h / t, h, 1), (s, s, d, heads), (s, d, s, heads),
                  (bs, h, h / t, 1), (bs, 4 * h / t, h, 1),
                  (bs, h, 4 * h / t, 1)]
        f = sum(gemm(*x) for x in shapes)
        bw = sum(gemm_bwd(*x) for x in shapes)
        E, S = bs * h, heads * s * s
        nbytes = 2 * (4 * E + 6 * E + 4 * S + 8 * E / t) + 2 * E + S
        return f + mem(nbytes), bw + mem(2 * nbytes)

    flops = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))
    if key == "megatron_3d":
        t, p, dp = rec["tensor_parallel"], rec["pipeline_parallel"], \
            rec["data_parallel"]
        b, m = rec["microbatch_size"], rec["microbatches"]
        assert m == B // (dp * b), "microbatches"
        f, bw = layer(b, t)
        E = b * s * h
        ar = ring("ar", 2 * E, t, 1)
        logits = gemm(b * s, V / t, h) + gemm_bwd(b * s, V / t, h) + \
            mem(16 * b * s * V / t)
        emb = mem(8 * E)
        extra = max(logits + (emb if p == 1 else 0), 0 if p == 1 else emb)
        stage = L / p * (f + 2 * ar + f + bw + 4 * ar) + extra
        p2p = (2 * E / t / net["bus_bandwidth"] + net["step_latency"] +
               ring("ag", 2 * E, t, 1)) if p > 1 else 0.0
        per = stage + 2 * p2p
        pg = params / (t * p)
        dp_nodes = min(dp, max(1, math.ceil(dp * t / c["gpus_per_node"])))
        step = (m + p - 1) * per + m * mem(10 * pg) + \
            ring("ar", 4 * pg, dp, dp_nodes) + \
            (ring("ar", 4 * V * h / t, 2, 2) if p > 1 else 0) + mem(30 * pg)
        gpus = t * p * dp
    else:
        K = plan["workers"]
        b = B / K
        f, bw = layer(b, 1)
        nodes = max(1, math.ceil(K / c["gpus_per_node"]))
        lp = 12 * h * h + 13 * h
        ag = ring("ag", 2 * lp, K, nodes)
        rs = ring("rs", 2 * lp, K, nodes)
        ep = params - L * lp
        ecomm = 2 * ring("ag", 2 * ep, K, nodes) + ring("rs", 2 * ep, K, nodes)
        logits = gemm(b * s, V, h) + gemm_bwd(b * s, V, h) + \
            mem(16 * b * s * V)
        step = L * (max(f, ag) + max(f + bw, ag + rs)) + \
            max(logits, ecomm) + mem(30 * params / K)
        gpus = K
    total = plan["estimated_step_seconds"]["total"]
    ok = abs(rec["seconds"]["step"] - total) <= 1e-9 * total
    ok = ok and abs(step - total) <= 1e-9 * total
    tflops = flops / gpus / total / 1e12
    ok = ok and abs(tflops - rec["tflops_per_gpu"]) <= 1e-9 * tflops
    print("formula step %.9g s, plan %.9g s, %.6g TFLOP/s per GPU: %s" %
          (step, total, tflops, "match" if ok else "MISMATCH"))
    sys.exit(0 if ok else 1)


main()
