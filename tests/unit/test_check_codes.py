"""The diagnostic codes the language server names (lsp/protocol.py) are the codes of the checks."""

from memory_lens.core.checks import SEVERITY_OF, TOO_LARGE
from memory_lens.lsp.protocol import DIAGNOSTIC_CODES


def test_protocol_lists_every_check_code_once() -> None:
    assert sorted(DIAGNOSTIC_CODES) == sorted(SEVERITY_OF)
    assert len(set(DIAGNOSTIC_CODES)) == len(DIAGNOSTIC_CODES)
    assert TOO_LARGE == "too-large" and TOO_LARGE in DIAGNOSTIC_CODES


def test_scoped_rule_codes_and_their_severities() -> None:
    assert {code: SEVERITY_OF[code].value for code in ("rule-matches-nothing", "invalid-glob", "frontmatter")} == {
        "rule-matches-nothing": "information", "invalid-glob": "warning", "frontmatter": "warning"}
