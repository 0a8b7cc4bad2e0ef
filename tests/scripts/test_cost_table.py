#!/usr/bin/python3
"""scripts/cost_table.py: a remade table replaces the old one and keeps the "## " sections that
were written after it at other commits (notes, must-show runs), once, without its old prose."""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cost_table  # noqa: E402

ROW = {"model": "M", "workers": "8", "arm": "full", "status": "ok", "run_wall_s": "9.9",
       "run_cpu_s": "5.5", "arm_wall_s": "3.1", "arm_wall_s_per_step": "0.62",
       "rollout_s": "0.4", "gradient_s": "0.7"}
OLD = ("# Simulation cost by workers x model x arm\n\n- commit: old\n\n"
       "| model | workers | arm |\n|---|---:|---|\n| M | 8 | old-row |\n\n"
       "How to read it: the old numbers.\n\n"
       "## Must-show runs\n\nmeasured at commit abc: 212 CPU s\n\n### A run\n\ntext\n")


class CostTable(unittest.TestCase):
    def test_a_remade_table_keeps_the_later_sections_and_drops_the_old_table(self):
        md = cost_table.render_md(["commit: new"], [ROW], OLD)
        self.assertIn("- commit: new\n", md)
        self.assertIn("| M | 8 | full | 9.9 | 5.5 | 3.1 | 0.62 | 0.4 | 0.7 |\n", md)
        self.assertNotIn("old-row", md)
        self.assertNotIn("How to read it", md)
        self.assertTrue(md.endswith("\n\n" + cost_table.KEPT_NOTE + "\n\n## Must-show runs\n\n"
                                    "measured at commit abc: 212 CPU s\n\n### A run\n\ntext\n"),
                        md)

    def test_remaking_twice_keeps_each_section_once(self):
        once = cost_table.render_md(["commit: 1"], [ROW], OLD)
        twice = cost_table.render_md(["commit: 2"], [ROW], once)
        self.assertEqual(twice, once.replace("commit: 1", "commit: 2"))
        self.assertEqual(twice.count("## Must-show runs"), 1)
        self.assertEqual(twice.count(cost_table.KEPT_NOTE), 1)

    def test_a_first_table_has_no_kept_sections(self):
        md = cost_table.render_md(["commit: new"], [ROW])
        self.assertNotIn(cost_table.KEPT_NOTE, md)
        self.assertTrue(md.endswith("| 0.4 | 0.7 |\n"))

    def test_a_failed_model_is_a_row_naming_its_error(self):
        row = dict(ROW, arm="-", status="exit 2: does not fit")
        md = cost_table.render_md([], [row])
        self.assertIn("| M | 8 | - | 9.9 | 5.5 | exit 2: does not fit | | | |\n", md)


if __name__ == "__main__":
    unittest.main()
