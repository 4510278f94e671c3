#!/usr/bin/env python3
# Runs a command and succeeds only if it exits with status exactly 1 (a user error, not a crash).
#
# Usage (lit): %exit1 %tlec bad.tle ... 2>&1 | FileCheck %s
# The command's stdout and stderr pass through unchanged. Exit status: 0 if the command exited 1;
# otherwise 2 (it succeeded), 3 (it exited with another status), 4 (killed by a signal, e.g. an
# assertion or segfault) or 5 (it could not be started), with an explanation on stderr.
import os
import signal
import subprocess
import sys


def main(argv):
    if not argv:
        sys.stderr.write("exit1: usage: exit1.py COMMAND [ARG...]\n")
        return 5
    sys.stdout.flush()
    try:
        status = subprocess.call(argv)
    except OSError as e:
        sys.stderr.write("exit1: cannot run %s: %s\n" % (argv[0], e))
        return 5
    if status == 1:
        return 0
    name = os.path.basename(argv[0])
    if status == 0:
        sys.stderr.write("exit1: %s succeeded, expected exit status 1 (a user error)\n" % name)
        return 2
    if status < 0:
        try:
            sig = signal.Signals(-status).name
        except ValueError:
            sig = "signal %d" % -status
        sys.stderr.write("exit1: %s crashed (%s), expected exit status 1\n" % (name, sig))
        return 4
    sys.stderr.write("exit1: %s exited with status %d, expected 1\n" % (name, status))
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
