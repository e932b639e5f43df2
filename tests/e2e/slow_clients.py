#!/usr/bin/python3
"""Slow and half-sent HTTP clients for the limits test (t0306).

  slow_clients.py hold PORT SRC N KIND SECS OUT
      opens N connections to 127.0.0.1:PORT from the source address SRC
      (127.0.0.2, ...), each sending part of a request of KIND, then
      waits up to SECS seconds, watching when the server closes each one.
      KIND: head (a request line and part of a header, never the blank
      line), body (complete headers with Content-Length: 50000 and 10
      bytes of body, with the admin token of the file in $SLOW_TOKEN_FILE
      when set: the daemon reads no body of a request it refuses on its
      head), idle (nothing at all), trickle:T (head, then one
      more header byte a second for T seconds, then nothing).  Writes
      OUT (JSON) when done: {"connected": how many connects succeeded,
      "closed_at": [seconds after the connect, or null when still open],
      "answered": how many got any bytes back}; and OUT.ready once every
      connection is set up.
  slow_clients.py probe PORT SRC OUT [SECS]
      one complete GET /healthz from SRC: OUT gets {"status": the HTTP
      status, or null when the server closed or reset the connection, or
      did not answer within SECS (default 20)}.
"""
import json, os, select, socket, sys, time


def connect(port, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    return s


def head_part():
    return b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def auth_header():
    path = os.environ.get("SLOW_TOKEN_FILE")
    if not path:
        return b""
    with open(path) as f:
        return b"Authorization: Bearer " + f.read().strip().encode() + b"\r\n"


def hold(port, src, n, kind, secs, out):
    conns, t0 = [], []
    connected = 0
    for _ in range(n):
        try:
            s = connect(port, src)
        except OSError:
            continue
        connected += 1
        if kind in ("head",) or kind.startswith("trickle"):
            s.send(head_part())
        elif kind == "body":
            s.send(b"POST /api/v1/submit HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   + auth_header() +
                   b"Content-Type: application/json\r\n"
                   b"Content-Length: 50000\r\n\r\n{\"job\": \"k")
        conns.append(s)
        t0.append(time.monotonic())
    with open(out + ".ready", "w") as f:
        f.write("%d\n" % connected)
    trickle = float(kind.split(":")[1]) if kind.startswith("trickle") else 0
    closed = [None] * len(conns)
    answered = 0
    start = time.monotonic()
    next_byte = start + 1
    while time.monotonic() - start < secs and None in closed:
        now = time.monotonic()
        if trickle and now >= next_byte and now - start < trickle:
            for i, s in enumerate(conns):
                if closed[i] is None:
                    try:
                        s.send(b"x")
                    except OSError:
                        closed[i] = now - t0[i]
            next_byte = now + 1
        live = [s for i, s in enumerate(conns) if closed[i] is None]
        r, _, _ = select.select(live, [], [], 0.2)
        for s in r:
            i = conns.index(s)
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:
                answered += 1
            closed[i] = time.monotonic() - t0[i]
    for s in conns:
        s.close()
    with open(out + ".tmp", "w") as f:
        json.dump({"connected": connected, "closed_at": closed,
                   "answered": answered}, f)
    os.rename(out + ".tmp", out)


def probe(port, src, out, secs):
    status = None
    try:
        s = connect(port, src)
        s.setblocking(True)
        s.settimeout(secs)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Connection: close\r\n\r\n")
        data = s.recv(4096)
        if data.startswith(b"HTTP/1."):
            status = int(data.split()[1])
        s.close()
    except OSError:
        pass
    with open(out, "w") as f:
        json.dump({"status": status}, f)


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        hold(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5],
             float(sys.argv[6]), sys.argv[7])
    else:
        probe(int(sys.argv[2]), sys.argv[3], sys.argv[4],
              float(sys.argv[5]) if len(sys.argv) > 5 else 20)
