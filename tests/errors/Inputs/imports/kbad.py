# A module with a syntax error.
import triton

X = (1,
