#!/usr/bin/env python3
"""Lines per C++ function definition (brace to matching brace, lambdas counted in their function).

Usage: scripts/function_lengths.py [--max N] [--top K] FILE_OR_DIR...
Prints the K longest definitions (default 10), longest first, as `LINES FILE:LINE NAME`; with
--max, exits with status 1 when one is longer than N lines. A definition is a `{` opened at
namespace or class scope whose line is not a class, enum, namespace or initializer.
"""
import argparse
import os
import re
import sys


def strip(line):
    """`line` without string and character literals and // comments."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split('//')[0]


def definitions(path):
    """(lines, first line, name) of each function definition in `path`."""
    lines = open(path, encoding='utf-8').read().split('\n')
    found, stack, start, name = [], [], None, None
    for i, raw in enumerate(lines, 1):
        text = strip(raw)
        for ch in text:
            if ch == '{':
                kind = 'block'
                if start is None:
                    s = text.strip()
                    if re.match(r'^(namespace|extern)\b', s) or re.search(r'\b(struct|class|enum|union)\b[^()]*\{', s):
                        kind = 'scope'  # class bodies are scopes: their member definitions count
                    elif re.search(r'=\s*\{', s):
                        kind = 'init'
                    else:
                        kind, start = 'function', i
                        context = re.split(r'[;}]|\*/', ' '.join(strip(x) for x in lines[max(0, i - 4):i]))[-1]
                        calls = [c for c in re.findall(r'([~\w:]+)\s*\(', context)
                                 if c not in ('if', 'for', 'while', 'switch', 'return', 'sizeof')]
                        name = calls[0] if calls else '?'
                stack.append(kind)
            elif ch == '}' and stack:
                if stack.pop() == 'function':
                    found.append((i - start + 1, start, name))
                    start = None
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('paths', nargs='+')
    ap.add_argument('--max', type=int)
    ap.add_argument('--top', type=int, default=10)
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(('.cpp', '.h')))
        else:
            files.append(p)
    rows = sorted(((n, f, line, name) for f in files for n, line, name in definitions(f)), reverse=True)
    for n, f, line, name in rows[:args.top]:
        print('%5d %s:%d %s' % (n, f, line, name))
    if args.max is not None and rows and rows[0][0] > args.max:
        print('error: %s:%d %s has %d lines (at most %d)' % (rows[0][1], rows[0][2], rows[0][3], rows[0][0], args.max),
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
