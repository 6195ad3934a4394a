"""Runs the schemathesis CLI with a higher recursion limit.

Hypothesis describes filter lambdas by parsing their module's source with `ast`. Deep inside schemathesis's
generators that parse runs close to Python's default recursion limit (1 000), and CPython 3.11's AST constructor
then raises "AST constructor recursion depth mismatch" (python/cpython#106905) — an error of the tool, not a finding.
A limit of 10 000 leaves the parse room; threads get a larger stack to match. The parse still failed now and then,
twice in a row for one run (the retry in scripts/contract/run did not help): the description is only a strategy's
repr, so a failed parse now gives a plain description instead of stopping the run.
"""
import sys
import threading

sys.setrecursionlimit(10_000)
threading.stack_size(64 * 1024 * 1024)

from hypothesis.internal import filtering, lambda_sources  # noqa: E402

_describe = lambda_sources.lambda_description


def _described(f):
    try:
        return _describe(f)
    except (SystemError, RecursionError):
        return "lambda: <source not parsed>"


lambda_sources.lambda_description = _described
filtering.lambda_description = _described

import schemathesis.cli  # noqa: E402

schemathesis.cli.schemathesis()
