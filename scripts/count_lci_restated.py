#!/usr/bin/env python3
"""Lines of LCI code that restate an Open-MX concept, file by file.

Issue 45 wants under 500. Usage: scripts/count_lci_restated.py [SRC_DIR].

Method: code lines = non-blank lines that are not comments (//, ///, //!)
nor attributes (#[...]), outside #[cfg(test)] items and test-only files.
Each item (a fn, struct, enum, const, or a fn of an impl) is classed:
R  restates a concept the Open-MX side implements on its own (event kinds
   and routing, world building and loop control, packet slab, host
   library, NIC firmware, wire and back-pressure, multicast glue, watchdog
   / clock / signal glue, reliability, programs, metrics naming, scenario
   reading);
L  LCI-only (no Open-MX counterpart: the DSM program and its mixes);
N  not counted (use / mod lines; the shared keys a LANai platform derives
   from its own tables, and the earlier preset shape's keys with their
   places now).
"""

import os
import re
import sys

KW = re.compile(
    r"^(\s*)(?:pub(?:\([a-z]+\))?\s+)?(?:unsafe\s+)?(fn|struct|enum|impl|const|static|type|mod|trait|use|macro_rules!)\b\s*(?:<[^>]*>\s*)?([A-Za-z_][A-Za-z0-9_]*)?"
)


def items(path):
    """List the items of Rust file `path`: (name, code lines, in a test)."""
    with open(path) as fh:
        lines = fh.read().split("\n")
    out = []  # (name, code_lines, test)

    def code(s):
        t = s.strip()
        return bool(t) and not t.startswith("//")

    def walk(lo, hi, indent, prefix):
        nonlocal out
        i = lo
        test = False
        while i < hi:
            s = lines[i]
            if s.strip() == "#[cfg(test)]":
                test = True
                i += 1
                continue
            m = KW.match(s)
            if m and len(m.group(1)) == indent:
                kind, name = m.group(2), m.group(3) or ""
                if kind == "impl":
                    name = s.strip().rstrip("{").strip()
                # find end: if line ends with ';' -> single line; else brace match
                j = i
                depth = 0
                started = False
                while j < hi:
                    t = re.sub(r'"(\\.|[^"\\])*"', '""', lines[j])
                    t = re.sub(r"'(\\.|[^'\\])'", "''", t)
                    t = t.split("//")[0]
                    depth += t.count("{") - t.count("}")
                    if "{" in t:
                        started = True
                    if (started and depth <= 0) or (not started and t.rstrip().endswith(";")):
                        break
                    j += 1
                n = sum(code(lines[k]) for k in range(i, j + 1))
                if kind == "impl" and not test:
                    walk(i + 1, j, indent + 4, name + "::")
                    out.append(
                        (prefix + name + " {}", sum(1 for k in (i, j) if code(lines[k])), test)
                    )
                else:
                    out.append((prefix + kind + " " + name, n, test))
                test = False
                i = j + 1
                continue
            if code(s) and not s.strip().startswith("#["):
                if not test:
                    loose[0] += 1
                test = False
            i += 1

    loose = [0]
    walk(0, len(lines), 0, "")
    out.append(("(outside items: macros, attributes)", loose[0], False))
    return out


RULES = {
    "lci/mod.rs": ("R", {}),
    "lci/cpu.rs": ("R", {}),
    "library/lci/program.rs": ("R", {}),
    # The LCI host library, the second library beside the Open-MX one
    # (`library/lci/`): R, as lci/host.rs and the library rules of
    # lci/mod.rs, lci/cpu.rs and lci/multicast.rs were before it moved.
    "library/lci/mod.rs": ("R", {}),
    "library/lci/mc.rs": ("R", {}),
    "lci/ni.rs": ("R", {}),
    "nic/lanai.rs": ("R", {}),
    "lci/multicast.rs": ("R", {}),
    "lci/metrics.rs": ("R", {}),
    "lci/workload.rs": ("R", {}),
    "lci/apps.rs": ("R", {}),
    "lci/process.rs": ("R", {}),
    "lci/dsm.rs": ("L", {}),
    "library/lci/reliable.rs": ("R", {}),
    "sim/lci_stack.rs": ("R", {}),
    "config/lci.rs": ("R", {}),
    # config/lci.rs's successor: the LCI part of the one scenario file (the
    # refusal of another stack's keys serves every stack).
    "config/scenario/lci.rs": ("R", {"refuse_other_stacks_keys": "N", "LCI_NIC": "N", "LCI_PROTOCOL": "N"}),
    # The LANai's and the LCI library's own tables beside the shared
    # platform: R, as their predecessors in config/lci_platform.rs.
    "config/lanai.rs": ("R", {}),
    # What a LANai platform derives (the successor of that file's mapping
    # into the shared platform) and the earlier shape's keys with their
    # places now are N; the checks of the LANai's tables are R, as
    # LciPlatform::validate was.
    "config/lanai_derive.rs": ("N", {"fn validate": "R"}),
    "config/lci_workload.rs": ("R", {"enum Mix": "L", "for Mix": "L"}),
    # The one `[workload]` table of every stack: only the LCI stack's DSM
    # mixes are LCI code (its LCI-only keys are fields of the shared table).
    "config/workload.rs": ("N", {"enum Mix": "L", "for Mix": "L"}),
    # config/lci_workload.rs's successor: the one validation of that table
    # for every stack (`RunsOn`), the LCI stack's defaults beside the others.
    "config/workload_check.rs": ("N", {}),
}


def classify(f, name):
    """Class item `name` of file `f`: R, L or N (see the module docstring)."""
    default, exc = RULES[f]
    if name.startswith("use ") or name.startswith("mod ") or name.endswith(" {}"):
        return "N"
    for k, c in exc.items():
        if k in name:
            return c
    return default


root = (
    sys.argv[1]
    if len(sys.argv) > 1
    else os.path.join(os.path.dirname(__file__), "..", "crates", "nicsim", "src")
)
tot = {"R": 0, "L": 0, "N": 0}
for f in RULES:
    p = os.path.join(root, f)
    if not os.path.exists(p):
        continue
    c = {"R": 0, "L": 0, "N": 0}
    for name, n, test in items(p):
        if not test:
            c[classify(f, name)] += n
    for k in c:
        tot[k] += c[k]
    with open(p) as fh:
        raw = sum(1 for _ in fh)
    print(
        f"{f:28s} raw {raw:4d}  code {sum(c.values()):4d}",
        f"restated {c['R']:4d}  lci-only {c['L']:4d}",
    )
print(
    f"{'total':28s}          code {sum(tot.values()):4d}",
    f"restated {tot['R']:4d}  lci-only {tot['L']:4d}",
)
