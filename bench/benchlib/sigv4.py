"""AWS Signature Version 4 for S3, header-signed and presigned (stdlib only).

Related: https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html and
https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html. S3 does not
normalise or double-encode the path, so the canonical URI is the path as sent.
"""
import datetime
import hashlib
import hmac
import urllib.parse

UNSIGNED = "UNSIGNED-PAYLOAD"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _quote(s, safe="-_.~"):
    return urllib.parse.quote(s, safe=safe)


def _canonical_query(pairs):
    enc = sorted((_quote(k), _quote(v)) for k, v in pairs)
    return "&".join(f"{k}={v}" for k, v in enc)


class Signer:
    """Signs S3 requests for one credential (the Hearth and moto defaults are test/test, us-east-1)."""

    def __init__(self, access_key="test", secret_key="test", region="us-east-1", service="s3"):
        self.access_key = access_key
        self.secret_key = secret_key
        self.region = region
        self.service = service

    def _key(self, day):
        k = hmac.new(("AWS4" + self.secret_key).encode(), day.encode(), hashlib.sha256).digest()
        for part in (self.region, self.service, "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        return k

    def _signature(self, amz_date, canonical_request):
        day = amz_date[:8]
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = "\n".join([
            "AWS4-HMAC-SHA256", amz_date, scope,
            hashlib.sha256(canonical_request.encode()).hexdigest(),
        ])
        return scope, hmac.new(self._key(day), to_sign.encode(), hashlib.sha256).hexdigest()

    @staticmethod
    def _now(now):
        return (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")

    def sign_headers(self, method, host, path, query=(), headers=None, payload_hash=EMPTY_SHA256, now=None):
        """Returns the headers (a dict, with Host) that make `method host path?query` a signed request.

        `path` is the encoded path as it goes on the wire; `query` a list of decoded (name, value)."""
        amz_date = self._now(now)
        h = {k.lower(): " ".join(str(v).split()) for k, v in (headers or {}).items()}
        h["host"] = host
        h["x-amz-date"] = amz_date
        h["x-amz-content-sha256"] = payload_hash
        names = sorted(h)
        canonical = "\n".join([
            method, path, _canonical_query(query),
            "".join(f"{n}:{h[n]}\n" for n in names),
            ";".join(names), payload_hash,
        ])
        scope, sig = self._signature(amz_date, canonical)
        out = dict(headers or {})
        out["Host"] = host
        out["x-amz-date"] = amz_date
        out["x-amz-content-sha256"] = payload_hash
        out["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                                f"SignedHeaders={';'.join(names)}, Signature={sig}")
        return out

    def presign(self, method, host, path, expires=3600, signed_headers=None, now=None):
        """Returns the path-and-query of a presigned URL (host is signed; add `signed_headers` to sign more)."""
        amz_date = self._now(now)
        h = {k.lower(): " ".join(str(v).split()) for k, v in (signed_headers or {}).items()}
        h["host"] = host
        names = sorted(h)
        q = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", f"{self.access_key}/{amz_date[:8]}/{self.region}/{self.service}/aws4_request"),
            ("X-Amz-Date", amz_date),
            ("X-Amz-Expires", str(expires)),
            ("X-Amz-SignedHeaders", ";".join(names)),
        ]
        canonical = "\n".join([
            method, path, _canonical_query(q),
            "".join(f"{n}:{h[n]}\n" for n in names),
            ";".join(names), UNSIGNED,
        ])
        _, sig = self._signature(amz_date, canonical)
        # Same order as botocore: the signature last.
        return path + "?" + _canonical_query(q) + "&X-Amz-Signature=" + sig
