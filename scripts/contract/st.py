"""Runs the schemathesis CLI with a higher recursion limit.

Hypothesis describes filter lambdas by parsing their module's source with `ast`. Deep inside schemathesis's
generators that parse runs close to Python's default recursion limit (1 000), and CPython 3.11's AST constructor
then raises "AST constructor recursion depth mismatch" (python/cpython#106905) — an error of the tool, not a finding.
A limit of 10 000 leaves the parse room; threads get a larger stack to match.
"""
import sys
import threading

sys.setrecursionlimit(10_000)
threading.stack_size(64 * 1024 * 1024)

import schemathesis.cli  # noqa: E402

schemathesis.cli.schemathesis()
