# Python raises ImportError here (cyctry is partially initialised and has no c_ext), and the
# handler runs.
try:
    from cyctry import c_ext
    HAS_EXT = True
except ImportError:
    c_ext = None
    HAS_EXT = False
