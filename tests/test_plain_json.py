import json
import random
import subprocess
import sys

import pytest

from qlint import plain_json
from qlint.analysis import project_files, wrapper_record
from qlint.listed_dependencies import listed_key, parse_listed_key

# Characters a key may hold: plain ones, and each kind `json` escapes or writes otherwise.
_PLAIN_CHARS = list("aZ0 /._-~")
_OTHER_CHARS = ["'", '"', "\\", "\n", "\t", "\x7f", "é", "\udc80", "\x00", "[", "]", ","]


def _text(rng: random.Random) -> str:
    chars = _PLAIN_CHARS if rng.random() < 0.7 else _PLAIN_CHARS + _OTHER_CHARS
    return "".join(rng.choice(chars) for _ in range(rng.randrange(6)))


def _value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 5)
    if kind < 3:
        return _text(rng)
    if kind == 3:
        return rng.random() < 0.5
    if kind == 4:
        return rng.choice([None, 3, -1.5, ("t", True)])
    if kind < 8:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randrange(3))}


def test_dumps_and_loads_give_what_json_gives():
    rng = random.Random(59)
    for _ in range(5_000):
        value = _value(rng)
        for sort_keys in (False, True):
            text = json.dumps(value, sort_keys=sort_keys)
            assert plain_json._dumps(value, sort_keys=sort_keys) == text
            assert plain_json._loads(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '["/a", true]',
        '["/a",true]',  # other spacing: json's own reading
        ' ["/a", true]',
        '["/a", true] ',
        '["/a\\u00e9", false, ["x"]]',
        '["/a", true, []]',
        '[[], [[]], ["", "b"]]',
        '"a\\"b"',
        '"é"',
        "[1, null]",
        '{"a": true}',
    ],
)
def test_loads_of_other_spellings_is_json_loads(text):
    assert plain_json._loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ['["/a", tru]', '["/a", true', '"a', "[,]", '["a" true]', "", "truex", '["a"]]'])
def test_loads_of_no_json_raises_as_json_does(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        plain_json._loads(text)


def test_the_dependency_keys_read_back():
    for root in ("/work/ao", "/work/dir with space/é", '/c/x\\"y', "/a\nb"):
        assert wrapper_record.parse_dependency(wrapper_record.dependency(root)) == root
        for recursive in (True, False):
            assert parse_listed_key(listed_key(root, recursive)) == (root, recursive)
            dep = project_files.listing_dependency(root, recursive, ["b", "a", 'q"', "é"])
            assert project_files.parse_listing_dependency(dep) == (root, recursive, (b"a", b"b", b'q"', "é".encode()))
    assert parse_listed_key(listed_key("/a", True)[:-1]) is None
    assert wrapper_record.parse_dependency(wrapper_record.PREFIX + '"/a') is None


def test_plain_keys_need_no_json():
    """A warm run reads its dependency keys and makes the settings' fingerprint: `json` (~5 M
    instructions to import) is not imported for plain ones."""
    code = (
        "import sys; from qlint import plain_json\n"
        "from qlint.analysis import wrapper_record\n"
        "from qlint.listed_dependencies import listed_key, parse_listed_key\n"
        "from qlint.analysis.project_files import listing_dependency, parse_listing_dependency\n"
        "from qlint.settings import Settings\n"
        "assert parse_listed_key(listed_key('/w/ao', True)) == ('/w/ao', True)\n"
        "assert wrapper_record.parse_dependency(wrapper_record.dependency('/w/ao')) == '/w/ao'\n"
        "assert parse_listing_dependency(listing_dependency('/w', False, ['x']))[2] == (b'x',)\n"
        "wrapper_record.digest_of(['f'], ['C'])\n"
        "Settings(root='/w').fingerprint\n"
        "print('json' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_settings_fingerprint_is_the_json_one():
    """The same text as `json.dumps` gave before: a cache written before keeps its key."""
    from qlint import settings as settings_module
    from qlint.settings import Settings

    s = Settings(root="/w", per_file_ignores=(("tests/*", ("QL101",)),))
    data = {
        "version": settings_module.__version__,
        "codes": sorted(s.enabled_codes),
        "pfi": [list(map(str, x)) for x in s.per_file_ignores],
        "opts": repr(s.rule_options),
        "plugins": settings_module._plugin_fingerprint(tuple(sorted(s.enabled_codes))),
    }
    from qlint.short_digests import sha256_hex

    assert s.fingerprint == sha256_hex(json.dumps(data, sort_keys=True).encode())[:16]
