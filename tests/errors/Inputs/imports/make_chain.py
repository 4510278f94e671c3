"""Writes modules chain0.py ... chainN.py into DIR, each importing the next (for import_depth.tle).

Usage: make_chain.py DIR N
"""
import os
import sys

out, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(out, "chain%d.py" % i), "w") as f:
        f.write("import chain%d\nX = %d\n" % (i + 1, i))
with open(os.path.join(out, "chain%d.py" % n), "w") as f:
    f.write("X = %d\n" % n)
