#!/usr/bin/python3
"""How stable are the subspaces a sync scheme ships? (the case for or against subspace reuse)

Reads the per-version dumps of `sync-curves --dump-dir DIR` (g<v>.bin gradients, w<v>.bin the
replicas' adapter, x<v>.bin the optimizer's parameters when they differ) and prints, per LoRA
factor matrix and averaged over the sampled versions, the share of a payload input's energy that
a rank-k two-sided projection captures:
  own      onto its own top-k singular subspaces (what fresh triplets could capture at best);
  prev     onto the top-k subspaces of the previous version's input (a basis the learner knows);
  held L   (primal) onto the row/column spaces of the updates the replicas applied in the last L
           versions (w_v - w_{v-1}: a basis both sides hold, the only one a coefficient-only
           payload can use), with the mean basis dimension.
Inputs: the gradient g_v (what hilo compresses, before error feedback) and, when x<v>.bin exist,
the primal gap X_v = x_v - w_{v-1} (what primal compresses, for any decay). Layout: the tiny LM's
q k v o up down LoRA factors (A: rank x d_in, B: d_out x rank), FFN width 4 x d_model.

  /usr/bin/python3 scripts/quality_subspace.py DIR --d-model 128 --rank 64
"""
import argparse
import os
import sys

import numpy as np


def layout(d, rank, layers):
    shapes = []
    for _ in range(layers):
        for din, dout in [(d, d), (d, d), (d, d), (d, d), (d, 4 * d), (4 * d, d)]:
            shapes += [(rank, din), (dout, rank)]
    return shapes


def split(x, shapes):
    out, at = [], 0
    for r, c in shapes:
        out.append(x[at:at + r * c].reshape(r, c))
        at += r * c
    return out


def top(m, k):
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    return u[:, :k], vt[:k].T, s


def share(m, u, v):
    n = np.linalg.norm(m) ** 2
    return np.linalg.norm(u.T @ m @ v) ** 2 / n if n > 0 else float("nan")


def held_basis(deltas, tol=1e-3):
    """Orthonormal row and column bases of the applied updates (singular values above tol x the
    largest: fp32 rounding of w makes w_v - w_{v-1} full rank at noise level)."""
    us, vs = [], []
    for m in deltas:
        u, s, vt = np.linalg.svd(m, full_matrices=False)
        if s.size == 0 or s[0] <= 0:
            continue
        r = int((s > tol * s[0]).sum())
        us.append(u[:, :r])
        vs.append(vt[:r].T)
    if not us:
        return None, None
    qu, _ = np.linalg.qr(np.concatenate(us, 1))
    qv, _ = np.linalg.qr(np.concatenate(vs, 1))
    return qu, qv


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump_dir")
    ap.add_argument("--d-model", type=int, required=True)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--versions", default="30,50,90", help="versions to sample")
    ap.add_argument("--ks", default="2,4,8")
    ap.add_argument("--held", default="1,2,4", help="L values of the held basis")
    args = ap.parse_args()

    shapes = layout(args.d_model, args.rank, args.layers)
    n = sum(r * c for r, c in shapes)

    def load(kind, v):
        path = os.path.join(args.dump_dir, f"{kind}{v}.bin")
        if not os.path.exists(path):
            return None
        x = np.fromfile(path, dtype=np.float32).astype(np.float64)
        if x.size != n:
            sys.exit(f"{path}: {x.size} values, the layout has {n} (check --d-model/--rank)")
        return split(x, shapes)

    versions = [int(v) for v in args.versions.split(",")]
    ks = [int(k) for k in args.ks.split(",")]
    helds = [int(h) for h in args.held.split(",")]
    inputs = {"gradient": lambda v: load("g", v)}
    if load("x", versions[0]) is not None:
        inputs["primal gap"] = lambda v: (
            None if load("x", v) is None or load("w", v - 1) is None else
            [x - w for x, w in zip(load("x", v), load("w", v - 1))])
    print(f"# {' '.join(sys.argv)}")
    print(f"{'input':<12}{'k':>3}{'own':>8}{'prev':>8}"
          + "".join(f"{'held ' + str(h):>10}{'dim':>6}" for h in helds))
    for name, get in inputs.items():
        for k in ks:
            own, prev = [], []
            held = {h: ([], []) for h in helds}
            for v in versions:
                cur, before = get(v), get(v - 1)
                ws = [load("w", v - 1 - l) for l in range(max(helds) + 1)]
                for i, m in enumerate(cur):
                    if np.linalg.norm(m) == 0:
                        continue
                    u, vv, s = top(m, k)
                    own.append((s[:k] ** 2).sum() / (s ** 2).sum())
                    pu, pv, _ = top(before[i], k)
                    prev.append(share(m, pu, pv))
                    for h in helds:
                        if name == "gradient" or any(w is None for w in ws[:h + 1]):
                            continue
                        qu, qv = held_basis([ws[l][i] - ws[l + 1][i] for l in range(h)])
                        if qu is not None:
                            held[h][0].append(share(m, qu, qv))
                            held[h][1].append(qu.shape[1])
            row = f"{name:<12}{k:>3}{np.mean(own):>8.3f}{np.mean(prev):>8.3f}"
            for h in helds:
                sh, dim = held[h]
                row += (f"{np.mean(sh):>10.3f}{np.mean(dim):>6.1f}" if sh
                        else f"{'-':>10}{'-':>6}")
            print(row)


if __name__ == "__main__":
    main()
