"""Benchmarks of the attention implementations (``make bench`` runs ``python -m benchmarks.run``).

They are kept out of the test suite: timings depend on the machine and its load, so the
results are written to ``benchmarks/results/`` and the book's chapters plot that file.
"""
