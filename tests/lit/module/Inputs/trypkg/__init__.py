import importlib


def _optional(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        return None


# Python imports trypkg.layers here, before any other submodule, as flash-linear-attention's
# __init__ does: importing it late would close an import cycle.
_layers = _optional("trypkg.layers")
_rel = importlib.import_module(".layers", "trypkg")
