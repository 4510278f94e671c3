#!/usr/bin/env bash
# Fuzz regression: a -g grid with 20000 nested parentheses overflows the stack in the grid-expression parser (src/Driver/GridExpr.cpp has no depth limit); release tlec segfaults.
# Usage (from the repository root): tests/fuzz/regressions/grid_deep_parens.sh path/to/tlec
grid="$(python3 -c "print('(' * 20000 + 'n_elements' + ')' * 20000 + ', 1, 1')")"
exec "$1" examples/vector_add.tle -s "*fp32:16, *fp32:16, *fp32:16, i32, 1024" -g "$grid" --emit=ptx -o /dev/null
