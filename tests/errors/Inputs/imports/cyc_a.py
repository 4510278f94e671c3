# Half of an import cycle: A is defined after the import that leads back here.
from cyc_b import B

A = 1
