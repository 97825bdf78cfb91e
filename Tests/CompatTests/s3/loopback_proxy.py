"""An HTTP forward proxy that sends every request to one loopback port, Host header untouched.

Command-line clients resolve `<bucket>.localhost` with the system resolver, which (unlike RFC 6761)
does not answer it here; pointed at this proxy (HTTP_PROXY, s3cmd's proxy_host), they can use
virtual-hosted-style addressing against the emulator exactly as they would against S3.
"""
import http.client
import http.server
import threading
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "upgrade"}


class LoopbackProxy:
    def __init__(self, port):
        target = port
        proxy = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def relay(self):
                url = urllib.parse.urlsplit(self.path)
                if url.hostname and url.hostname.endswith(".localhost"):
                    proxy.requests += 1
                origin = (url.path or "/") + ("?" + url.query if url.query else "")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP]
                conn = http.client.HTTPConnection("127.0.0.1", target, timeout=60)
                conn.putrequest(self.command, origin, skip_host=True, skip_accept_encoding=True)
                for k, v in headers:
                    conn.putheader(k, v)
                conn.endheaders(body)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response_only(resp.status, resp.reason)
                for k, v in resp.getheaders():
                    # A HEAD answer's Content-Length is the object's size; a body's is re-stated below.
                    if k.lower() not in HOP_BY_HOP and (k.lower() != "content-length" or self.command == "HEAD"):
                        self.send_header(k, v)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
