# Math-Verify on (gold, answer) pairs, run in the sandbox by workers/reward/math-verify.ts (the zygotes of its pool
# preload math_verify). Reads {"pairs": [[gold, answer], ...]} on stdin; prints one JSON line:
# {"results": [{"equal": true|false|null, "gold": parsed, "answer": parsed, "error": text?}, ...]}. With "plain": true,
# Math-Verify as it is (every text wrapped whole, both extractors, no fragment check): bench:verify's reference.
# No time limit of its own (math_verify's use signal.alarm): the sandbox's wall clock ends a slow check.
import json
import re
import sys

from math_verify import LatexExtractionConfig, parse, verify

# Read as LaTeX only: where Math-Verify cannot parse a formula, its other extractor picks a number out of it instead
# (`$2` of `$2^{10}.$`, read as two dollars; `1` of `$1/3.$`), which is no reading of the answer.
LATEX = [LatexExtractionConfig()]


def read(s, plain):
    # The verifier hands over what it extracted (a formula; workers/reward/extract.ts): one inline formula; text that
    # still holds math delimiters or a box is read by Math-Verify's extraction of them.
    text = s if ('$' in s or '\\boxed' in s or '\\[' in s or '\\(' in s) else '$' + s + '$'
    if plain:
        return parse(text, parsing_timeout=None)
    return parse(text, LATEX, parsing_timeout=None)


def fragment(parsed):
    # Math-Verify's own LaTeX clean-up can cut a formula short (`1 + \frac{1}{\mathrm{e}}` became `1 + \frac{1}{`,
    # read as 1) and then parses what is left: unbalanced braces in the LaTeX it read mean a value of a fragment.
    text = next((x for x in parsed if isinstance(x, str)), '')
    return len(re.findall(r'(?<!\\)\{', text)) != len(re.findall(r'(?<!\\)\}', text))


def check(gold, answer, plain):
    try:
        g = read(gold, plain)
        a = read(answer, plain)
        if not g or (not plain and fragment(g)):
            why = 'read only a fragment of the gold' if g else 'could not parse the gold'
            return {'equal': None, 'gold': None, 'answer': str(a[0]) if a else None, 'error': why}
        if a and not plain and fragment(a):
            return {'equal': None, 'gold': str(g[0]), 'answer': None, 'error': 'read only a fragment of the answer'}
        if not a:
            return {'equal': False, 'gold': str(g[0]), 'answer': None, 'error': 'could not parse the answer'}
        return {'equal': bool(verify(g, a, timeout_seconds=None)), 'gold': str(g[0])[:200], 'answer': str(a[0])[:200]}
    except Exception as e:  # a bug of the parser on odd input is that pair's verdict, not the batch's
        return {'equal': None, 'gold': None, 'answer': None, 'error': ('%s: %s' % (type(e).__name__, e))[:300]}


request = json.loads(sys.stdin.read())
plain = bool(request.get('plain'))
print(json.dumps({'results': [check(str(g), str(a), plain) for g, a in request['pairs']]}))
