#!/usr/bin/python3
"""Spar's rank allocation per LoRA matrix over training, as a heatmap (figure 4).

Reads allocation.csv of one `hilo-sim run` (arm,version,matrix[,matrix_name],kept) or sweep_allocation.csv of
scripts/sweep.py, e.g.
  /usr/bin/python3 scripts/plot_allocation.py results/paper/fig4/sweep_allocation.csv \
      --out results/paper/fig4-allocation [--spectra results/paper/spectra.csv]
One heatmap per (combination, arm) with allocation rows (at most --max-panels): x = adapter
version, y = the adapter's matrices named by layer, projection and factor ('L0 q.A' = layer 0,
query projection, LoRA factor A; the canonical layout order of models/tiny-lm.cc: per layer, the
A and B factors of q, k, v, o, up, down), colour = singular triplets kept. A narrow side panel
shows each matrix's mean rank over training. Matrix names need the matrix count to be a whole
number of layers of --targets (default all six projections); otherwise indices are shown.

--spectra CSV (columns k, energy_gradient, energy_update; drawn only when the file exists):
fraction of the energy captured by the top-k singular triplets of a gradient and of the AdamW
update it produced. Those spectra come from their own workload, which the panel names: from
--spectra-label, else the `workload` entry of the CSV's sidecar (SPECTRA.meta.json). Rows with
per-k energies are accumulated and normalised; rows that are already cumulative fractions
(non-decreasing, ending at <= 1) are drawn as given.
"""
import argparse
import os
import sys
import textwrap

import plot_common as pc
from matplotlib.ticker import MaxNLocator


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
    p.add_argument("--targets", default=",".join(pc.LORA_TARGETS),
                   help="adapted projections in layout order (default %(default)s)")
    p.add_argument("--spectra", help="CSV of gradient vs AdamW-update spectra, drawn if present")
    p.add_argument("--spectra-label", default="",
                   help="the workload the spectra come from (default: the sidecar's `workload`)")
    p.add_argument("--title", default="", help="figure title (default none)")
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
    spectra, spectra_label = None, args.spectra_label
    if args.spectra and os.path.exists(args.spectra):
        spectra = pc.read_csv(args.spectra)
        pc.require(spectra, ["k", "energy_gradient", "energy_update"], args.spectra)
        spectra_label = spectra_label or pc.read_meta(args.spectra).get("workload", "")
        if not spectra_label:
            print(f"{sys.argv[0]}: warning: no --spectra-label and no `workload` in "
                  f"{args.spectra}.meta.json: the spectra panel cannot say its workload",
                  file=sys.stderr)
    elif args.spectra:
        print(f"{sys.argv[0]}: {args.spectra} not found; no spectra panel", file=sys.stderr)

    targets = tuple(t for t in args.targets.split(",") if t)
    col = args.width == "column"
    pc.setup_style(args.width)
    # One flat grid (constrained layout handles it): per heatmap the map, its mean-rank side
    # panel and its colour bar; the spectra panel last. Full width: one row; column: one row
    # per panel.
    unit = [6.0, 1.1, 0.3]
    if col:
        nrows = len(panels) + (1 if spectra else 0)
        fig = pc.plt.figure(figsize=(pc.WIDTHS_IN["column"], 2.9 * nrows),
                            layout=pc.ConstrainedLayoutEngine(h_pad=0.03, w_pad=0.02))
        gs = fig.add_gridspec(nrows, 3, width_ratios=unit)
        cell = [(gs[i, 0], gs[i, 1], gs[i, 2]) for i in range(len(panels))]
        spectra_cell = gs[len(panels), :] if spectra else None
    else:
        ratios = unit * len(panels) + ([7.5] if spectra else [])
        fig = pc.plt.figure(figsize=(pc.WIDTHS_IN["full"], 3.3),
                            layout=pc.ConstrainedLayoutEngine(h_pad=0.03, w_pad=0.02))
        gs = fig.add_gridspec(1, len(ratios), width_ratios=ratios)
        cell = [(gs[0, 3 * i], gs[0, 3 * i + 1], gs[0, 3 * i + 2]) for i in range(len(panels))]
        spectra_cell = gs[0, len(ratios) - 1] if spectra else None
    grid_cols = pc.grid_columns(args.allocation_csv, rows)
    print(f"{'panel':<40}{'versions':>9}{'matrices':>9}{'mean kept':>10}{'max kept':>9}")
    first_ax = None
    # One colour scale for every panel, so the same colour is the same rank side by side.
    vmax = max([float(r["kept"]) for r in rows
                if (r.get("combo", ""), r["arm"]) in set(panels)] or [1.0])
    sides = []
    for i, (combo, arm) in enumerate(panels):
        rs = [r for r in rows if r["arm"] == arm and r.get("combo", "") == combo]
        versions = sorted({int(r["version"]) for r in rs})
        matrices = sorted({int(r["matrix"]) for r in rs})
        vi = {v: j for j, v in enumerate(versions)}
        grid_kept = [[0.0] * len(versions) for _ in matrices]
        for r in rs:
            grid_kept[int(r["matrix"])][vi[int(r["version"])]] = float(r["kept"])
        share = {} if col or first_ax is None else {"sharey": first_ax}
        ax = fig.add_subplot(cell[i][0], **share)
        side = fig.add_subplot(cell[i][1], sharey=ax)
        cax = fig.add_subplot(cell[i][2])
        im = ax.imshow(grid_kept, aspect="auto", origin="upper", interpolation="nearest",
                       cmap="viridis", vmin=0, vmax=vmax,
                       extent=(versions[0] - 0.5, versions[-1] + 0.5, len(matrices) - 0.5, -0.5))
        named = {int(r["matrix"]): r["matrix_name"] for r in rs if r.get("matrix_name")}
        if len(named) == len(matrices):  # allocation.csv names its matrices
            names = [pc.short_matrix_name(named[m]) for m in matrices]
        else:  # files written before matrix_name: names from the canonical layout order
            names = pc.matrix_names(len(matrices), targets)
        if names:
            ax.set_yticks(range(len(matrices)))
            ax.set_yticklabels(names, fontsize="x-small")
        else:
            print(f"{sys.argv[0]}: {len(matrices)} matrices are not whole layers of "
                  f"{','.join(targets)}: labelled by index", file=sys.stderr)
            ax.yaxis.set_major_locator(MaxNLocator(8, integer=True))
            ax.set_ylabel("matrix index (layout order)")
        if first_ax is not None and not col:
            ax.tick_params(axis="y", labelleft=False)
        first_ax = first_ax or ax
        ax.set_xlabel("adapter version")
        ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        what = pc.combo_label(rs[0], grid_cols) if len(combos) > 1 else ""
        t = ax.set_title(f"({'abcdefgh'[i]}) {arm}" + (f", {what}" if what else ""), loc="left")
        t.set_in_layout(False)
        cb = fig.colorbar(im, cax=cax)
        # The label sits above the bar: on its side it read as the next panel's y-label.
        cb.ax.set_title("rank\nkept", fontsize="x-small", loc="left")
        cb.ax.tick_params(labelsize="x-small")
        cb.ax.yaxis.set_major_locator(MaxNLocator(5, integer=True))
        means = [sum(row) / len(row) for row in grid_kept]
        side.barh(range(len(matrices)), means, color="#D55E00", height=0.8)
        sides.append((side, max(means or [0.0])))
        side.set_xlabel("mean", fontsize="small")
        side.set_xlim(0, max(means) * 1.1 if max(means) > 0 else 1)
        side.xaxis.set_major_locator(MaxNLocator(2, integer=True))
        side.tick_params(axis="x", labelsize="x-small")
        side.tick_params(axis="y", labelleft=False, left=False)
        side.grid(alpha=0.3, axis="x")
        flat = [k for row in grid_kept for k in row]
        print(f"{(arm + ' ' + combo)[:39]:<40}{len(versions):>9}{len(matrices):>9}"
              f"{sum(flat) / len(flat):>10.3g}{max(flat):>9.0f}")
    for side, _ in sides:  # the mean bars on one scale too
        side.set_xlim(0, 1.05 * max(m for _, m in sides) or 1.0)
    if spectra:
        ax = fig.add_subplot(spectra_cell)
        ks = [pc.num(r["k"]) for r in spectra]
        for col_name, label, colour, marker in (
                ("energy_gradient", "gradient", "#0072B2", "o"),
                ("energy_update", "AdamW update", "#E69F00", "s")):
            ys = cumulative([pc.num(r[col_name]) or 0.0 for r in spectra])
            ax.plot(ks, ys, color=colour, marker=marker, markersize=2.5,
                    markevery=max(1, len(ks) // 12), label=label)
        ax.set_xlabel("singular triplets kept (k)")
        ax.set_ylabel("fraction of Σσ² captured")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
        pc.panel_title(ax, "abcdefgh"[len(panels)], "energy in top-k triplets")
        if spectra_label:
            ax.text(0.97, 0.30, "\n".join(textwrap.wrap(spectra_label, 30)), ha="right",
                    va="bottom", transform=ax.transAxes, fontsize="small", color="#333333",
                    in_layout=False)
        print(f"spectra panel: {spectra_label or '(workload not given)'}")
    if args.title:
        fig.suptitle(args.title)
    pc.save(fig, args.out, note=not args.no_note)


if __name__ == "__main__":
    main()
