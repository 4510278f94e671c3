# The handler names ModuleNotFoundError, which Python's ImportError for a name missing from a
# partially initialised module is not: the import fails, as in Python.
try:
    from cycwrong import c_ext
    HAS_EXT = True
except ModuleNotFoundError:
    c_ext = None
    HAS_EXT = False
