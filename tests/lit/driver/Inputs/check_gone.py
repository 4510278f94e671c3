"""Exits 0 when the process whose pid is in argv[1] has ended (or is a zombie); else kills it
and exits 1."""
import os
import signal
import sys

pid = int(open(sys.argv[1]).read().split()[0])
try:
    with open(f"/proc/{pid}/status") as f:
        state = next((line.split()[1] for line in f if line.startswith("State:")), "")
except OSError:
    sys.exit(0)
if state == "Z":
    sys.exit(0)
os.kill(pid, signal.SIGKILL)
print(f"process {pid} outlived the compiler (state {state})")
sys.exit(1)
