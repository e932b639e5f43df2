#!/usr/bin/env python3
"""An HTTP server on 127.0.0.1 for the git tests: serves the repositories
under ROOT through `git http-backend` (smart HTTP; libgit2 has no
dumb-HTTP client), at http://127.0.0.1:PORT/NAME.git.

    git_httpd.py ROOT [PORT]    prints the port, then serves until killed

Python's CGIHTTPRequestHandler is not used: it hands the socket to the
CGI child after its own buffered reader may have eaten the request body,
and it switches to user nobody when run as root.  Here the body is read
whole (Content-Length or chunked) and given to http-backend on stdin.
"""
import http.server
import os
import subprocess
import sys
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    root = "."

    def log_message(self, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def cgi(self):
        body = self.read_body()
        url = urllib.parse.urlsplit(self.path)
        env = dict(os.environ)
        env.update({
            "GIT_PROJECT_ROOT": self.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": urllib.parse.unquote(url.path),
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        })
        enc = self.headers.get("Content-Encoding", "")
        if enc:
            env["HTTP_CONTENT_ENCODING"] = enc
        p = subprocess.run(["git", "http-backend"], input=body, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        head, _, payload = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = p.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = cgi
    do_POST = cgi


def main():
    Handler.root = os.path.abspath(sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
