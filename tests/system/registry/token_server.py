#!/usr/bin/env python3
"""A token issuer for docker-registry's token auth, owned by the tests.

Checks HTTP basic credentials (GET), or an OAuth2 refresh token (POST, the
form of the distribution spec's auth/oauth.md; the one valid token is
"rt-" and the password), then signs a JWT (RS256, with the signing
certificate in the x5c header, which the registry trusts through its
rootcertbundle) granting pull on the requested repository. Signing uses the
openssl command, so nothing beyond the standard library is needed.

Usage: token_server.py PORT KEY CERT ISSUER SERVICE USER PASSWORD
"""
import base64
import http.server
import json
import os
import subprocess
import sys
import time
import urllib.parse

PORT, KEY, CERT, ISSUER, SERVICE, USER, PASSWORD = sys.argv[1:8]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cert_der() -> bytes:
    return subprocess.run(["openssl", "x509", "-in", CERT, "-outform", "DER"],
                          check=True, capture_output=True).stdout


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def deny(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="tokens"')
        self.end_headers()

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path != "/token":
            self.send_response(404)
            self.end_headers()
            return
        auth = self.headers.get("Authorization", "")
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if auth != expected:
            self.deny()
            return
        self.issue(urllib.parse.parse_qs(url.query), "token")

    def do_POST(self):
        url = urllib.parse.urlparse(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        if url.path != "/token" or form.get("grant_type") != ["refresh_token"] \
                or form.get("refresh_token") != ["rt-" + PASSWORD] or "Authorization" in self.headers:
            body = b'{"error": "invalid_grant"}'
            self.send_response(400)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.issue(form, "access_token")

    def issue(self, query, field):
        access = []
        for scope in query.get("scope", []):
            kind, name, actions = scope.split(":", 2)
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(cert_der()).decode()]}
        claims = {"iss": ISSUER, "sub": USER, "aud": query.get("service", [SERVICE])[0],
                  "exp": now + 300, "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(),
                  "access": access}
        signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", KEY], input=signing_input.encode(),
                                   check=True, capture_output=True).stdout
        body = json.dumps({field: signing_input + "." + b64url(signature), "expires_in": 300}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


http.server.ThreadingHTTPServer(("127.0.0.1", int(PORT)), Handler).serve_forever()
