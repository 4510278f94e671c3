#!/usr/bin/env python3
"""Cuts a replay fixture from a recorded `tle-bench --tune --exhaustive --json` document.

Keeps, per candidate, what tle-tune-replay reads (config, status, registers, shared and local
bytes, the median time, correctness) and drops the rest (the model's columns of the day, compile
times, spreads), one candidate per line.

    bench/tools/cut_tune_fixture.py RUN.json OUT.json [--note TEXT]
    bench/tools/cut_tune_fixture.py RESULTS.tar.gz:MEMBER OUT.json [--note TEXT]
"""
import argparse
import json
import sys
import tarfile


def load(src):
    if ":" in src and src.split(":", 1)[0].endswith((".tar.gz", ".tgz")):
        archive, member = src.split(":", 1)
        with tarfile.open(archive) as t:
            names = {n.lstrip("./"): n for n in t.getnames()}
            return json.load(t.extractfile(names.get(member.lstrip("./"), member)))
    with open(src) as f:
        return json.load(f)


def cut(doc, note):
    out = {"format": "tle-tune-replay", "version": 1, "note": note, "spec": doc.get("spec"),
           "device": doc.get("device"), "options": doc.get("options"), "cases": []}
    for c in doc["cases"]:
        cands = []
        for e in c.get("candidates", []):
            k = {"config": e["config"], "status": e.get("status")}
            for f in ("registers", "shared_bytes", "local_bytes", "correct"):
                if f in e:
                    k[f] = e[f]
            if "time" in e:
                k["time"] = {"median_ms": round(e["time"]["median_ms"], 6)}
            cands.append(k)
        out["cases"].append({"case": c["case"], "candidates": cands})
    return out


def dump(doc):
    lines = []
    head = {k: v for k, v in doc.items() if k != "cases"}
    text = json.dumps(head, separators=(", ", ": "))[:-1]
    lines.append(text + ', "cases": [')
    for i, c in enumerate(doc["cases"]):
        lines.append('  {"case": %s, "candidates": [' % json.dumps(c["case"]))
        for j, k in enumerate(c["candidates"]):
            lines.append("    " + json.dumps(k, separators=(", ", ": ")) + ("," if j + 1 < len(c["candidates"]) else ""))
        lines.append("  ]}" + ("," if i + 1 < len(doc["cases"]) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("out")
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    doc = cut(load(a.run), a.note)
    text = dump(doc)
    json.loads(text)  # the output must stay valid JSON
    with open(a.out, "w") as f:
        f.write(text)
    n = sum(len(c["candidates"]) for c in doc["cases"])
    print(f"{a.out}: {n} candidates, {len(text)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
