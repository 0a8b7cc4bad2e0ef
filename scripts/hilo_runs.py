"""Reads run folders of hilo-sim / hilo-emu and this project's CSVs: the one reader the scripts
share, and the way into a run from a notebook.

    import sys; sys.path.insert(0, "scripts")
    import hilo_runs
    run = hilo_runs.load_run("results/runs/quickstart")
    run.arms                                  # ['full', 'hilo-spar'] (summary.json's order)
    run.arm("hilo-spar")["update_latency_s"]  # the arm's summary.json entry
    run.steps.column("quality", arm="full")   # floats, None where the cell is empty
    run.workers.where(arm="full", hash_ok="1")
    run.steps.to_pandas()                     # a DataFrame, where pandas is installed

A table is every CSV of the folder (steps, workers, rollouts, allocation, ...), its cells kept as
the strings the file holds (column() converts). Comment lines ('#' first: older files' provenance,
sync-curves' footers) are skipped and kept in Table.comments.
"""
import csv
import json
import os


class Table:
    """Rows of one CSV: `rows` a list of dicts (column -> string), `columns` the header."""

    def __init__(self, columns, rows, comments=(), path=""):
        self.columns = list(columns)
        self.rows = list(rows)
        self.comments = list(comments)
        self.path = path

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def where(self, **equal):
        """The rows whose named columns hold exactly these strings, as a Table."""
        want = {k: str(v) for k, v in equal.items()}
        return Table(self.columns, [r for r in self.rows
                                    if all(r.get(k) == v for k, v in want.items())],
                     self.comments, self.path)

    def column(self, name, arm=None, convert=float):
        """One column's cells converted (None where empty), of one arm's rows if `arm`."""
        if name not in self.columns:
            raise KeyError(f"{self.path or 'table'}: no column '{name}' "
                           f"(columns: {', '.join(self.columns)})")
        rows = self.rows if arm is None else self.where(arm=arm).rows
        return [convert(r[name]) if r[name] not in ("", None) else None for r in rows]

    def to_pandas(self):
        import pandas  # optional: only a notebook that asks for a DataFrame needs it
        frame = pandas.DataFrame(self.rows, columns=self.columns)
        return frame.apply(pandas.to_numeric, errors="ignore")


def read_table(path):
    """A CSV file as a Table; '#' lines anywhere in it are skipped (kept in .comments)."""
    comments, body = [], []
    with open(path, newline="") as f:
        for line in f:
            (comments if line.startswith("#") else body).append(line)
    reader = csv.DictReader(body)
    rows = list(reader)
    return Table(reader.fieldnames or [], rows, comments, path)


def read_csv(path):
    """The rows of a CSV file as dicts, '#' lines skipped."""
    return read_table(path).rows


def comment_values(comments, keys=None):
    """The key=value words of comment lines as floats ('# cpu_s=1.2 wall_s=3' -> {...}); only
    `keys` when given, and words whose value is not a number are left out."""
    out = {}
    for line in comments:
        for word in line.lstrip("#").split():
            k, eq, v = word.partition("=")
            if not eq or (keys is not None and k not in keys):
                continue
            try:
                out[k] = float(v)
            except ValueError:
                pass
    return out


def summary_field(arm, path):
    """A summary.json value by its dotted path ("update_latency_s.p50"); None when absent."""
    v = arm
    for k in path.split("."):
        if not isinstance(v, dict) or k not in v:
            return None
        v = v[k]
    return v


class Run:
    """One run folder: summary.json as `summary`, its CSVs as `tables` (by file stem)."""

    def __init__(self, path, summary, tables):
        self.path = path
        self.summary = summary
        self.tables = tables

    @property
    def arms(self):
        return [a["name"] for a in self.summary.get("arms", [])]

    def arm(self, name):
        for a in self.summary.get("arms", []):
            if a["name"] == name:
                return a
        raise KeyError(f"{self.path}: no arm '{name}' (arms: {', '.join(self.arms)})")

    def table(self, name):
        if name not in self.tables:
            raise KeyError(f"{self.path}: no {name}.csv (has: {', '.join(sorted(self.tables))})")
        return self.tables[name]

    @property
    def steps(self):
        return self.table("steps")

    @property
    def workers(self):
        return self.table("workers")


def load_run(path):
    """Reads a run folder (what `hilo-sim run --out DIR` or `hilo-emu run` wrote). Raises
    FileNotFoundError naming the folder when it has no summary.json."""
    summary_path = os.path.join(path, "summary.json")
    if not os.path.isfile(summary_path):
        raise FileNotFoundError(f"{path}: no summary.json (not a finished run folder)")
    with open(summary_path) as f:
        summary = json.load(f)
    tables = {}
    for name in sorted(os.listdir(path)):
        if name.endswith(".csv"):
            tables[name[:-4]] = read_table(os.path.join(path, name))
    return Run(path, summary, tables)


def ratio(num, den):
    """num / den, nan when den is 0."""
    return num / den if den else float("nan")


def transfer_times(run_dir, arm=None, include_resync=True):
    """Per arm (or of one arm): the seconds from each version's publication (steps.csv's
    sim_time_s) to each worker's receipt (workers.csv's received_s); a resync's rows only when
    include_resync."""
    published = {}
    for row in read_csv(os.path.join(run_dir, "steps.csv")):
        if row["version"] != "0" and (arm is None or row["arm"] == arm):
            published[(row["arm"], row["version"])] = float(row["sim_time_s"])
    out = {}
    for row in read_csv(os.path.join(run_dir, "workers.csv")):
        key = (row["arm"], row["version"])
        if key not in published or not row["received_s"]:
            continue
        if not include_resync and row.get("resync", "0") != "0":
            continue
        out.setdefault(row["arm"], []).append(float(row["received_s"]) - published[key])
    return out if arm is None else out.get(arm, [])
