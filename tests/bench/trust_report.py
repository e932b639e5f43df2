#!/usr/bin/python3
"""The bookkeeping of `make eval-trust` (tests/bench/trust_eval.sh).

  trust_report.py plan SEED NOOPS CHANGES SIZES
      The commit plan, one line each: "noop", "up SIZE K" (STEPS_PER_OP
      raised by SIZE %, instance K) or "down SIZE K" (its revert).  Each
      change of size SIZE is an excursion: up, later down, no overlap, so
      every real commit moves ns_per_op by +SIZE % or back by
      -SIZE/(1+SIZE) %; the no-ops fall at random between them.

  trust_report.py status URL DIR
      Exits 0 when every commit of DIR/commits.tsv has a final ns_per_op
      verdict (or a failed job) for every job of DIR/schedules.tsv, else
      1; prints one progress line.

  trust_report.py report URL DIR
      Reads the verdicts, runs and alerts from the daemon at URL and the
      mails the SMTP server stored (DIR/meta's maildir), prints the markdown
      report and writes it to DIR/report.md (and the verdict of every
      pair to DIR/verdicts.tsv).  Exits 3 when there is no verdict at all.

DIR/commits.tsv: sha, kind (noop, up, down), size (percent, 0 for a
no-op), instance, subject.  DIR/schedules.tsv: name, job, keys (the YAML
the job adds to the shared config, "-" for none).  DIR/meta: key=value
lines the harness wrote (start, end, load samples are in DIR/load.txt,
the disturber's phases in DIR/disturb.log).
"""
import email
import email.policy
import glob
import json
import math
import os
import random
import re
import statistics
import sys
import time
import urllib.request

METRIC = "ns_per_op"


def plan(seed, noops, changes, sizes):
    rng = random.Random(seed)
    events = [(s, k) for s in sizes for k in range(1, changes + 1)]
    rng.shuffle(events)
    gaps = [0] * (2 * len(events) + 1)
    for _ in range(noops):
        gaps[rng.randrange(len(gaps))] += 1
    out = ["noop"] * gaps[0]
    for i, (s, k) in enumerate(events):
        out.append("up %g %d" % (s, k))
        out += ["noop"] * gaps[2 * i + 1]
        out.append("down %g %d" % (s, k))
        out += ["noop"] * gaps[2 * i + 2]
    return out


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=30) as r:
        return json.load(r)


def read_tsv(path):
    with open(path) as f:
        return [l.rstrip("\n").split("\t") for l in f if l.strip()]


def load(d):
    commits = [{"sha": r[0], "kind": r[1], "size": float(r[2]),
                "instance": int(r[3]), "subject": r[4]}
               for r in read_tsv(os.path.join(d, "commits.tsv"))]
    scheds = [{"name": r[0], "job": r[1], "keys": r[2]}
              for r in read_tsv(os.path.join(d, "schedules.tsv"))]
    return commits, scheds


def collect(url, commits, scheds, want_jobs=False):
    """(commit sha, job) -> a dict of the pair's ns_per_op verdict."""
    jobs = {s["job"] for s in scheds}
    got = {}
    for c in commits:
        rows = get(url, "/api/v1/comparisons?commit=" + c["sha"])
        for r in rows.get("comparisons", []):
            if r.get("metric") != METRIC or r.get("bench") not in jobs:
                continue
            key = (c["sha"], r["bench"])
            pair = get(url, "/api/v1/pairs/%d" % r["pair_id"])
            cmp = [x for x in pair.get("comparisons", [])
                   if x.get("metric") == METRIC]
            v = {"pair": r["pair_id"], "verdict": r.get("verdict"),
                 "change": r.get("change_pct"), "p": r.get("p"),
                 "n_base": r.get("base_n") or 0,
                 "n_cand": r.get("cand_n") or 0,
                 "final": bool(cmp) and bool(cmp[0].get("final")),
                 "note": cmp[0].get("note") if cmp else None,
                 "base": pair.get("base") or {},
                 "cand": pair.get("candidate") or {}}
            if want_jobs:
                v["runs"] = []
                for side in ("base", "cand"):
                    jid = v[side].get("id")
                    if jid is not None:
                        j = get(url, "/api/v1/jobs/%d" % jid)
                        v["runs"] += [(x.get("created"), x.get("duration_s"))
                                      for x in j.get("runs", [])]
            # The newest pair of a commit and job counts (a retest
            # replaces the verdict of its point, as the alerts do).
            if key not in got or got[key]["pair"] < v["pair"]:
                got[key] = v
    return got


def failed_jobs(url):
    """(commit sha, job name) of failed or cancelled jobs."""
    bad = set()
    for st in ("failed", "cancelled"):
        for j in get(url, "/api/v1/jobs?state=%s&limit=500" % st)["jobs"]:
            if j.get("commit"):
                bad.add((j["commit"], j["name"]))
    return bad


def status(url, d):
    commits, scheds = load(d)
    ov = get(url, "/api/v1/overview")
    got = collect(url, commits, scheds)
    bad = failed_jobs(url)
    parts, done = [], True
    for s in scheds:
        n = sum(1 for c in commits
                if (got.get((c["sha"], s["job"])) or {}).get("final")
                or (c["sha"], s["job"]) in bad)
        done = done and n == len(commits)
        parts.append("%s %d/%d" % (s["name"], n, len(commits)))
    print("pairs final: %s; jobs queued %d, running %d" % (
        ", ".join(parts), ov.get("queued", 0), ov.get("running", 0)))
    return 0 if done else 1


def mails(maildir, commits, scheds):
    """(sha, job) -> number of mails received, and the unmatched ones."""
    by12 = {c["sha"][:12]: c["sha"] for c in commits}
    jobs = sorted((s["job"] for s in scheds), key=len, reverse=True)
    count, other = {}, 0
    for p in glob.glob(os.path.join(maildir, "mail-*.eml")):
        with open(p, "rb") as f:
            m = email.message_from_bytes(f.read(), policy=email.policy.default)
        subj = str(m.get("Subject", ""))
        try:
            body = m.get_content()
        except Exception:
            body = ""
        sha = next((by12[w] for w in re.findall(r"\b[0-9a-f]{12}\b", subj)
                    if w in by12), None)
        if sha is None:
            sha = next((by12[w[:12]]
                        for w in re.findall(r"\b[0-9a-f]{12,40}\b", body)
                        if w[:12] in by12), None)
        job = next((j for j in jobs if j + "." in subj), None) or \
            next((j for j in jobs if re.search(r"\b%s\b" % re.escape(j), body)),
                 None)
        if sha is None or job is None:
            other += 1
            continue
        count[(sha, job)] = count.get((sha, job), 0) + 1
    return count, other


def binom_cdf(k, n, p):
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i)
               for i in range(k + 1))


def upper95(k, n):
    """One-sided 95 % upper bound of a rate seen k times in n (exact)."""
    if n == 0:
        return float("nan")
    if k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if binom_cdf(k, n, mid) > 0.05:
            lo = mid
        else:
            hi = mid
    return hi


def frac(k, n):
    return "%d/%d (%.0f %%)" % (k, n, 100.0 * k / n) if n else "-"


def per100(k, n):
    return "%d (%.1f)" % (k, 100.0 * k / n) if n else "-"


def hms(s):
    s = int(round(s))
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


def size_label(s):
    return "%g" % s


def runner_time(got, scheds):
    """Seconds of the runner's time spent on each job's pairs.

    The gaps between runs stored one after another (all jobs, in order)
    telescope to the whole span; each gap goes to the job of the run that
    ends it (the export, build and runs of that job's claim).  Run times
    are whole seconds: exact over a schedule, not per pair."""
    runs = []
    for (sha, job), v in got.items():
        runs += [(t, job) for t, _ in v.get("runs", []) if t is not None]
    runs.sort()
    spent = {s["job"]: 0.0 for s in scheds}
    for (t0, _), (t1, job) in zip(runs, runs[1:]):
        spent[job] = spent.get(job, 0.0) + (t1 - t0)
    return spent, (runs[-1][0] - runs[0][0]) if runs else 0


def report(url, d):
    commits, scheds = load(d)
    meta = dict(l.rstrip("\n").split("=", 1)
                for l in open(os.path.join(d, "meta")) if "=" in l)
    got = collect(url, commits, scheds, want_jobs=True)
    bad = failed_jobs(url)
    mail, other_mail = mails(meta.get("maildir", os.path.join(d, "smtp")),
                             commits, scheds)
    sizes = sorted({c["size"] for c in commits if c["kind"] != "noop"})
    if not any(v["final"] for v in got.values()):
        print("eval-trust: no final verdict at all", file=sys.stderr)
        return 3
    spent, span = runner_time(got, scheds)
    jobinfo = {}
    for s in scheds:
        mr = [v["cand"].get("max_runs") for (sha, j), v in got.items()
              if j == s["job"] and v["cand"].get("max_runs")]
        jobinfo[s["job"]] = max(mr) if mr else None

    loads = []
    if os.path.exists(os.path.join(d, "load.txt")):
        loads = [float(l.split()[0]) for l in open(os.path.join(d, "load.txt"))
                 if l.strip()]
    busy = {}
    if os.path.exists(os.path.join(d, "disturb.log")):
        for l in open(os.path.join(d, "disturb.log")):
            f = l.split()
            if len(f) == 4:
                cpu = f[0]
                b = busy.setdefault(cpu, [0.0, 0.0])
                b[0 if f[2] == "busy" else 1] += float(f[3])
    lines = []
    p = lines.append
    wall = float(meta.get("end", time.time())) - float(meta.get("start", 0))
    p("## eval-trust, %s" % meta.get("date", "?"))
    p("")
    p("Tree under test: %s (%s), %s CPUs; perfwatchd and perfwatch-runner "
      "on 127.0.0.1; %d commits on the benchmark's tree: %d no-ops, and "
      "%d real changes of each size (%s %%: each a slowdown and its revert)."
      % (meta.get("commit", "?"), meta.get("branch", "?"),
         meta.get("cpus", "?"), len(commits),
         sum(1 for c in commits if c["kind"] == "noop"),
         sum(1 for c in commits if c["kind"] != "noop" and c["size"] == sizes[0])
         if sizes else 0, ", ".join("+" + size_label(s) for s in sizes)))
    if busy:
        tot = [sum(v[0] for v in busy.values()), sum(sum(v) for v in busy.values())]
        p("Disturber: %s; busy %.0f %% of the time over %d CPUs."
          % (meta.get("disturber", "?"), 100 * tot[0] / max(tot[1], 1e-9),
             len(busy)))
    else:
        p("Disturber: off.")
    if loads:
        p("Load average (1 min, sampled every %s s): %.2f-%.2f, mean %.2f."
          % (meta.get("poll", "?"), min(loads), max(loads),
             sum(loads) / len(loads)))
    p("Whole run: %s wall (the two schedules interleaved on one runner)."
      % hms(wall))
    p("")
    head = ["schedule", "job keys", "no-ops judged", "false alarms (per 100)",
            "mails (per 100)"] + ["+%s %% found" % size_label(s) for s in sizes] + \
        ["mean runs per side", "wall time"]
    p("| " + " | ".join(head) + " |")
    p("|" + "---|" * 2 + "---:|" * (len(head) - 2))
    goals = []
    detail = []
    for s in scheds:
        job = s["job"]
        rows = [(c, got.get((c["sha"], job))) for c in commits]
        noop = [(c, v) for c, v in rows if c["kind"] == "noop" and v and v["final"]]
        alarms = [(c, v) for c, v in noop
                  if v["verdict"] in ("regression", "improvement", "unstable")]
        nmail = sum(mail.get((c["sha"], job), 0) for c, v in rows
                    if c["kind"] == "noop")
        mailed_noops = sum(1 for c, v in rows if c["kind"] == "noop"
                           and mail.get((c["sha"], job), 0))
        found = {}
        for sz in sizes:
            ch = [(c, v) for c, v in rows if c["kind"] != "noop"
                  and c["size"] == sz and v and v["final"]]
            k = sum(1 for c, v in ch if v["verdict"] ==
                    ("regression" if c["kind"] == "up" else "improvement"))
            found[sz] = (k, len(ch), ch)
        judged = [v for c, v in rows if v and v["final"]]
        mean_runs = (sum((v["n_base"] + v["n_cand"]) / 2 for v in judged)
                     / len(judged)) if judged else float("nan")
        most = max((max(v["n_base"], v["n_cand"]) for v in judged), default=0)
        cells = [s["name"], "`%s`" % s["keys"] if s["keys"] != "-" else "(none)",
                 str(len(noop)), per100(len(alarms), len(noop)),
                 per100(nmail, len(noop))]
        cells += [frac(found[sz][0], found[sz][1]) for sz in sizes]
        cells += ["%.1f" % mean_runs, hms(spent.get(job, 0))]
        p("| " + " | ".join(cells) + " |")

        # Goals of the issue, per schedule.
        n = len(noop)
        ub = upper95(len(alarms), n)
        goals.append((s["name"], "0 mails per 100 no-ops",
                      nmail == 0 and n > 0,
                      "%d mails on %d of %d no-ops" % (nmail, mailed_noops, n)))
        goals.append((s["name"], "<= 1 false alarm per 100 no-ops",
                      n > 0 and 100.0 * len(alarms) / n <= 1.0,
                      "%d in %d = %.1f per 100; 95 %% upper bound %.1f per 100"
                      % (len(alarms), n, 100.0 * len(alarms) / n if n else 0,
                         100 * ub)))
        for sz, want in ((10.0, 0.9), (25.0, 1.0)):
            if sz in found:
                k, m, _ = found[sz]
                goals.append((s["name"], ("+%g %% found %s%.0f %%"
                              % (sz, "" if want == 1 else ">= ", 100 * want)),
                              m > 0 and k >= want * m,
                              frac(k, m)))
        mr = jobinfo.get(job)
        goals.append((s["name"], "within max_runs", mr is None or most <= mr,
                      "most runs on a side %d (max_runs %s)" % (most, mr)))

        # What the verdicts were, for whoever reads a miss.
        counts = {}
        for c, v in noop:
            counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
        detail.append("- %s, no-ops: %s%s" % (
            s["name"], ", ".join("%s %d" % kv for kv in sorted(counts.items())),
            "; alarms on " + ", ".join(
                "%s (%s %+.1f %%, %d+%d runs)" % (c["sha"][:12], v["verdict"],
                                                 v["change"] or 0, v["n_base"],
                                                 v["n_cand"])
                for c, v in alarms) if alarms else ""))
        spread = sorted(abs(v["change"]) for c, v in noop
                        if v["change"] is not None)
        if spread:
            # Nearest rank: the smallest value with 90 % at or below it.
            p90 = spread[math.ceil(0.9 * len(spread)) - 1]
            detail.append("- %s, no-op changes (the noise): median |change| "
                          "%.1f %%, 90th percentile %.1f %%, largest %.1f %%"
                          % (s["name"], statistics.median(spread), p90,
                             spread[-1]))
        for sz in sizes:
            k, m, ch = found[sz]
            parts = []
            for kind, name in (("up", "+%g %%" % sz),
                               ("down", "revert %+.1f %%" % (-100 * sz / (100 + sz)))):
                x = [v for c, v in ch if c["kind"] == kind]
                want = "regression" if kind == "up" else "improvement"
                chg = [v["change"] for v in x if v["change"] is not None]
                med = statistics.median(chg) if chg else float("nan")
                verd = {}
                for v in x:
                    verd[v["verdict"]] = verd.get(v["verdict"], 0) + 1
                parts.append("%s found %d/%d, measured %+.1f %% (median), %s" % (
                    name, sum(1 for v in x if v["verdict"] == want), len(x), med,
                    ", ".join("%s %d" % kv for kv in sorted(verd.items()))))
            detail.append("- %s, %s" % (s["name"], "; ".join(parts)))
        missing = [c for c, v in rows if not (v and v["final"])]
        if missing:
            detail.append("- %s: %d commits without a final verdict (%d with "
                          "a failed job)" % (s["name"], len(missing), sum(
                              1 for c in missing if (c["sha"], job) in bad)))
        mailed_changes = sum(1 for c, v in rows if c["kind"] != "noop"
                             and mail.get((c["sha"], job), 0))
        detail.append("- %s, mails: %d on no-ops, real changes mailed %d/%d"
                      % (s["name"], nmail, mailed_changes,
                         sum(1 for c in commits if c["kind"] != "noop")))
    p("")
    p("False alarm: a no-op's final verdict is regression, improvement or "
      "unstable. Found: a slowdown judged regression, a revert judged "
      "improvement (final verdicts; both directions counted in each size). "
      "Mails: messages the SMTP server received about a no-op of that job. "
      "Wall time: the runner's time on that schedule's pairs (the gaps "
      "between stored runs, each given to the job of the run that ends it).")
    p("")
    p("Goals (the issue: 0 mails and <= 1 alarm per 100 no-ops under the "
      "disturber; +10 % found >= 90 %, +25 % found 100 %, within max_runs):")
    p("")
    for name, goal, ok, what in goals:
        p("    %-4s %-34s %s  (%s)" % (name, goal, "PASS" if ok else "MISS", what))
    p("")
    p("Details:")
    p("")
    lines += detail
    if other_mail:
        p("- %d mails matched no commit of the evaluation" % other_mail)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(d, "verdicts.tsv"), "w") as f:
        f.write("sha\tkind\tsize\tjob\tverdict\tchange_pct\tp\tn_base\tn_cand"
                "\tmails\tnote\n")
        for c in commits:
            for s in scheds:
                v = got.get((c["sha"], s["job"])) or {}
                f.write("\t".join(str(x) for x in (
                    c["sha"], c["kind"], size_label(c["size"]), s["job"],
                    v.get("verdict") if v.get("final") else "none",
                    v.get("change"), v.get("p"), v.get("n_base"),
                    v.get("n_cand"), mail.get((c["sha"], s["job"]), 0),
                    (v.get("note") or "").replace("\t", " ")
                    .replace("\n", " "))) + "\n")
    return 0


def main(argv):
    if len(argv) == 6 and argv[1] == "plan":
        for line in plan(int(argv[2]), int(argv[3]), int(argv[4]),
                         [float(x) for x in argv[5].split()]):
            print(line)
        return 0
    if len(argv) == 4 and argv[1] == "status":
        return status(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "report":
        return report(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
