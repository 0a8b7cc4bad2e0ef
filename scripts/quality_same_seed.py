"""The planted-teacher report of scripts/quality_protocol.py (--grid planted): each run's final
quality as a share of the progress of the full-sync run of the same seed, and the mean with its
95% t-interval per (workload, scheme, budget). Not a driver: quality_protocol.py runs the curves
and calls write_tables; plot_protocol.py draws table.csv.

Writes under OUT (each CSV with its NAME.csv.meta.json: command, commit, date):
  runs.csv    one row per run: final quality, share of full sync's progress on the same seed,
              bytes per update, hash agreement, master gap, encode/decode time
  table.csv   one row per (workload, scheme, budget): mean share and its 95% interval
The tables cover every curve of the given workloads under OUT/runs, also those of earlier
invocations with other schemes or budgets.
"""
import os
import re
import statistics

import hilo_runs
import stats_helper

RUN_FIELDS = ["workload", "scheme", "budget", "seed", "metric", "initial_quality",
              "final_quality", "share_of_full", "mean_quality", "mean_share_of_full",
              "fraction_pct", "hash_mismatches", "gradient_at_replicas",
              "master_gap_rel_l2_last", "encode_ms", "decode_ms"]
TABLE_FIELDS = ["workload", "scheme", "budget", "n", "fraction_pct", "share_mean", "share_ci95",
                "share_min", "final_quality_mean", "mean_share_mean", "hash_mismatches",
                "gradient_at_replicas", "encode_ms", "decode_ms"]


def summarize(path):
    """One run's row (without its names) from its sync-curves CSV."""
    table = hilo_runs.read_table(path)
    rows = table.rows
    footer = hilo_runs.comment_values([c for c in table.comments if "mean_payload_bytes" in c])
    evals = [r for r in rows if r["quality"] != ""]
    steps = [r for r in rows if r["version"] != "0"]
    mean = lambda key: statistics.fmean(float(r[key]) for r in steps) if steps else float("nan")
    gaps = [float(r["master_gap_rel_l2"]) for r in steps if r["master_gap_rel_l2"] != ""]
    return {
        "metric": rows[0]["metric"],
        "initial_quality": float(evals[0]["quality"]),
        "final_quality": float(evals[-1]["quality"]),
        "mean_quality": statistics.fmean(float(r["quality"]) for r in evals[1:]),
        "fraction_pct": footer.get("mean_fraction_pct", float("nan")),
        "hash_mismatches": int(footer.get("hash_mismatches", -1)),
        "gradient_at_replicas": int(all(r["gradient_at_replica_view"] == "1" for r in steps)),
        "master_gap_rel_l2_last": gaps[-1] if gaps else float("nan"),
        "encode_ms": 1000 * mean("encode_s"),
        "decode_ms": 1000 * mean("decode_s"),
    }


def collect(out, workloads, schemes, unbudgeted_tag):
    """Every run of `workloads` under OUT/runs whose scheme is one of `schemes` (in that order),
    with the share of the same seed's full-sync progress."""
    runs = []
    for workload in workloads:
        folder = os.path.join(out, "runs", workload)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            m = re.fullmatch(rf"(.+)-({unbudgeted_tag}|[0-9p]+pct)-s([0-9]+)\.csv", name)
            if not m or m.group(1) not in schemes:
                continue
            scheme, tag, seed = m.group(1), m.group(2), int(m.group(3))
            budget = tag if tag == unbudgeted_tag else tag.replace("pct", "%").replace("p", ".")
            r = {"workload": workload, "scheme": scheme, "budget": budget, "seed": seed}
            r.update(summarize(os.path.join(folder, name)))
            runs.append(r)
    order = {s: i for i, s in enumerate(schemes)}
    runs.sort(key=lambda r: (r["workload"], order[r["scheme"]],
                             0 if r["budget"] == unbudgeted_tag else float(r["budget"][:-1]),
                             r["seed"]))
    # Share of full sync's progress on the same seed: (q0 - q) / (q0 - q_full) for a loss,
    # (q - q0) / (q_full - q0) for a reward; both are (q - q0) / (q_full - q0).
    full = {(r["workload"], r["seed"]): r for r in runs if r["scheme"] == "full"}
    missing = sorted({(r["workload"], r["seed"]) for r in runs} - set(full))
    if missing:
        raise ValueError(f"no full-sync run for (workload, seed) {missing} under {out}/runs")
    for r in runs:
        f = full[(r["workload"], r["seed"])]
        r["share_of_full"] = ((r["final_quality"] - r["initial_quality"]) /
                              (f["final_quality"] - f["initial_quality"]))
        r["mean_share_of_full"] = ((r["mean_quality"] - r["initial_quality"]) /
                                   (f["mean_quality"] - f["initial_quality"]))
    return runs


def table_rows(runs):
    groups = {}
    for r in runs:
        groups.setdefault((r["workload"], r["scheme"], r["budget"]), []).append(r)
    rows = []
    for (workload, scheme, budget), rs in groups.items():
        shares = [r["share_of_full"] for r in rs]
        n = len(shares)
        ci = stats_helper.mean_ci(shares)[1] if n > 1 else 0
        rows.append(dict(zip(TABLE_FIELDS, [
            workload, scheme, budget, n,
            f"{statistics.fmean(r['fraction_pct'] for r in rs):.4g}",
            f"{statistics.fmean(shares):.4f}", f"{ci:.4f}", f"{min(shares):.4f}",
            f"{statistics.fmean(r['final_quality'] for r in rs):.5g}",
            f"{statistics.fmean(r['mean_share_of_full'] for r in rs):.4f}",
            sum(r["hash_mismatches"] for r in rs),
            min(r["gradient_at_replicas"] for r in rs),
            f"{statistics.fmean(r['encode_ms'] for r in rs):.3g}",
            f"{statistics.fmean(r['decode_ms'] for r in rs):.3g}"])))
    return rows


def write_tables(out, workloads, schemes, unbudgeted_tag, write_csv):
    """Writes OUT/runs.csv and OUT/table.csv with `write_csv(path, fields, rows)` (the protocol's
    writer: floats as %.6g, the sidecar with command, commit and date); returns table.csv's rows."""
    runs = collect(out, workloads, schemes, unbudgeted_tag)
    write_csv(os.path.join(out, "runs.csv"), RUN_FIELDS, runs)
    rows = table_rows(runs)
    write_csv(os.path.join(out, "table.csv"), TABLE_FIELDS, rows)
    return rows
