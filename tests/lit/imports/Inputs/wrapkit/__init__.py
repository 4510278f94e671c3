# A library whose kernels are made with the call forms of @triton.heuristics / @triton.autotune.
