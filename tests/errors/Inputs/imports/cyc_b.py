# The other half: asks cyc_a for A while cyc_a is still running.
from cyc_a import A

B = 2
