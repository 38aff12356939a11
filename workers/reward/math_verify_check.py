# Math-Verify on (gold, answer) pairs, run in the sandbox by workers/reward/math-verify.ts (the zygotes of its pool
# preload math_verify). Reads {"pairs": [[gold, answer], ...]} on stdin; prints one JSON line:
# {"results": [{"equal": true|false|null, "gold": parsed, "answer": parsed, "error": text?}, ...]}.
# No time limit of its own (math_verify's use signal.alarm): the sandbox's wall clock ends a slow check.
import json
import sys

from math_verify import parse, verify


def wrap(s):
    # Math-Verify extracts from text: a bare answer is read as one inline formula.
    return s if ('$' in s or '\\boxed' in s or '\\[' in s or '\\(' in s) else '$' + s + '$'


def check(gold, answer):
    try:
        g = parse(wrap(gold), parsing_timeout=None)
        a = parse(wrap(answer), parsing_timeout=None)
        if not g:
            return {'equal': None, 'gold': None, 'answer': str(a[0]) if a else None, 'error': 'could not parse the gold'}
        if not a:
            return {'equal': False, 'gold': str(g[0]), 'answer': None, 'error': 'could not parse the answer'}
        return {'equal': bool(verify(g, a, timeout_seconds=None)), 'gold': str(g[0])[:200], 'answer': str(a[0])[:200]}
    except Exception as e:  # a bug of the parser on odd input is that pair's verdict, not the batch's
        return {'equal': None, 'gold': None, 'answer': None, 'error': ('%s: %s' % (type(e).__name__, e))[:300]}


pairs = json.loads(sys.stdin.read())['pairs']
print(json.dumps({'results': [check(str(g), str(a)) for g, a in pairs]}))
