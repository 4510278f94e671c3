#!/usr/bin/env python3
"""Helpers of source_hash.tle.

  source_hash.py edit FILE OLD NEW      replace the last OLD of FILE by NEW (a one-place edit)
  source_hash.py recipe DEPFILE REPORT  the hash docs/aot.md describes, over the files of tlec's
                                        depfile in its order, against tle-inspect --json's
  source_hash.py strip PTX OUT          OUT: PTX whose __tle_metadata lacks "source_hash" (as an
                                        older tlec wrote it)
  source_hash.py list REPORT...         each report's source_hash: "NAME: HASH same|new" (same as
                                        an earlier one or not); exit 1 unless 64 hex digits
"""
import hashlib
import json
import os
import re
import sys


def edit(path, old, new):
    text = open(path, encoding="utf-8").read()
    i = text.rindex(old)
    open(path, "w", encoding="utf-8").write(text[:i] + new + text[i + len(old):])


def recipe(depfile, report):
    rule = open(depfile, encoding="utf-8").read().replace("\\\n", " ")
    files = rule.split(":", 1)[1].split()
    sha = hashlib.sha256()
    for f in files:
        data = open(f, "rb").read()
        sha.update(b"%d\n" % len(data) + data)
    recorded = json.load(open(report))["source_hash"]
    print(f"recipe over {len(files)} files:", "match" if sha.hexdigest() == recorded else "MISMATCH")


def strip(ptx, out):
    text = open(ptx, encoding="utf-8").read()
    m = re.search(r"__tle_metadata\[(\d+)\] = \{([^}]*)\}", text)
    raw = bytes(int(b) for b in m.group(2).split(","))
    doc = json.loads(raw.rstrip(b"\0"))
    del doc["source_hash"]
    new = json.dumps(doc, separators=(",", ":")).encode() + b"\0"
    text = text[:m.start()] + "__tle_metadata[%d] = {%s}" % (len(new), ", ".join(map(str, new))) + text[m.end():]
    open(out, "w", encoding="utf-8").write(text)


def listing(reports):
    seen, ok = set(), True
    for r in reports:
        h = json.load(open(r))["source_hash"]
        ok &= bool(re.fullmatch(r"[0-9a-f]{64}", h or ""))
        print(f"{os.path.basename(r)}: {h} {'same' if h in seen else 'new'}")
        seen.add(h)
    return 0 if ok else 1


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "edit":
        edit(*args)
    elif cmd == "recipe":
        recipe(*args)
    elif cmd == "strip":
        strip(*args)
    else:
        sys.exit(listing(args))
