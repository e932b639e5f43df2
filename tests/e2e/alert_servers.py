#!/usr/bin/python3
"""Real servers on 127.0.0.1 for the alert tests (tests/e2e/t08*-alerts*).

  alert_servers.py smtp DIR [PORT]
                                 aiosmtpd on PORT (default 0: any); each message it accepts
                                 is DIR/mail-N.eml (the bytes received) and a
                                 line of DIR/envelopes.jsonl; port in DIR/port
  alert_servers.py smtp-tls DIR CERT KEY USER PASSWORD
                                 the same, requiring STARTTLS (CERT, KEY) and
                                 then AUTH as USER; the envelope line also
                                 has "auth" (the login) and "tls"
  alert_servers.py hook DIR SECRET MODE [MAX_AGE]
                                 an HTTP receiver on port 0: verifies
                                 X-Perfwatch-Signature (HMAC-SHA256 with SECRET
                                 of "<X-Perfwatch-Timestamp>.<body>") and that
                                 the timestamp is at most MAX_AGE seconds
                                 (default 300) from now, as docs/ALERTS.md
                                 says a receiver does; stores each POST in
                                 DIR/hooks.jsonl ({"ok": signature valid and
                                 fresh, "fresh", "headers", "body"}) and
                                 answers one that is not ok 401; else MODE
                                 ok (200), fail2 (500
                                 twice, then 200), 429 (429 with Retry-After: 1
                                 once, then 200), hang (never answers),
                                 slow (200 after 0.6 s: a kill of the
                                 sender lands between the receipt and
                                 the sender's record of it)
"""
import asyncio, hashlib, hmac, http.server, json, os, sys, threading, time


def smtp(d, want=0, tls=None):
    from aiosmtpd.smtp import SMTP, AuthResult

    class H:
        n = 0

        async def handle_DATA(self, server, session, envelope):
            H.n += 1
            with open(os.path.join(d, "mail-%d.eml" % H.n), "wb") as f:
                f.write(envelope.original_content)
            with open(os.path.join(d, "envelopes.jsonl"), "a") as f:
                f.write(json.dumps({"from": envelope.mail_from,
                                    "rcpt": envelope.rcpt_tos,
                                    "auth": session.authenticated and
                                    session.auth_data.login.decode(),
                                    "tls": session.ssl is not None}) + "\n")
            return "250 OK stored"

    async def main():
        loop = asyncio.get_running_loop()
        kw = {}
        if tls:
            import ssl
            cert, key, user, pw = tls
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(cert, key)

            def check(server, session, envelope, mechanism, data):
                ok = data.login.decode() == user and data.password.decode() == pw
                return AuthResult(success=ok, auth_data=data)
            kw = dict(tls_context=ctx, require_starttls=True,
                      authenticator=check, auth_required=True,
                      auth_require_tls=True)
        srv = await loop.create_server(
            lambda: SMTP(H(), enable_SMTPUTF8=True, **kw), "127.0.0.1", want)
        port = srv.sockets[0].getsockname()[1]
        with open(os.path.join(d, "port.tmp"), "w") as f:
            f.write("%d\n" % port)
        os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
        await srv.serve_forever()

    asyncio.run(main())


def hook(d, secret, mode, max_age=300):
    lock = threading.Lock()
    count = [0]

    class R(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n)
            ts = self.headers.get("X-Perfwatch-Timestamp", "")
            fresh = ts.isdigit() and abs(time.time() - int(ts)) <= max_age
            want = "sha256=" + hmac.new(secret.encode(),
                                        ts.encode() + b"." + body,
                                        hashlib.sha256).hexdigest()
            got = self.headers.get("X-Perfwatch-Signature", "")
            ok = fresh and hmac.compare_digest(want, got)
            with lock:
                count[0] += 1
                k = count[0]
                with open(os.path.join(d, "hooks.jsonl"), "a") as f:
                    f.write(json.dumps({
                        "ok": ok, "fresh": fresh, "n": k,
                        "time": time.time(),
                        "headers": dict(self.headers.items()),
                        "body": body.decode("utf-8", "replace")}) + "\n")
            if mode == "hang":
                time.sleep(3600)
                return
            if mode == "slow":
                time.sleep(0.6)
            status = 200
            if not ok:
                status = 401
            elif mode == "fail2" and k <= 2:
                status = 500
            elif mode == "429" and k == 1:
                status = 429
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), R)
    srv.daemon_threads = True
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "smtp-tls":
        smtp(sys.argv[2], 0, sys.argv[3:7])
    elif sys.argv[1] == "smtp":
        smtp(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    else:
        hook(sys.argv[2], sys.argv[3], sys.argv[4],
             float(sys.argv[5]) if len(sys.argv) > 5 else 300)
