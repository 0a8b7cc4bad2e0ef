#!/usr/bin/python3
"""scripts/csv_provenance.py: '#' lines move to the sidecar, and a CSV written again replaces them."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "scripts", "csv_provenance.py")


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


class CsvProvenance(unittest.TestCase):
    def test_lines_move_and_a_rewritten_csv_replaces_them(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.csv")
            with open(path, "w") as f:
                f.write("# command: tool 1\n# note\na,b\n1,2\n")
            self.assertEqual(run(path, "--set", "workload=w").returncode, 0)
            with open(path) as f:
                self.assertEqual(f.read(), "a,b\n1,2\n")
            # The tool writes the CSV again, with its own lines.
            with open(path, "w") as f:
                f.write("# command: tool 2\na,b\n3,4\n")
            self.assertEqual(run(path).returncode, 0)
            with open(path + ".meta.json") as f:
                meta = json.load(f)
            self.assertEqual(meta["comment_lines"], ["# command: tool 2"])
            self.assertEqual(meta["command"], "tool 2")
            self.assertEqual(meta["workload"], "w")  # other entries are kept
            with open(path) as f:
                self.assertEqual(f.read(), "a,b\n3,4\n")
            self.assertEqual(run(path, "--check").returncode, 0)

    def test_check_reports_a_csv_with_lines(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "y.csv")
            with open(path, "w") as f:
                f.write("# command: t\na\n1\n")
            r = run(path, "--check")
            self.assertEqual(r.returncode, 1)
            self.assertIn("1 '#' line(s)", r.stdout)


if __name__ == "__main__":
    unittest.main()
