#!/usr/bin/env python3
"""Makes tests/data/validation/public-cases.json from ../shared/validation/public-cases.json: the published
numbers, inputs, units, tolerances and source references, without the notes' prose (the figures are ours
to test against; the sentences are not ours to ship). Re-run when the shared file changes."""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "shared", "validation", "public-cases.json")
dst = os.path.join(here, "..", "tests", "data", "validation", "public-cases.json")
cases = json.load(open(src))
out = []
for c in cases:
    keep = {k: c[k] for k in ("id", "category", "title", "inputs", "formula", "verification") if k in c}
    keep["source"] = {k: c["source"][k] for k in ("ref", "id", "location") if k in c.get("source", {})}
    keep["expected"] = [{k: e[k] for k in ("quantity", "value", "units", "tolerance", "kind") if k in e}
                        for e in c["expected"]]
    out.append(keep)
json.dump(out, open(dst, "w"), indent=1)
print(f"wrote {dst}: {len(out)} cases")
