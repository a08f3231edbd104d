#!/usr/bin/env python3
"""make_seeds.py OUT_DIR HARNESS - writes the seed inputs of one fuzz harness, generated from the files the
repository ships (assets/, scenarios/, tests/data/) and the committed regression inputs, so that no seed
corpus is committed. Config seeds are lifted from where configs live: the example config, the simulator's
test config, the validation's run setups (each run made a whole estimate config) and the configs that
scenarios set. The checkpoint harness writes its own seeds (MC_FUZZ_WRITE_SEEDS, see fuzz_checkpoint.cpp)."""
import glob
import json
import os
import sys

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
out, harness = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
count = 0


def put(name, data):
    global count
    if isinstance(data, (dict, list)):
        data = json.dumps(data, indent=1)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(out, "%03d-%s" % (count, os.path.basename(name))), "wb") as f:
        f.write(data)
    count += 1


def files(*patterns):
    for p in patterns:
        for f in sorted(glob.glob(os.path.join(root, p), recursive=True)):
            if os.path.isfile(f):
                yield f


def load(f):
    try:
        with open(f, encoding="utf-8") as h:
            return json.load(h)
    except (ValueError, UnicodeDecodeError):
        return None


def scenario_configs(kind):
    """Configs that scenarios set: a "set" action with a whole config value, or the value of a key."""
    found = []
    for f in files("scenarios/*.json"):
        d = load(f)
        if not isinstance(d, dict):
            continue
        base = {}
        for step in d.get("steps", []):
            for a in step.get("actions", []):
                if a.get("do") == "set" and a.get("config") == kind:
                    v = a.get("value")
                    if isinstance(v, dict) and a.get("path", "") in ("", "/"):
                        base = v
                    elif a.get("path") and v is not None:
                        parts = [p for p in a["path"].split("/") if p]
                        cur = base
                        for p in parts[:-1]:
                            cur = cur.setdefault(p, {}) if isinstance(cur, dict) else {}
                        if isinstance(cur, dict) and parts:
                            cur[parts[-1]] = v
                    if base:
                        found.append(json.loads(json.dumps(base)))
    return found


def estimate_configs():
    cfgs = []
    for f in files("assets/examples/*.json", "tests/data/sim/*.json"):
        d = load(f)
        if d is not None:
            cfgs.append(d)
    setups = load(os.path.join(root, "tests/data/validation/run-setups.json")) or {}
    for r in setups.get("runs", [])[:12]:
        cfg = {k: r[k] for k in ("cluster", "software", "parallel") if k in r}
        cfg["model"] = {"preset": "gpt3-175b"}
        cfgs.append(cfg)
    cfgs += scenario_configs("estimate") + scenario_configs("simulate")
    return cfgs


regressions = os.path.join(root, "tests", "fuzz", "regressions", harness)
for f in files(os.path.join(regressions, "*")):
    put(f, open(f, "rb").read())

if harness == "json_doc":
    for f in files("assets/**/*.json", "scenarios/*.json", "tests/data/**/*.json"):
        put(f, open(f, "rb").read())
elif harness in ("perf_config", "sim_config"):
    for i, c in enumerate(estimate_configs()):
        put("config%d.json" % i, c)
    if harness == "sim_config":
        base = load(os.path.join(root, "assets/examples/gpt3-azure-2020.json")) or {}
        put("sim-sections.json", dict(base, stragglers=[{"gpu": 0, "speed": 0.5}],
                                      degraded_links=[{"node": 1, "bandwidth_fraction": 0.25}],
                                      sim={"bucket_bytes": 4e7, "dp_algorithm": "ring", "spines": 2}))
elif harness == "train_config":
    for i, c in enumerate(scenario_configs("train")):
        put("scenario-train%d.json" % i, c)
    put("small.json", {"model": {"context": 8, "layers": 1, "width": 8, "heads": 2}, "batch": 4, "steps": 2})
    put("layout.json", {"dp": 2, "tp": 2, "pp": 2, "zero": 1, "micro_batches": 2, "schedule": "gpipe",
                        "model": {"context": 8, "layers": 2, "width": 8, "heads": 2}, "batch": 4})
    put("zero3.json", {"dp": 2, "zero": 3, "model": {"context": 8, "layers": 1, "width": 16, "heads": 2},
                       "optim": {"lr": 0.01, "warmup_steps": 1}, "batch": 2, "memory_limit_bytes": 1e6})
elif harness == "corpus":
    for f in files("assets/corpus/*"):
        put(f, open(f, "rb").read())
elif harness in ("scenario", "scenario_player"):
    for f in files("scenarios/*.json", "tests/data/scenarios/*.json"):
        put(f, open(f, "rb").read())
elif harness == "catalog":
    for f in files("assets/catalog/*.json", "tests/data/bad_catalog/*.json"):
        put(f, open(f, "rb").read())
elif harness == "url_state":
    for q in ("?scenario=gpt3-2020&step=3", "?panel=perf", "?panel=lab/scaling&scenario=dgx1-2016&step=1",
              "scenario=network-matters&step=99999", "?step=2&utm_source=x#top", "?scenario=a%2Fb&panel=%E2%82%AC",
              "?panel=perf&present=1&edits=parallel.tp:4,~parallel.schedule,training:{\"precision\":\"bf16\"}",
              "?edits=a.b:[1,{\"c\":\"d,e\"}],x:true,y:1e999,z:\"q\"", "?edits=a:{},a.b:1", "?edits=~a:1,"):
        put("query.txt", q)
print(count)
