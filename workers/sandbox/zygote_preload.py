"""Preload: what the zygote imports and warms once, so that each call's fork starts with it loaded (the point of
the zygote), and the memory layout that keeps each fork cheap.

Isolates nothing: every call gets a copy-on-write copy of this state, and nothing here is secret. The heavy list is
a pool setting (argv[1]): every module preloaded makes each fork dearer (fork time grows with the zygote's memory),
so scipy's big submodules are imported on first use by default.
"""
import ctypes
import importlib
import sys

from zygote_os import LIBC

DEFAULT = 'numpy,sympy,scipy,scipy.special'


def preload(names):
    """Import the standard-library modules every call may use, then the comma-separated `names`, then warm sympy's
    and math_verify's caches when they are among them."""
    import math, cmath, fractions, decimal, itertools, functools, collections, random, re, statistics, string  # noqa: E401,F401
    for name in names.split(','):
        if name:
            importlib.import_module(name)
    if 'sympy' in sys.modules:
        # Warm sympy's caches and lazily built tables once here, so that every forked call starts with them.
        try:
            sympy = sys.modules['sympy']
            _x = sympy.symbols('x')
            sympy.factor(_x ** 4 - 1)
            sympy.solve(_x ** 2 - 4, _x)
            sympy.simplify(sympy.sin(_x) ** 2 + sympy.cos(_x) ** 2)
            sympy.integrate(_x ** 2, _x)
            sympy.factorint(2 ** 64 - 1)
            sympy.Rational(1, 3) + sympy.sqrt(2)
        except Exception:
            pass
    if 'math_verify' in sys.modules:
        # The verifier's pool (workers/reward/math-verify.ts): the first parse builds the LaTeX grammar's tables and
        # the regexes (~100 ms), each later one reuses them.
        try:
            import logging
            # Its time limits use signal.alarm, which is neither safe beside threads nor needed here (the sandbox's
            # wall clock ends a slow check): the checks turn them off, and this silences the warning that they are off.
            logging.getLogger('math_verify').setLevel(logging.ERROR)
            from math_verify import parse as _parse, verify as _verify
            for _g, _p in (('\\frac{1}{2}', '0.5'), ('(1,2)', 'x=(1,2)'), ('x^2+1', '1+x^2'), ('\\{1,2\\}', '[0,1)'),
                           ('\\begin{pmatrix}1\\\\2\\end{pmatrix}', 'y=2x'), ('50\\%', '\\sqrt{2}\\pi')):
                _verify(_parse('$' + _g + '$', parsing_timeout=None), _parse('$' + _p + '$', parsing_timeout=None), timeout_seconds=None)
        except Exception:
            pass


def collapse_hugepages():
    """Back the preloaded heap with 2 MiB pages (MADV_COLLAPSE, Linux 6.1+; a no-op elsewhere). Per call, the CPU
    goes mostly to the kernel copying page-table entries at fork (copy_page_range) and tearing them down at the
    child's exit (unmap_page_range): one entry per 4 KiB of the zygote's ~80 MB. A 2 MiB page is one entry, so
    both shrink; a child that writes into one (refcounts) gets just that range split back to 4 KiB entries.
    Only mappings that are mostly resident are collapsed, so big untouched buffers (OpenBLAS) are not filled."""
    try:
        libc = LIBC
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        huge = 2 << 20
        ranges = []
        with open('/proc/self/smaps') as f:
            cur = None
            for line in f:
                first = line.split(None, 1)[0]
                if '-' in first and not first.endswith(':'):
                    parts = line.split()
                    lo, hi = (int(x, 16) for x in parts[0].split('-'))
                    path = parts[5] if len(parts) > 5 else ''
                    anon = parts[1].startswith('rw') and parts[1][3] == 'p' and (not path or path == '[heap]')
                    cur = (lo, hi) if anon else None
                elif first == 'Rss:' and cur is not None:
                    lo, hi = cur
                    if int(line.split()[1]) * 1024 * 2 >= hi - lo:
                        ranges.append(cur)
                    cur = None
        for lo, hi in ranges:
            a, b = (lo + huge - 1) & ~(huge - 1), hi & ~(huge - 1)
            if b > a:
                libc.madvise(a, b - a, 14)  # MADV_HUGEPAGE
                libc.madvise(a, b - a, 25)  # MADV_COLLAPSE
    except Exception:
        pass
