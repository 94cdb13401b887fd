"""Pure ``@njit`` kernels over numpy arrays: no I/O, no DuckDB, no Python objects.

Each kernel module has a wrapper module one level up (``engine/``) that
validates and converts its inputs and calls it.
"""
