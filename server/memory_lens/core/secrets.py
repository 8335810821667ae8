"""Secrets in memory text: what every write path refuses and what `check` reports as `secret`.

The detectors are detect-secrets' plugins (keys by provider, private key blocks, JSON web tokens,
basic-auth URLs, quoted keyword assignments, high-entropy quoted strings) and its heuristic
filters (sequences, UUIDs, id fields, templates, indirect references); see docs/security.md for
the choice and for what they miss. The secret itself is never kept: a `Secret` is its kind and
position, so no message, log or tool result can repeat it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

from memory_lens.core.markdown import stretches


class SecretError(ValueError):
    """Text that holds a secret, refused before anything is written. The message names the kind
    and the position only; front ends append how to override (`--allow-secret`, ...)."""

    def __init__(self, secret: Secret, what: str = "") -> None:
        super().__init__(f"{what}{secret.describe()}; not saved")
        self.secret = secret


DETECTORS = 1  # raise when `find_secrets` finds other secrets in a text (cached findings: core/entry_cache.py)


@dataclass(frozen=True)
class Secret:
    """Where a secret is: its kind, 1-based line and column (in the text checked)."""

    kind: str
    line: int
    column: int

    def describe(self, with_line: bool | None = None) -> str:
        """'looks like an AWS access key at column 12' (the line too when WITH_LINE, or when it is
        not the first)."""
        where = (f"line {self.line}, column {self.column}" if with_line or (with_line is None and self.line > 1)
                 else f"column {self.column}")
        article = "an" if self.kind[0].lower() in "aeio" else "a"
        return f"looks like {article} {self.kind} at {where}"


# detect-secrets' secret_type -> the kind a message names, where its own would read badly there.
KIND_NAMES = {
    "Secret Keyword": "password or secret assigned in quotes",
    "Base64 High Entropy String": "random key or token (a high-entropy quoted string)",
    "Basic Auth Credentials": "password in a URL",
    "Artifactory Credentials": "Artifactory token",
    "Cloudant Credentials": "Cloudant key",
    "IBM COS HMAC Credentials": "IBM COS HMAC key",
    "SoftLayer Credentials": "SoftLayer key",
    "NPM tokens": "npm token",
}


@lru_cache(maxsize=1)
def _detectors() -> tuple:
    """The plugins, made once: every provider plugin of detect-secrets, except public IP addresses
    (not a secret) and hex strings of high entropy (a commit id or a checksum is one)."""
    from memory_lens.core.compat import requests_deferred

    with requests_deferred():  # imported by every plugin module, used only to verify (never here)
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic  # noqa: F401  (`_ignored`'s, imported here with the rest)
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
        from detect_secrets.plugins.ip_public import IPPublicDetector
        from detect_secrets.plugins.keyword import KeywordDetector

        skipped = (IPPublicDetector, HexHighEntropyString, Base64HighEntropyString, KeywordDetector)
        plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values() if cls not in skipped]
    return (*plugins, KeywordDetector(), Base64HighEntropyString(limit=4.5))  # the provider's name first


@lru_cache(maxsize=1)
def _gated_detectors() -> tuple[tuple[object, tuple[str, ...], tuple[re.Pattern[str], ...]], ...]:
    """Each plugin of `_detectors()`, its words (`SHORT_VALUE_WORDS`; none: a long word) and, for a
    plugin that finds only what its `denylist` expressions match (`compat.regex_only`), those: a
    line none of them matches in is not that plugin's (its generator is never started)."""
    from memory_lens.core.compat import regex_only

    return tuple((p, SHORT_VALUE_WORDS.get(type(p).__name__, ()), tuple(p.denylist) if regex_only(p) else ())
                 for p in _detectors())


# A value that is itself another variable's assignment: the keyword detector, reading a list of
# them in backticks (`API_KEY=dummy`, `MODEL=gpt-5`), takes the next one for the key's value.
_ASSIGNMENT = re.compile(r"[A-Z][A-Z0-9_]*=\S*")


def _ignored_value(value: str, plugin: object) -> bool:
    """detect-secrets' default heuristic filters on the value (and the entropy limit of its
    high-entropy plugin), and keys marked as examples (AWS's documented AKIAIOSFODNN7EXAMPLE)."""
    from detect_secrets.filters import heuristic as h
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

    if isinstance(plugin, HighEntropyStringsPlugin) and plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
        return True
    return ("example" in value.lower() or _ASSIGNMENT.fullmatch(value) is not None
            or h.is_sequential_string(value) or h.is_potential_uuid(value)
            or h.is_templated_secret(value) or h.is_prefixed_with_dollar_sign(value)
            or h.is_not_alphanumeric_string(value))


def _ignored(value: str, line: str, plugin: object) -> bool:
    """The filters above, and detect-secrets' filters on the LINE (an id field, an indirect
    reference); a value that is part of a word marked as an example (a provider's prefix, a
    documented example after it)."""
    from detect_secrets.filters import heuristic as h

    at = line.find(value)
    start, end = line.rfind(" ", 0, at) + 1, line.find(" ", at + len(value))
    return (_ignored_value(value, plugin) or "example" in line[start:end if end >= 0 else None].lower()
            or h.is_likely_id_string(value, line, plugin) or h.is_indirect_reference(line))


# What a line must hold for a detector to be run on it, found with plain string searches so that
# most of a text is never searched by a regular expression: a word of 16 to 4096 characters
# (every provider key and token, and high-entropy values, are one; longer is data, not a key), or
# for the three detectors of shorter values, one of their words (lower case).
LONG_WORD, LONGEST_WORD = 16, 4096
PUNCTUATION = "()[]{}<>.,;:!?*\"'`"
SHORT_VALUE_WORDS = {
    "KeywordDetector": ("key", "pass", "pwd", "secret", "contrase"),
    "BasicAuthDetector": ("://",),
    "PrivateKeyDetector": ("private", "putty"),
}
GATE_WORDS = tuple(w for words in SHORT_VALUE_WORDS.values() for w in words)
# Bounds on the work of one text: a line longer than LONG_LINE is searched only around what the
# gate found (CONTEXT characters each side), and at most SCANNED characters of a text go through
# the detectors (real memory files and notes stay far below: a 22 KB file sends ~2 KB).
LONG_LINE, CONTEXT, SCANNED = 4096, 512, 1 << 18


def _long_word(word: str) -> bool:
    return LONG_WORD <= len(word) <= LONGEST_WORD and len(word.strip(PUNCTUATION)) >= LONG_WORD


# ASCII text as bytes, each whitespace of `str.split()` made b" " and any other character b"w": where
# a word of LONG_WORD characters starts is a plain search in it (~6 times faster than splitting).
_MASK = bytes(32 if chr(b).isspace() else 119 for b in range(256))


def _words(text: str) -> Iterator[str]:
    """The words of TEXT (as `str.split()` cuts it) of at least LONG_WORD characters, with repeats."""
    if not text.isascii():
        yield from (w for start, end in stretches(text) for w in text[start:end].split() if len(w) >= LONG_WORD)
        return
    mask, run = text.encode("ascii").translate(_MASK), b"w" * LONG_WORD
    i = mask.find(run)
    while i >= 0:
        end = mask.find(b" ", i)
        end = len(mask) if end < 0 else end
        yield text[i:end]
        i = mask.find(run, end)


def _candidates(text: str) -> list[tuple[int, int, int]]:
    """Where some detector could match in TEXT: (line start, start, end) offsets, a whole line or,
    on a long line, the part around a hit; sorted, and at most SCANNED characters in all."""
    found: set[tuple[int, int, int]] = set()
    lower = text.lower()
    needles = {w for w in _words(text) if _long_word(w)}
    total = 0
    for needle, haystack in [*((w, text) for w in needles), *((w, lower) for w in GATE_WORDS)]:
        i = haystack.find(needle)
        while i >= 0 and total < SCANNED:
            line_start = text.rfind("\n", 0, i) + 1
            line_end = text.find("\n", i)
            line_end = len(text) if line_end < 0 else line_end
            if line_end - line_start > LONG_LINE:
                window = (line_start, max(line_start, i - CONTEXT), min(line_end, i + len(needle) + CONTEXT))
                i = haystack.find(needle, window[2])
            else:
                window = (line_start, line_start, line_end)
                i = haystack.find(needle, line_end)
            if window not in found:
                found.add(window)
                total += window[2] - window[1]
    return sorted(found)


def find_secrets(text: str) -> list[Secret]:
    """Every secret in TEXT, at most one per line (the first found), in line order. Backticks
    count as quotes, as Markdown writes a value in a code span."""
    found: dict[int, Secret] = {}
    line, counted = 1, 0
    for line_start, start, end in _candidates(text):
        line += text.count("\n", counted, line_start)
        counted = line_start
        if line in found:
            continue
        part = text[start:end].replace("`", '"')
        lower, long = part.lower(), any(_long_word(w) for w in part.split())
        for plugin, words, regexes in _gated_detectors():
            if not (any(w in lower for w in words) if words else long):
                continue
            for regex in regexes:  # a search per expression: most lines match none
                if regex.search(part) is not None:
                    break
            else:
                if regexes:
                    continue
            at = next((part.find(v) for v in plugin.analyze_string(part) if not _ignored(v, part, plugin)), -1)
            if at >= 0:
                kind = KIND_NAMES.get(plugin.secret_type, plugin.secret_type)
                found[line] = Secret(kind, line, start - line_start + at + 1)
                break
    return [found[n] for n in sorted(found)]


def refuse_secrets(text: str, allow: bool = False, what: str = "") -> None:
    """Raise SecretError for the first secret in TEXT, unless ALLOW. WHAT prefixes the message
    (say, the field a secret was found in)."""
    if allow:
        return
    found = find_secrets(text)
    if found:
        raise SecretError(found[0], what)
