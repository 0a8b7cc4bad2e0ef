"""The pass/fail bookkeeping every tests/scripts/test_*.py shares.

    from checks import Checks
    c = Checks()
    c.check(cond, "what is checked", detail)   # prints "ok   ..." or "FAIL ..." (+ detail)
    return c.finish()                          # 0 if all passed, else 1 (with the count)
"""


class Checks:
    def __init__(self, detail_chars=3000):
        self.failures = []
        self.detail_chars = detail_chars

    def check(self, cond, what, detail=""):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            if detail:
                print(str(detail)[-self.detail_chars:], flush=True)
            self.failures.append(what)
        return bool(cond)

    def finish(self, kept=""):
        """Exit status: 1 (and the count of failures, plus `kept`) if any check failed, else 0."""
        if self.failures:
            print(f"{len(self.failures)} check(s) failed{kept}", flush=True)
            return 1
        print("all checks passed", flush=True)
        return 0


def report(failures):
    """For a test that gathers its failures as messages: prints them and the count; exit status."""
    import sys
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print(f"{len(failures)} checks failed" if failures else "all checks passed")
    return 1 if failures else 0


def fake_binary(folder, text, name="fake-bin"):
    """Writes `text` (a script with its #! line) to folder/name, executable; returns the path."""
    import os
    import stat
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path
