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
