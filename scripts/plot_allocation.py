#!/usr/bin/python3
"""Spar's rank allocation per LoRA matrix over training, as a heatmap (figure 4).

Reads allocation.csv of one `hilo-sim run` (arm,version,matrix,kept) or sweep_allocation.csv of
scripts/sweep.py, e.g.
  /usr/bin/python3 scripts/plot_allocation.py results/paper/fig4/sweep_allocation.csv \
      --out results/paper/fig4-allocation [--spectra results/paper/spectra.csv]
One heatmap per (combination, arm) with allocation rows (at most --max-panels): x = adapter
version, y = matrix index in the adapter layout's canonical order, colour = singular triplets
kept. A side panel shows each matrix's mean rank over training.

--spectra CSV (columns k, energy_gradient, energy_update; optional, drawn only when the file
exists): fraction of the energy captured by the top-k singular triplets of the gradient and of
the AdamW update. Rows with per-k energies are accumulated and normalised; rows that are already
cumulative fractions (non-decreasing, ending at <= 1) are drawn as given.
"""
import argparse
import os
import sys

import plot_common as pc
from matplotlib.ticker import MaxNLocator
from plot_common import plt


def cumulative(values):
    if all(b >= a - 1e-12 for a, b in zip(values, values[1:])) and values and values[-1] <= 1.0 + 1e-9:
        return values
    total = sum(values)
    out, acc = [], 0.0
    for v in values:
        acc += v
        out.append(acc / total if total else 0.0)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("allocation_csv", help="allocation.csv or sweep_allocation.csv")
    p.add_argument("--arms", default="", help="arms to draw (comma-separated; default all)")
    p.add_argument("--max-panels", type=int, default=4, help="heatmaps at most (default 4)")
    p.add_argument("--spectra", help="CSV of gradient vs AdamW-update spectra, drawn if present")
    p.add_argument("--title", default="Spar rank allocation across LoRA matrices")
    pc.add_output_args(p)
    args = p.parse_args()

    rows = pc.read_csv(args.allocation_csv)
    pc.require(rows, ["arm", "version", "matrix", "kept"], args.allocation_csv)
    rows = pc.filter_rows(rows, args.where)
    rows, arms = pc.select_arms(rows, args.arms)
    combos = list(dict.fromkeys(r.get("combo", "") for r in rows))
    panels = [(c, a) for c in combos for a in arms
              if any(r["arm"] == a and r.get("combo", "") == c for r in rows)]
    if len(panels) > args.max_panels:
        print(f"{sys.argv[0]}: {len(panels)} (combination, arm) pairs; drawing the first "
              f"{args.max_panels} (choose with --arms/--where)", file=sys.stderr)
        panels = panels[:args.max_panels]
    if not panels:
        sys.exit(f"{sys.argv[0]}: no allocation rows to draw")
    spectra = None
    if args.spectra and os.path.exists(args.spectra):
        spectra = pc.read_csv(args.spectra)
        pc.require(spectra, ["k", "energy_gradient", "energy_update"], args.spectra)
    elif args.spectra:
        print(f"{sys.argv[0]}: {args.spectra} not found; no spectra panel", file=sys.stderr)

    ncols = len(panels) + (1 if spectra else 0)
    fig = plt.figure(figsize=(6.2 * ncols, 5))
    grid = fig.add_gridspec(1, ncols)
    print(f"{'panel':<40}{'versions':>9}{'matrices':>9}{'mean kept':>10}{'max kept':>9}")
    for i, (combo, arm) in enumerate(panels):
        rs = [r for r in rows if r["arm"] == arm and r.get("combo", "") == combo]
        versions = sorted({int(r["version"]) for r in rs})
        matrices = sorted({int(r["matrix"]) for r in rs})
        vi = {v: j for j, v in enumerate(versions)}
        grid_kept = [[0.0] * len(versions) for _ in matrices]
        for r in rs:
            grid_kept[int(r["matrix"])][vi[int(r["version"])]] = float(r["kept"])
        sub = grid[0, i].subgridspec(1, 2, width_ratios=[5, 1], wspace=0.05)
        ax = fig.add_subplot(sub[0, 0])
        side = fig.add_subplot(sub[0, 1], sharey=ax)
        im = ax.imshow(grid_kept, aspect="auto", origin="lower", interpolation="nearest",
                       cmap="viridis",
                       extent=(versions[0] - 0.5, versions[-1] + 0.5, -0.5, len(matrices) - 0.5))
        ax.set_xlabel("adapter version (optimizer step)")
        ax.set_ylabel("LoRA matrix index (layout order)")
        ax.set_title(arm if len(combos) == 1 else f"{arm} [{combo}]", fontsize=9)
        fig.colorbar(im, ax=side, label="singular triplets kept (rank)", fraction=0.5, pad=0.1)
        means = [sum(row) / len(row) for row in grid_kept]
        side.barh(range(len(matrices)), means, color="tab:red")
        side.set_xlabel("mean rank", fontsize=8)
        side.xaxis.set_major_locator(MaxNLocator(2))
        side.tick_params(axis="x", labelsize=7)
        side.tick_params(axis="y", labelleft=False)
        flat = [k for row in grid_kept for k in row]
        print(f"{(arm + ' ' + combo)[:39]:<40}{len(versions):>9}{len(matrices):>9}"
              f"{sum(flat) / len(flat):>10.3g}{max(flat):>9.0f}")
    if spectra:
        ax = fig.add_subplot(grid[0, ncols - 1])
        ks = [pc.num(r["k"]) for r in spectra]
        for col, label, colour in (("energy_gradient", "gradient", "tab:blue"),
                                   ("energy_update", "AdamW update", "tab:orange")):
            ys = cumulative([pc.num(r[col]) or 0.0 for r in spectra])
            ax.plot(ks, ys, color=colour, marker=".", label=label)
        ax.set_xlabel("top-k singular triplets kept (k)")
        ax.set_ylabel("fraction of energy captured (sum of sigma^2)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("energy in the top-k triplets", fontsize=9)
    fig.suptitle(args.title)
    fig.subplots_adjust(left=0.06, right=0.97, bottom=0.13, top=0.88, wspace=0.35)
    pc.save(fig, args.out)


if __name__ == "__main__":
    main()
