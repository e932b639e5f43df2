#!/usr/bin/python3
"""A forwarding HTTP proxy between a runner and perfwatchd (t0681, t0363, t0366, t0382).

  api_proxy.py UPSTREAM DIR

Listens on 127.0.0.1, port 0 (the port in DIR/port), and forwards every
request to UPSTREAM (method, path and query, Authorization, Content-Type,
body); it answers with the upstream's status, Content-Type and body.
While DIR/corrupt exists, the body of a 200 reply to /api/v1/packs/...
has one byte in its middle flipped: a pack damaged on the way, as a bad
link or disk could.  Each pack reply is a line of DIR/packs.log:
"STATUS LENGTH corrupted|intact PATH".
While DIR/cut-run holds a run index, the first upload of a run with that
index (POST /api/v1/jobs/N/runs) is forwarded and answered upstream,
which has then stored it, and the proxy exits without replying, as a
daemon killed between its commit and its reply; "STATUS N" (upstream's)
is then in DIR/cut.
While DIR/finish_delay exists, the reply to a job's finish (POST
/api/v1/jobs/N/finish) is held that many seconds (the file's number)
after the daemon answered, as a slow link would, while the runner's
heartbeats go on.  Each finish the daemon answered, and each heartbeat
it answered with cancel, is a line of DIR/calls.log, in the order the
answers came: "finish STATUS PATH", "cancel JOB_ID".
Each claim (POST /api/v1/jobs/claim) the daemon answered is a line of
DIR/claims.log: "CLAIM_ID STATUS JOB ATTEMPT" ("-" for what the request
or its reply lacks).  While DIR/cut-claim exists, the first claim the
daemon answered with a job is not answered: the proxy writes that line
to DIR/claim-cut and exits, as a daemon killed between its claim's
commit and its reply.
"""
import http.client, http.server, json, os, re, sys, threading, time, urllib.parse

UP = urllib.parse.urlsplit(sys.argv[1])
DIR = sys.argv[2]
KEEP = ("authorization", "content-type", "accept")
RUNS = re.compile(r"^/api/v1/jobs/(\d+)/runs$")


def cut_here(path, body, status):
    """The upload to cut (DIR/cut-run): DIR/cut written, then exits."""
    m = RUNS.match(path)
    try:
        with open(os.path.join(DIR, "cut-run")) as f:
            index = int(f.read())
    except (OSError, ValueError):
        return
    if m is None or body is None or json.loads(body).get("index") != index:
        return
    with open(os.path.join(DIR, "cut.tmp"), "w") as f:
        f.write("%d %s\n" % (status, m.group(1)))
    os.rename(os.path.join(DIR, "cut.tmp"), os.path.join(DIR, "cut"))
    os._exit(0)
LOG_MU = threading.Lock()


def claim_seen(path, body, status, data):
    """A claim's line in DIR/claims.log; the claim to cut: DIR/claim-cut
    written, then exits."""
    if path != "/api/v1/jobs/claim":
        return
    try:
        cid = json.loads(body or b"{}").get("claim_id") or "-"
    except ValueError:
        cid = "-"
    job = {}
    if status == 200:
        try:
            job = json.loads(data).get("job") or {}
        except ValueError:
            pass
    line = "%s %d %s %s\n" % (cid, status, job.get("id", "-"),
                              job.get("attempt", "-"))
    with LOG_MU, open(os.path.join(DIR, "claims.log"), "a") as f:
        f.write(line)
    if job and os.path.exists(os.path.join(DIR, "cut-claim")):
        with open(os.path.join(DIR, "claim-cut.tmp"), "w") as f:
            f.write(line)
        os.rename(os.path.join(DIR, "claim-cut.tmp"),
                  os.path.join(DIR, "claim-cut"))
        os._exit(0)


class Proxy(http.server.BaseHTTPRequestHandler):
    def forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        hdrs = {k: v for k, v in self.headers.items() if k.lower() in KEEP}
        c = http.client.HTTPConnection(UP.hostname, UP.port, timeout=120)
        try:
            c.request(self.command, self.path, body=body, headers=hdrs)
            r = c.getresponse()
            data = r.read()
        except OSError as e:
            self.send_error(502, str(e))
            return
        finally:
            c.close()
        if self.command == "POST":
            cut_here(self.path, body, r.status)
            claim_seen(self.path, body, r.status, data)
        self.calls(body, r.status, data)
        if self.path.startswith("/api/v1/packs/"):
            bad = (r.status == 200 and len(data) > 0 and
                   os.path.exists(os.path.join(DIR, "corrupt")))
            if bad:
                b = bytearray(data)
                b[len(b) // 2] ^= 0x5A
                data = bytes(b)
            with open(os.path.join(DIR, "packs.log"), "a") as f:
                f.write("%d %d %s %s\n" % (r.status, len(data),
                        "corrupted" if bad else "intact", self.path))
        self.send_response(r.status)
        for k in ("Content-Type", "Retry-After"):
            if r.getheader(k):
                self.send_header(k, r.getheader(k))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def calls(self, body, status, data):
        line = None
        if self.path.startswith("/api/v1/jobs/") and self.path.endswith("/finish"):
            line = "finish %d %s" % (status, self.path)
        elif self.path == "/api/v1/runners/heartbeat" and status == 200:
            if json.loads(data).get("cancel"):
                line = "cancel %s" % json.loads(body or b"{}").get("job_id")
        if line is not None:
            with LOG_MU, open(os.path.join(DIR, "calls.log"), "a") as f:
                f.write(line + "\n")
        if line is not None and line.startswith("finish "):
            try:
                with open(os.path.join(DIR, "finish_delay")) as f:
                    time.sleep(float(f.read()))
            except FileNotFoundError:
                pass

    do_GET = do_POST = forward

    def log_message(self, *args):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
srv.serve_forever()
