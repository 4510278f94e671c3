# The package's __init__ imports host code whose modules import each other's classes.
from .host.registry import Registry
