"""Expressions of experiment definitions: derived parameters and metrics.

An expression is a Python expression restricted to arithmetic, comparisons,
`a if c else b`, `and`/`or`/`not`, names, constants, field access on results
(`comm.max_messages_sent` or `comm['max_messages_sent']`, `gpu_stats[0]`) and
calls of the functions in FUNCTIONS. Nothing else is evaluated: a definition
file cannot run code. Nor can it hang or fill memory: an integer beyond 2**1024
(the float range), a string or list longer than a million items, a format
width or a round() digit count beyond a thousand is refused before it is made.
"""
import ast
import math
import re
import statistics


class ExprError(ValueError):
    """An expression that is not allowed, or that failed to evaluate."""


MAX_INT_BITS = 1024  # 2**1024: the float range; no parameter or metric needs more
MAX_LEN = 1000000  # characters of a string, items of a list
MAX_DIGITS = 1000  # a format's width or precision, round()'s digits
MAX_GRID_NODES = 10 ** 9  # grid_of() tries every divisor up to the square root
_FORMAT_SPEC = re.compile(r"%%|%(?:\([^)]*\))?[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?")


def grid_of(nodes):
    """The most square Pr x Pc grid with Pr <= Pc and Pr * Pc = nodes, as "PrxPc"."""
    nodes = int(nodes)
    if not 1 <= nodes <= MAX_GRID_NODES:
        raise ExprError("grid_of(%r): nodes must be from 1 to %d" % (nodes, MAX_GRID_NODES))
    pr = max(d for d in range(1, math.isqrt(nodes) + 1) if nodes % d == 0)
    return "%dx%d" % (pr, nodes // pr)


def field_sum(items, key):
    """Sum of items[i][key] over a list of objects (e.g. field_sum(gpu_stats, 'busy_s'))."""
    return sum(x[key] for x in items)


def field_max(items, key):
    """Maximum of items[i][key] over a list of objects."""
    return max(x[key] for x in items)


def get(obj, key, default=None):
    """obj[key], or `default` when obj has no such key (e.g. a kernel a run never ran)."""
    try:
        return obj[key]
    except (KeyError, IndexError, TypeError):
        return default


def find(items, key, value):
    """The first object of a list whose `key` equals `value` (e.g. find(trace_breakdown, 'worker', 'gpu1'))."""
    for x in items:
        if x.get(key) == value:
            return x
    raise KeyError("no item with %s = %r" % (key, value))


def bounded_round(x, ndigits=None):
    """round(), refusing a digit count whose power of ten would take long to compute."""
    if ndigits is not None and isinstance(ndigits, int) and abs(ndigits) > MAX_DIGITS:
        raise OverflowError("round(%r, %d): at most %d digits" % (x, ndigits, MAX_DIGITS))
    return round(x, ndigits)


def bounded_sum(items, start=0):
    """sum() of numbers (of lists, it could build one beyond MAX_LEN a piece at a time)."""
    if isinstance(start, bool) or not isinstance(start, (int, float)):
        raise TypeError("sum() adds numbers, not %s" % type(start).__name__)
    return sum(items, start)


FUNCTIONS = {
    "sqrt": math.sqrt, "log2": math.log2, "ceil": math.ceil, "floor": math.floor, "isqrt": math.isqrt,
    "round": bounded_round, "int": int, "float": float, "min": min, "max": max, "abs": abs, "len": len, "sum": bounded_sum,
    "mean": statistics.mean, "median": statistics.median, "grid_of": grid_of,
    "field_sum": field_sum, "field_max": field_max, "get": get, "find": find,
}

def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _bits(v):
    return abs(v).bit_length() if _int(v) else 0


def _size(v):
    return len(v) if isinstance(v, (str, bytes, list, tuple)) else 0


def _mult(a, b):
    """a * b, refused before it is made when the product would exceed MAX_INT_BITS or MAX_LEN."""
    if _bits(a) + _bits(b) > MAX_INT_BITS + 1:
        raise OverflowError("a product beyond 2**%d" % MAX_INT_BITS)
    if (_int(b) and _size(a) * b > MAX_LEN) or (_int(a) and _size(b) * a > MAX_LEN):
        raise OverflowError("a repetition of more than %d items" % MAX_LEN)
    return a * b


def _pow(a, b):
    """a ** b, refused before it is made when an integer power would exceed MAX_INT_BITS."""
    if _int(a) and _int(b) and abs(a) > 1 and b > 0 and (_bits(a) - 1) * b > MAX_INT_BITS:
        raise OverflowError("%d ** %d is beyond 2**%d" % (a, b, MAX_INT_BITS))
    return a ** b


def _mod(a, b):
    """a % b; a format string's widths and precisions at most MAX_DIGITS (a `*` width is refused)."""
    if isinstance(a, (str, bytes)):
        text = a.decode(errors="replace") if isinstance(a, bytes) else a
        for m in _FORMAT_SPEC.finditer(text):
            for part in m.groups():
                if part == "*" or (part and int(part) > MAX_DIGITS):
                    raise OverflowError("format %r: a width or precision must be a number up to %d" % (
                        m.group(0), MAX_DIGITS))
    return a % b


def _bounded(v):
    """v, or OverflowError when it is an integer beyond MAX_INT_BITS or a sequence beyond MAX_LEN."""
    if _bits(v) > MAX_INT_BITS:
        raise OverflowError("an integer beyond 2**%d" % MAX_INT_BITS)
    if _size(v) > MAX_LEN:
        raise OverflowError("a string or list of more than %d items" % MAX_LEN)
    return v


_BINOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: _mult,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: _mod, ast.Pow: _pow,
}
_CMPOPS = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def parse(text):
    """Parses an expression and checks that it only uses the allowed forms; returns its tree."""
    if not isinstance(text, str):
        raise ExprError("an expression must be a string, not %r" % (text,))
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ExprError("%r is not an expression: %s" % (text, e.msg))
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.Name,
               ast.Constant, ast.Attribute, ast.Subscript, ast.List, ast.Tuple, ast.Load, ast.And, ast.Or, ast.Not,
               ast.USub, ast.UAdd) + tuple(_BINOPS) + tuple(_CMPOPS)
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise ExprError("%r uses %s, which definitions may not" % (text, type(node).__name__))
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise ExprError("%r calls something other than %s" % (text, ", ".join(sorted(FUNCTIONS))))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ExprError("%r reads a private attribute" % text)
    return tree


def names(text):
    """The free names an expression reads (function names excluded)."""
    tree = parse(text)
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - calls


def evaluate(text, env):
    """Evaluates an expression over `env` (a dict of names); raises ExprError on any failure."""
    tree = parse(text)
    try:
        return _eval(tree.body, env)
    except ExprError:
        raise
    except (ArithmeticError, KeyError, IndexError, TypeError, ValueError) as e:
        raise ExprError("%r failed: %s: %s" % (text, type(e).__name__, e))


def _eval(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ExprError("unknown name %r" % node.id)
        return env[node.id]
    if isinstance(node, ast.BinOp):
        return _bounded(_BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env)))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else (+v if isinstance(node.op, ast.UAdd) else not v)
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            v = True
            for x in node.values:
                v = _eval(x, env)
                if not v:
                    return v
            return v
        v = False
        for x in node.values:
            v = _eval(x, env)
            if v:
                return v
        return v
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, env) if _eval(node.test, env) else _eval(node.orelse, env)
    if isinstance(node, ast.Call):
        return _bounded(FUNCTIONS[node.func.id](*[_eval(a, env) for a in node.args]))
    if isinstance(node, ast.Attribute):
        return _eval(node.value, env)[node.attr]
    if isinstance(node, ast.Subscript):
        return _eval(node.value, env)[_eval(node.slice, env)]
    if isinstance(node, ast.List):
        return [_eval(x, env) for x in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_eval(x, env) for x in node.elts)
    raise ExprError("cannot evaluate %s" % type(node).__name__)
