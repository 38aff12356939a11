import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importedRoots, zygoteKind } from '../../workers/sandbox/route.ts';

test('importedRoots reads plain, dotted, aliased, multi and from-imports, also indented and after ;', () => {
  assert.deepEqual(
    importedRoots(
      'import math\nimport numpy as np, os.path\nfrom sympy.abc import x\n  import json\nx=1; import scipy',
    ),
    ['math', 'numpy', 'os', 'sympy', 'json', 'scipy'],
  );
});

test('plain arithmetic and stdlib imports go to the light zygote', () => {
  assert.equal(zygoteKind('print(1+1)'), 'light');
  assert.equal(
    zygoteKind('import math\nfrom fractions import Fraction\nprint(math.comb(10, 3), Fraction(1, 3))'),
    'light',
  );
  assert.equal(zygoteKind('from itertools import permutations\nprint(len(list(permutations(range(5)))))'), 'light');
});

test('numpy, sympy, scipy or any module the light zygote has not preloaded go to the heavy one', () => {
  assert.equal(zygoteKind('import sympy\nprint(sympy.factorint(10))'), 'heavy');
  assert.equal(zygoteKind('import numpy as np\nprint(np.arange(3))'), 'heavy');
  assert.equal(zygoteKind('from scipy.special import comb'), 'heavy');
  assert.equal(zygoteKind('import socket'), 'heavy');
  assert.equal(zygoteKind('def f():\n    import mpmath\n    return 1'), 'heavy');
  assert.equal(zygoteKind('import math; import numpy'), 'heavy');
});

test('dynamic imports and code execution are never routed light', () => {
  assert.equal(zygoteKind('m = __import__("numpy")'), 'heavy');
  assert.equal(zygoteKind('import importlib'), 'heavy');
  assert.equal(zygoteKind('exec("import sympy")'), 'heavy');
  assert.equal(zygoteKind('print(eval("1+1"))'), 'heavy');
});

test('session history counts: a later call that uses an earlier numpy import goes heavy', () => {
  assert.equal(zygoteKind('print(a.sum())', ['import numpy as np\na = np.ones(3)']), 'heavy');
  assert.equal(zygoteKind('print(x + 1)', ['x = 41']), 'light');
});
