# A package above a namespace directory (tests/lit/imports/namespace_subpackage.tle).
