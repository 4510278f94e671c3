# A package whose `details` directory has no __init__.py: a namespace subpackage (PEP 420), as
# triton_kernels' matmul_details (tests/lit/imports/namespace_subpackage.tle).
