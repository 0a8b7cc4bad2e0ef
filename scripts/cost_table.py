#!/usr/bin/python3
"""What a simulation costs: wall and CPU seconds per run and per simulated step, by worker count,
modelled LLM and arm, in the flow network model (results/sim/cost-table.{csv,md}).

Runs scenarios/quickstart.textproto (full vs hilo-spar; half A10G, half RTX 4090 workers) once per
(workers, llm_profile), one run at a time (timings stay comparable), through
scripts/sweep_engine.py (done/total/ETA; a failed run's log kept and its end printed), and reads
each arm's wall time from timing.json. Models that do not fit the workers' GPUs are listed with
hilo-sim's own validation error instead. Writes OUT.csv and OUT.md (an existing OUT.md keeps its
"## " sections, written at other commits, after the new table); OUT defaults to
results/runs/cost-table/cost-table (ignored by git), the committed table is
--out results/sim/cost-table.

  /usr/bin/python3 scripts/cost_table.py --out results/sim/cost-table
  /usr/bin/python3 scripts/cost_table.py --workers 64 --models Qwen2.5-7B --steps 50 \
      --out results/sim/cost-64x50
"""
import argparse
import csv
import json
import os
import shutil
import sys
import tempfile

import sweep_engine as engine


KEPT_NOTE = ("The sections below were not made by this command: they were written at the "
             "commits they name and are kept as they were when the table above was remade.")


def kept_sections(previous):
    """The "## " sections of an earlier OUT.md (everything from its first "## " heading on): notes
    and tables written at other commits, which a rerun of the table at the top must not erase."""
    lines = previous.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("## "):
            return "".join(lines[i:])
    return ""


def render_md(meta, rows, previous=""):
    """OUT.md: a header naming how the table was made, the table, then kept_sections(previous)."""
    out = ["# Simulation cost by workers x model x arm\n\n"]
    out += [f"- {m}\n" for m in meta]
    out.append("\n| model | workers | arm | run wall s | run CPU s | arm wall s | per step | "
               "rollout s | gradient s |\n|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
    for r in rows:
        if r["status"] != "ok":
            out.append(f"| {r['model']} | {r['workers']} | - | {r['run_wall_s']} | "
                       f"{r['run_cpu_s']} | {r['status']} | | | |\n")
        else:
            out.append(f"| {r['model']} | {r['workers']} | {r['arm']} | {r['run_wall_s']} | "
                       f"{r['run_cpu_s']} | {r['arm_wall_s']} | {r['arm_wall_s_per_step']} | "
                       f"{r['rollout_s']} | {r['gradient_s']} |\n")
    kept = kept_sections(previous)
    if kept:
        out.append(f"\n{KEPT_NOTE}\n\n{kept}")
    return "".join(out)


def run_command(sim, scenario, workers, model, steps, network_model, out):
    half = workers // 2
    return [sim, "run", scenario, "--quiet", "--out", out,
           "--set", f"network.model={network_model}",
           "--set", f"llm_profile={model}",
           "--set", f"workers[0].count={workers - half}",
           "--set", f"workers[1].count={half}",
           "--set", f"workload.steps={steps}",
           "--set", f"workload.eval_every={steps}"]


def first_error(log_path):
    """The first line the run wrote after its command line (hilo-sim's error message)."""
    with open(log_path, errors="replace") as f:
        lines = [l.strip() for l in f.readlines()[1:] if l.strip()]
    return lines[0] if lines else "(no message)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    engine.add_binary_args(ap, "hilo-sim")
    ap.add_argument("--scenario", default="scenarios/quickstart.textproto")
    ap.add_argument("--workers", default="8,64,256,1024")
    ap.add_argument("--models", default="Llama-3.2-1B,Qwen2.5-7B,Qwen2.5-72B")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--network-model", default="flow")
    ap.add_argument("--out", default=os.path.join(engine.default_out("cost-table"), "cost-table"),
                    help="writes OUT.csv and OUT.md (default "
                         "results/runs/cost-table/cost-table)")
    args = ap.parse_args()

    try:
        engine.check_binary(args.hilo_sim, "hilo-sim")
    except engine.BadInput as e:
        print(f"cost_table.py: {e}", file=sys.stderr)
        sys.exit(2)
    rows = []
    load_before = os.getloadavg()
    work = tempfile.mkdtemp(prefix="hilo-cost-")
    ndone, ntotal = 0, len(args.models.split(",")) * len(args.workers.split(","))
    try:
        for model in args.models.split(","):
            for workers in [int(w) for w in args.workers.split(",")]:
                out = os.path.join(work, f"{model}-{workers}")
                task = {"slug": f"{model} x {workers}", "log_path": out + ".log",
                        "cmd": run_command(args.hilo_sim, args.scenario, workers, model,
                                           args.steps, args.network_model, out)}
                # One run at a time, so that wall times are not shared with another run.
                stopped = engine.run_all([task], engine.make_executor(1, None), "cost",
                                         of=(ndone, ntotal))
                ndone += 1
                if stopped:
                    sys.exit(128 + stopped)
                cmd, wall, cpu = task["cmd"], task["seconds"], task.get("cpu_s") or 0.0
                shown = " ".join(c if " " not in c else repr(c) for c in cmd[:4] + cmd[6:])
                if task["status"] != "ok":
                    why = first_error(task["log_path"])
                    rows.append({"model": model, "workers": workers, "steps": args.steps,
                                 "arm": "", "status": f"exit {task['exit_code']}: {why}",
                                 "run_wall_s": f"{wall:.1f}", "run_cpu_s": f"{cpu:.1f}",
                                 "arm_wall_s": "", "arm_wall_s_per_step": "",
                                 "rollout_s": "", "gradient_s": "", "command": shown})
                    if "fit" in why:
                        break  # more workers will not make it fit
                    continue
                with open(os.path.join(out, "timing.json")) as f:
                    timing = json.load(f)
                for arm in timing["arms"]:
                    rows.append({"model": model, "workers": workers, "steps": args.steps,
                                 "arm": arm["name"], "status": "ok",
                                 "run_wall_s": f"{wall:.1f}", "run_cpu_s": f"{cpu:.1f}",
                                 "arm_wall_s": f"{arm['wall_s']:.1f}",
                                 "arm_wall_s_per_step": f"{arm['wall_s_per_step']:.2f}",
                                 "rollout_s": f"{arm['rollout_s']:.1f}",
                                 "gradient_s": f"{arm['gradient_s']:.1f}", "command": shown})
                shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)

    fields = ["model", "workers", "steps", "arm", "status", "run_wall_s", "run_cpu_s",
              "arm_wall_s", "arm_wall_s_per_step", "rollout_s", "gradient_s", "command"]
    with open(args.out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    previous = ""
    if os.path.exists(args.out + ".md"):
        with open(args.out + ".md") as f:
            previous = f.read()
    meta = [f"command: {engine.command_line()}", f"commit: {engine.git_commit()}",
            f"machine: {os.cpu_count()} CPUs; load average before "
            f"{' '.join(f'{x:.2f}' for x in load_before)}, after "
            f"{' '.join(f'{x:.2f}' for x in load_after)}",
            f"scenario: {args.scenario} with network.model={args.network_model}, "
            f"{args.steps} steps; workers half A10G, half RTX 4090",
            "run wall/CPU: the whole hilo-sim process (both arms, setup, output); arm wall "
            "from timing.json; rollout and gradient: the real tiny-model work inside it"]
    with open(args.out + ".md", "w") as f:
        f.write(render_md(meta, rows, previous))


if __name__ == "__main__":
    main()
