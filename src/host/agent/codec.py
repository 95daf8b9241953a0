# agent/codec.py, a part of the sitepatch agent (start.py says how the parts are joined):
# bytes and values as they cross: JSON through json's own C accelerator, base64,
# sha256, and fnmatch's name patterns, each without the module whose import slows the start.

def b64(data):
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def unb64(text):
    return binascii.a2b_base64(text)


class _JsonContext(object):
    # What json.decoder.JSONDecoder hands _json's scanner: the defaults of json.loads.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity, as json.loads reads them


def _not_json(o):
    raise TypeError("%s is not JSON serializable" % type(o).__name__)


try:
    import _json

    _scan = _json.make_scanner(_JsonContext())
    # The arguments json.JSONEncoder passes for json.dumps(o, separators=(",", ":"),
    # check_circular=False): replies are trees.
    _encode = _json.make_encoder(None, _not_json, _json.encode_basestring_ascii, None, ":", ",",
                                 False, False, True)
except (ImportError, AttributeError, TypeError):
    _scan = _encode = None


def loads(text):
    if _scan is None:
        import json

        return json.loads(text)
    text = text.strip()
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON: %r" % text[:80])
    if end != len(text):
        raise ValueError("extra data after JSON at column %d" % end)
    return value


def dumps(value):
    if _encode is None:
        import json

        return json.dumps(value, separators=(",", ":"))
    return "".join(_encode(value, 0))


_sha256_impl = []  # found on first use: a failed import searches sys.path every time


def sha256_hex(data):
    if not _sha256_impl:
        try:
            from _sha2 import sha256  # 3.12 and newer
        except ImportError:
            try:
                from _sha256 import sha256
            except ImportError:  # built without its own hashes (a FIPS build, say)
                from hashlib import sha256
        _sha256_impl.append(sha256)
    return _sha256_impl[0](data).hexdigest()


def glob_tokens(pattern):
    # fnmatch's language: * ? [seq] [!seq], a [ without its ] taken literally.
    toks, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if not toks or toks[-1] != ("*",):
                toks.append(("*",))
        elif c == "?":
            toks.append(("?",))
        elif c == "[":
            j = i + 1 if i < n and pattern[i] == "!" else i
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                toks.append(("=", "["))
                continue
            body, i = pattern[i:j], j + 1
            negate = body.startswith("!")
            if negate:
                body = body[1:]
            ranges, k = [], 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1] == "-":
                    ranges.append((body[k], body[k + 2]))
                    k += 3
                else:
                    ranges.append((body[k], body[k]))
                    k += 1
            toks.append(("[", negate, ranges))
        else:
            toks.append(("=", c))
    return toks


def _one(tok, ch):
    if tok[0] == "?":
        return True
    if tok[0] == "=":
        return tok[1] == ch
    return any(lo <= ch <= hi for lo, hi in tok[2]) != tok[1]


def glob_match(name, toks):
    # Every token but * takes one character: a * is retried one character further
    # whenever what follows it fails.
    n = t = 0
    star, mark = -1, 0
    while n < len(name):
        if t < len(toks) and toks[t] != ("*",) and _one(toks[t], name[n]):
            n += 1
            t += 1
        elif t < len(toks) and toks[t] == ("*",):
            star, mark = t, n
            t += 1
        elif star >= 0:
            t, mark = star + 1, mark + 1
            n = mark
        else:
            return False
    while t < len(toks) and toks[t] == ("*",):
        t += 1
    return t == len(toks)
