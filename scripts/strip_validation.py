#!/usr/bin/env python3
"""Makes tests/data/validation/{public-cases,more-public-cases}.json from ../shared/validation/: the published
numbers, inputs, units, tolerances and source references, without the notes' prose (the figures are ours
to test against; the sentences are not ours to ship). Re-run when a shared file changes.

  python3 scripts/strip_validation.py [SHARED_VALIDATION_DIR]
"""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
src_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "shared", "validation")
dst_dir = os.path.join(here, "..", "tests", "data", "validation")

# Inputs of more-public-cases.json that are data (numbers, ids, short settings); the prose ones (how the
# source describes the network, other remarks) stay behind: tests/data/validation/run-setups.json says in
# our words what we take from them.
RUN_INPUTS = ("gpu", "gpu_memory_gb", "num_gpus", "gpus_per_node", "framework", "year", "model", "tp", "pp", "dp",
              "zero_stage", "micro_batch", "global_batch", "grad_accum", "activation_recompute", "precision")


def strip_case(c, inputs_keep=None):
    keep = {k: c[k] for k in ("id", "category", "title", "inputs", "formula", "verification") if k in c}
    if inputs_keep is not None:
        keep["inputs"] = {k: v for k, v in c.get("inputs", {}).items() if k in inputs_keep}
    keep["source"] = {k: c["source"][k] for k in ("ref", "id", "location") if k in c.get("source", {})}
    keep["expected"] = [{k: e[k] for k in ("quantity", "value", "units", "tolerance", "kind") if k in e}
                        for e in c["expected"]]
    return keep


def write(name, cases):
    dst = os.path.join(dst_dir, name)
    json.dump(cases, open(dst, "w"), indent=1)
    print(f"wrote {dst}: {len(cases)} cases")


write("public-cases.json", [strip_case(c) for c in json.load(open(os.path.join(src_dir, "public-cases.json")))])
more = json.load(open(os.path.join(src_dir, "more-public-cases.json")))
write("more-public-cases.json", [strip_case(c, RUN_INPUTS) for c in more["cases"]])
