"""Secret samples and look-alikes for the secrets guard (core/secrets.py), built when the tests run.

No sample is written out in this file: each key is put together from pieces and pseudo-random
characters (a fixed seed), so no scanner finds a real-looking key in the repository, and
`memory-lens check` of the repository finds none either. SECRETS must each be refused and flagged;
LOOK_ALIKES never; MISSES are secrets the detectors do not catch (counted in docs/security.md).
"""

from __future__ import annotations

import base64
import json
import random
import re
import string

_rng = random.Random(28)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"


def rnd(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _pypi_prefix() -> str:
    """The prefix of a package index token, as the detector's own expression spells it."""
    from detect_secrets.plugins.pypi_token import PypiTokenDetector

    return PypiTokenDetector.denylist[0].pattern.split("[")[0]


def _secret_samples() -> dict[str, str]:
    jwt = ".".join([_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": "42", "name": "deploy"}),
                    rnd(43, ALNUM + "-_")])
    pem = "-----" + "BEGIN {} KEY" + "-----"
    return {
        "aws access key id": "Deploy with access key " + "AK" + "IA" + rnd(16, UPPER_DIGITS) + " in prod",
        "aws temporary key id": "Session key " + "AS" + "IA" + rnd(16, UPPER_DIGITS),
        "aws secret key, quoted": 'aws_secret_access_key = "' + rnd(40, ALNUM + "/+") + '"',
        "aws secret key, code span": "AWS secret key: `" + rnd(40, ALNUM + "/+") + "`",
        "azure storage key": "DefaultEndpointsProtocol=https;AccountName=acme;Account" + "Key=" + rnd(86, ALNUM + "+/") + "==",
        "basic auth url": "Database: postgres://admin:" + rnd(14) + "@db.internal:5432/app",
        "basic auth git url": "Clone with https://deploy:" + rnd(20) + "@git.acme.internal/app.git",
        "cloudant key": 'cloudant_password = "' + rnd(24, string.ascii_lowercase) + '"',
        "cloudant url": "Cloudant at https://acme:" + rnd(64, HEX) + "@acme.cloudant.com",
        "discord bot token": "Bot token " + "M" + rnd(23, ALNUM) + "." + rnd(6, ALNUM) + "." + rnd(27, ALNUM),
        "github personal token": "Use token gh" + "p_" + rnd(36),
        "github oauth token": "OAuth gh" + "o_" + rnd(36),
        "github app token": "App token `gh" + "s_" + rnd(36) + "`",
        "gitlab personal token": "GitLab: gl" + "pat-" + rnd(20, ALNUM + "-_"),
        "gitlab runner token": "Runner registration GR" + "1348941" + rnd(24, ALNUM),
        "high entropy, quoted": 'The signing key is "' + rnd(40, ALNUM + "+/") + '"',
        "high entropy, code span": "Webhook secret: `" + rnd(40, ALNUM + "+/") + "`",
        "ibm cloud iam key": 'ibm_cloud_iam_key = "' + rnd(44, ALNUM + "_-") + '"',
        "ibm cos hmac key": 'ibm_cos_hmac_secret_access_key = "' + rnd(48, HEX) + '"',
        "json web token": "Auth header token " + jwt,
        "password keyword": 'password = "' + rnd(12) + '"',
        "db password keyword": 'db_pass: "' + rnd(10) + '"',
        "client secret keyword": "client_secret = `" + rnd(18) + "`",
        "mailchimp key": "Mailchimp " + rnd(32, HEX) + "-us" + "6",
        "npm token": "In .npmrc: //npm.acme.internal/:_auth" + "Token=npm_" + rnd(36),
        "openai key": "OpenAI key sk-" + rnd(20) + "T3Blbk" + "FJ" + rnd(20),
        "rsa private key": pem.format("RSA PRIVATE"),
        "openssh private key": pem.format("OPENSSH PRIVATE"),
        "ec private key": pem.format("EC PRIVATE"),
        "pkcs8 private key": pem.format("PRIVATE"),
        "pgp private key": "-----" + "BEGIN PGP PRIVATE KEY BLOCK" + "-----",
        "putty key": "PuTTY-User-" + "Key-File-2: ssh-rsa",
        "package index token": "Upload with " + _pypi_prefix() + rnd(80, ALNUM + "-_"),
        "sendgrid key": "SendGrid S" + "G." + rnd(22) + "." + rnd(43),
        "slack bot token": "Slack xo" + "xb-" + rnd(12, string.digits) + "-" + rnd(12, string.digits) + "-" + rnd(24, LOWER_ALNUM),
        "slack webhook": "Alerts go to https://hooks.slack.com/services/T" + rnd(8, UPPER_DIGITS) + "/B" + rnd(8, UPPER_DIGITS) + "/" + rnd(24),
        "softlayer key": 'softlayer_api_key = "' + rnd(64, LOWER_ALNUM) + '"',
        "square oauth secret": "Square sq0" + "csp-" + rnd(43),
        "stripe live key": "Stripe s" + "k_live_" + rnd(24),
        "stripe restricted key": "Stripe r" + "k_live_" + rnd(24),
        "telegram bot token": "Telegram bot " + rnd(9, string.digits) + ":" + rnd(35, ALNUM + "_-"),
        "twilio account sid": "Twilio A" + "C" + rnd(32, LOWER_ALNUM),
        "twilio api key": "Twilio S" + "K" + rnd(32, LOWER_ALNUM),
        "artifactory key": "Artifactory A" + "KC" + rnd(60),
        "a key on the second line": "Deploy notes:\n  use " + "AK" + "IA" + rnd(16, UPPER_DIGITS) + " for the bucket",
    }


def _look_alikes() -> dict[str, str]:
    sha = rnd(40, HEX)
    uuid = "-".join(rnd(n, HEX) for n in (8, 4, 4, 4, 12))
    aws_doc_id = "AKIA" + "IOSFODNN7" + "EXAMPLE"
    return {
        "git sha in a code span": f"Fixed in `{sha}`",
        "short git sha": f"Reverted {sha[:7]} last week",
        "git sha in a commit url": f"See https://github.com/acme/app/commit/{sha}",
        "hash in an asset url": f"Assets are served as https://cdn.acme.dev/app.{rnd(12, HEX)}.js",
        "sha256 digest in a code span": f"Image digest `sha256:{rnd(64, HEX)}`",
        "sha256 digest quoted": f'checksum = "{rnd(64, HEX)}"',
        "md5 in a code span": f"The fixture's md5 is `{rnd(32, HEX)}`",
        "uuid": f"Tenant {uuid} is the staging one",
        "uuid in a url": f"Dashboard: https://grafana.acme.dev/d/{uuid}/overview",
        "uuid quoted": f'tenant = "{uuid}"',
        "aws documented example key id": f"AWS documents {aws_doc_id} as its example key",
        "aws documented example secret": 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY' + 'EXAMPLEKEY"',
        "example key marked example": "Example token: `gh" + "p_" + "EXAMPLE" + "x" * 29 + "`",
        "short base64 test data": "`SGVsbG8gd29ybGQ=` decodes to Hello world",
        "base64 test data": "Fixture payload " + base64.b64encode(b"The quick brown fox jumps over the lazy dog").decode(),
        "base64 test data in a code span": "`" + base64.b64encode(b"test data for the parser").decode() + "`",
        "templated password": 'password = "<your-password>"',
        "templated api key": 'api_key = "${API_KEY}"',
        "environment variable": "export API_KEY=$API_KEY before running",
        "environment variables in code spans": "run with `PROVIDER_API_KEY=dummy`, `MODEL=gpt-5`; then",
        "indirect reference": 'token = os.environ["DEPLOY_TOKEN"]',
        "npm script": "Run `npm run lint` before pushing",
        "test path": "Tests live in `tests/unit`",
        "long source path": "The checks are in `server/memory_lens/core/checks.py`",
        "plain url": "Pull requests: https://github.com/acme/app/pull/1234",
        "ssh remote": "Remote is git@github.com:acme/app.git",
        "email": "Ask alice@acme.dev for access",
        "where keys live": "The API key lives in the team vault under `Deploy`",
        "advice about secrets": "Never commit `.env`; keep secrets in the vault",
        "rotation policy": "Rotate the AWS keys every 90 days",
        "stripe test prefix": "Use `sk_test_` keys in tests",
        "token prefix mention": "GitHub tokens start with `ghp_`, Slack bot tokens with `xoxb-`",
        "semver": "Pin v1.2.3-alpha.4+build.5678",
        "go pseudo version": "Uses v0.0.0-20230815123456-" + rnd(12, HEX),
        "timestamp": "Released 2024-05-01T12:34:56.789Z",
        "ip addresses": "Staging is 10.0.0.12, DNS is 8.8.8.8",
        "ssh public key": "Authorized: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rnd(43, ALNUM + "+/") + " ci@acme",
        "pytest command": "Run `pytest -k test_secret_detection -q`",
        "password reset code": "Password resets go through `notify.send_reset()`",
        "id field": 'user_id = "' + rnd(32) + '"',
        "sequential string": '"ABCDEFGHIJKLMNOPQRSTUVWXYZ"',
        "camel case identifier": "The server class is `MemoryLensServerWithLongName`",
        "markdown link with anchor": "[docs](docs/security.md#what-an-mcp-client-is-shown)",
        "keyword without a value": "Set `password` in your keychain, not here",
        "cache key format": "Cache keys look like `user:{id}:profile`",
    }


def _misses() -> dict[str, str]:
    """Secrets the detectors do not find (docs/security.md counts them)."""
    return {
        "unquoted password": "The staging db password is " + rnd(14),
        "hex api key": "Datadog key `" + rnd(32, HEX) + "`",
        "password in prose, quoted": "the admin login is admin / '" + rnd(10) + "'",
    }


SECRETS = _secret_samples()
LOOK_ALIKES = _look_alikes()
MISSES = _misses()


def never_echoed(output: str) -> None:
    """No word of any sample (12 characters or more) appears in OUTPUT: a refusal names the kind
    and the position of a secret, never the secret."""
    for text in SECRETS.values():
        for word in re.split(r"[\s\"'`=:@]+", text):
            assert len(word) < 12 or word not in output, word
