#!/usr/bin/python3
"""The sim/ include ladder: which part of sim/ may include which. Exits 1, naming each file, line
and include, when a file includes a part above its own rung or a sibling on its rung.

    /usr/bin/python3 tests/sim/include_ladder.py [ROOT]

Rungs, bottom to top (a file may include its own part and any part on a lower rung):
  0 values     the value types scenario, net and roles share: sim/net/units.*, sim/net/link-spec.*,
               sim/roles/peer-ids.h
  1 scenario   sim/scenario/: the scenario format, its defaults and validation
  2 net, roles sim/net/ (links, transports, TCP models) and sim/roles/ (learner, worker, relay,
               whoever runs them); siblings: neither includes the other
  3 run        sim/run/: what every driver shares (context builder, results, summary, output files)
  4 ns3, process
               sim/drivers/ns3/ (the simulator: ns-3 apps, arm loop, fault injector) and
               sim/drivers/process/ (roles as processes, hilo-emu's supervisor); siblings
  5 emulation  sim/drivers/emulation/: emulated links, a NodeNetwork the process driver runs over
  6 top        sim/cli/ (the hilo-sim CLI, the catalog) and every executable's *-main.cc
"""

import os
import re
import sys

VALUES = ("sim/net/units.", "sim/net/link-spec.", "sim/roles/peer-ids.h")
PARTS = [  # (prefix, part, rung)
    ("sim/scenario/", "scenario", 1),
    ("sim/net/", "net", 2),
    ("sim/roles/", "roles", 2),
    ("sim/run/", "run", 3),
    ("sim/drivers/ns3/", "ns3", 4),
    ("sim/drivers/process/", "process", 4),
    ("sim/drivers/emulation/", "emulation", 5),
    ("sim/cli/", "top", 6),
]
# Includes that climb today, each with the reason it is kept; a new one fails the check.
KNOWN = {
    # The validator checks a scenario's TCP buffer against the flow model's window formula.
    ("sim/scenario/scenario-validator-network.cc", "sim/net/flow/tcp-flow-model.h"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(sim/[^"]+)"')


def place(path):
    """(part, rung) of a file under sim/."""
    if path.startswith(VALUES):
        return "values", 0
    if path.endswith("-main.cc") or path == "sim/hilo-sim-main.cc":
        return "top", 6
    for prefix, part, rung in PARTS:
        if path.startswith(prefix):
            return part, rung
    return None, None


def violations(root):
    found = []
    for folder, dirs, files in os.walk(os.path.join(root, "sim")):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.relpath(os.path.join(folder, name), root)
            part, rung = place(path)
            if part is None:
                continue
            with open(os.path.join(root, path), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    tpart, trung = place(target)
                    if tpart is None or tpart == part or trung < rung or (path, target) in KNOWN:
                        continue
                    why = "climbs the ladder" if trung > rung else "includes a sibling"
                    found.append(f"{path}:{number}: #include \"{target}\": {part} (rung {rung}) "
                                 f"{why} to {tpart} (rung {trung})")
    return found


def self_test():
    """The check itself: a tree that keeps to the ladder passes, each kind of break is named."""
    import tempfile
    cases = {
        "sim/run/a.cc": ('#include "sim/run/b.h"\n#include "sim/net/units.h"\n'
                         '#include "sim/roles/peer-ids.h"\n', []),
        "sim/run/b.h": ('#include "sim/drivers/ns3/app.h"\n', ["climbs the ladder to ns3"]),
        "sim/net/c.cc": ('#include "sim/roles/role-port.h"\n', ["includes a sibling"]),
        "sim/drivers/emulation/d.cc": ('#include "sim/drivers/process/node-network.h"\n', []),
        "sim/drivers/process/e.cc": ('#include "sim/drivers/emulation/ns3-network.h"\n'
                                     '#include "sim/cli/catalog.h"\n',
                                     ["climbs the ladder to emulation", "climbs the ladder to top"]),
        "sim/drivers/process/x-main.cc": ('#include "sim/cli/catalog.h"\n', []),
    }
    with tempfile.TemporaryDirectory() as root:
        for path, (text, _) in cases.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        found = violations(root)
    ok = True
    for path, (_, wanted) in cases.items():
        got = [v for v in found if v.startswith(path + ":")]
        if len(got) != len(wanted) or any(w not in g for w, g in zip(wanted, got)):
            print(f"self-test: {path}: expected {wanted}, got {got}", file=sys.stderr)
            ok = False
    return ok


def main():
    if not self_test():
        return 1
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    root = os.path.abspath(root)
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"include_ladder.py: {len(found)} include(s) break the sim/ ladder (see the top of "
              "tests/sim/include_ladder.py)", file=sys.stderr)
        return 1
    print("include_ladder.py: every sim/ include keeps to the ladder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
