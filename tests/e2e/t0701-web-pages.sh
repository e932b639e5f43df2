#!/usr/bin/env bash
# check: parallel
# The dashboard served by a real daemon filled through the real runner API
# with hostile text: every page answers, escapes what it shows, stays
# small; the JSON mirrors answer; admin login, CSRF and triage work, by
# form and by API.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/web_fill.sh"

D=$PW_TMP/d
daemon_config "$D" r1
web_job_file "$D"
start_daemon "$D" || { fail start "daemon did not start"; finish; }
web_fill 3 1000 900 || { fail fill "could not fill the daemon"; finish; }
ADM=$(token_of admin)

# The daemon's verdicts: pair 3's ops -9.93% is its one regression (the
# triage path acts on it); everything else is unchanged.
web_wait_verdicts 3 || { fail verdicts "no verdicts from the daemon"; finish; }

web_heartbeat
# The overview's badge says by how much: the ops change of pair 3.
page web_overview / 'hosts online: <b>1</b>' 'href="/pair/3"' \
    'Submitted pairs' 'badge v-regression' 'new regressions: <b>1</b>' \
    'regression</span> <span class="change">-9.9% <span class="muted">ops</span></span>'
# Each side's mean, sd and %stddev beside its median (ops 1000, 1007,
# 1014: mean 1007, sd 7, 0.70%; the candidate's 907, 7, 0.77%), the
# interval as text beside its bar, the runs per side and (in the sides
# table: 3 runs, 1 round) the rounds.
page web_pair /pair/3 'badge v-regression' '-9.93%' 'class="cibar"' \
    '&lt;script&gt;alert(1)&lt;/script&gt;' '/api/v1/jobs/6/runs/2/raw' \
    'latency_p99' '<td class="n mean">1007 &plusmn;7 <span class="muted">(0.70%)</span></td>' \
    '<td class="n mean">907 &plusmn;7 <span class="muted">(0.77%)</span></td>' \
    '<span class="ci-text">[-' '<td class="n">3 / 3</td>' \
    '<th scope="row">base</th>' '</td><td class="n">3</td><td class="n">1</td></tr>'
# A run's raw output is text, never sniffed into HTML.
hdr=$(curl -s -D - -o /dev/null "$PW_URL/api/v1/jobs/6/runs/2/raw")
grep -qi '^Content-Type: text/plain' <<<"$hdr" &&
    grep -qi '^X-Content-Type-Options: nosniff' <<<"$hdr" &&
    pass raw_output_nosniff || fail raw_output_nosniff "$hdr"
page web_pair_unchanged /pair/1 'badge v-unchanged' 'latency_p99'
web_heartbeat
page web_hosts /hosts 'AMD EPYC 7702 &lt;script&gt;' '503 GiB' '>online<'
page web_jobs /jobs 'badge v-success' '6 in all'
page web_jobs_filter '/jobs?state=queued' 'No jobs.' '<option selected>queued'
page web_history '/history?job=kv&point=x%3D%3Cscript%3Ealert(1)%3C%2Fscript%3E&metric=ops' \
    '<svg' 'class="pt alert"' 'class="mark"' 'commits, oldest to newest'
page web_regressions /regressions 'Log in</a> to triage' 'regression'
page web_regressions_filter '/regressions?state=fixed' 'No regressions match'
page web_login /login 'type="password"'

# The page answers 404 (HTML) for unknown ids and bad shas.
code=$(http GET /pair/999)
check web_pair_404 [ "$code" = 404 ]
code=$(http GET '/commit/zz%3Cscript%3E')
check web_commit_bad_sha [ "$code" = 404 ]
grep -qi '<script' "$PW_TMP/body" && fail web_commit_bad_sha_escaped "raw <script"
code=$(http GET '/history?job=kv')
check web_history_needs_metric [ "$code" = 400 ]

# Job log as text.
code=$(http GET /jobs/1/log)
check web_job_log [ "$code" = 200 ] && grep -q 'build ok' "$PW_TMP/body"
# A job's page: what it measured, its runs, and its log line by line,
# escaped (the runner's log has markup, an escape character and a CRLF,
# and two entries that do not end their lines).
page web_job_page /jobs/1 '<h1>Job 1</h1>' 'href="/pair/1"' \
    '/api/v1/jobs/1/runs/2/raw' \
    '<pre class="log"><span class="ln">build ok &lt;b&gt;bold&lt;/b&gt; '$'\xef\xbf\xbd''[31m</span>'
grep -q '^<span class="ln">run 0 &lt;i&gt;done&lt;/i&gt;</span>$' "$PW_TMP/body" &&
    grep -q '^<span class="ln">all done</span>$' "$PW_TMP/body" &&
    pass web_job_log_lines || fail web_job_log_lines "$(grep -A4 '<pre' "$PW_TMP/body")"
code=$(http GET /jobs/999)
check web_job_page_404 [ "$code" = 404 ]
code=$(http GET /jobs/1x)
check web_job_page_bad_id [ "$code" = 404 ]
# The list pages of the routes that have JSON lists.
page web_series_list /series '<h1>Series</h1>' 'No series.'
page web_bisect_list /bisect '<h1>Bisections</h1>' 'No bisections.'
page web_alerts_list '/alerts?state=sent&kind=%3Cx' '<h1>Alerts</h1>' \
    'No alerts.' '<option selected>sent'
# Links from pages land on pages: none on JSON (raw outputs are text).
json_links=
for p in / /pair/3 /jobs /jobs/2 /hosts /regressions /series /bisect /alerts; do
	http GET "$p" >/dev/null
	l=$(grep -o 'href="/api/v1/[^"]*"' "$PW_TMP/body" |
	    grep -v '/runs/[0-9]*/raw"' | head -n 3)
	[ -n "$l" ] && json_links="$json_links $p: $l"
done
if [ -z "$json_links" ]; then
	pass web_links_land_on_pages
else
	fail web_links_land_on_pages "$json_links"
fi

# Security headers on pages.
hdr=$(curl -s -D - -o /dev/null "$PW_URL/")
if grep -qi "^Content-Security-Policy: default-src 'none'" <<<"$hdr" &&
    grep -qi '^X-Content-Type-Options: nosniff' <<<"$hdr"; then
	pass web_security_headers
else
	fail web_security_headers "$hdr"
fi

# JSON mirrors.
code=$(http GET /api/v1/overview)
[ "$code" = 200 ] && [ "$(jfield hosts_online <"$PW_TMP/body")" = 1 ] &&
    [ "$(jfield groups.0.items.0.benches.0.verdict <"$PW_TMP/body")" = regression ] &&
    pass web_api_overview || fail web_api_overview "$code $(head -c 300 "$PW_TMP/body")"
code=$(http GET '/api/v1/comparisons?pair=3')
[ "$code" = 200 ] &&
    [ "$(jfield comparisons.1.base_median <"$PW_TMP/body")" = 1007.0 ] &&
    [ "$(jfield comparisons.1.cand_median <"$PW_TMP/body")" = 907.0 ] &&
    [ "$(jfield comparisons.1.base_mean <"$PW_TMP/body")" = 1007.0 ] &&
    [ "$(jfield comparisons.1.base_sd <"$PW_TMP/body")" = 7.0 ] &&
    [ "$(jfield comparisons.1.cand_mean <"$PW_TMP/body")" = 907.0 ] &&
    [ "$(jfield comparisons.1.verdict <"$PW_TMP/body")" = regression ] &&
    [ "$(jfield comparisons.0.verdict <"$PW_TMP/body")" = unchanged ] &&
    pass web_api_comparisons ||
    fail web_api_comparisons "$code $(head -c 400 "$PW_TMP/body")"
# The pair's own JSON: the verdict's means and sds, a side's rounds,
# and no boots for a job that boots no kernel.
code=$(http GET /api/v1/pairs/3)
[ "$code" = 200 ] && python3 - "$PW_TMP/body" <<'PY' && pass web_api_pair_side_stats ||
import json, sys
o = json.load(open(sys.argv[1]))
c = [c for c in o["comparisons"] if c["metric"] == "ops"][0]
assert c["base_mean"] == 1007 and c["base_sd"] == 7, c
assert abs(c["base_sd_pct"] - 700 / 1007) < 1e-9, c
assert c["cand_mean"] == 907 and c["cand_sd"] == 7, c
assert o["base"]["rounds"] == 1 and o["base"]["boots"] == 0, o["base"]
PY
    fail web_api_pair_side_stats "$code $(head -c 600 "$PW_TMP/body")"
code=$(http GET '/api/v1/history?job=kv&point=x%3D%3Cscript%3Ealert(1)%3C%2Fscript%3E&metric=ops')
[ "$code" = 200 ] && [ "$(jfield points.5.median <"$PW_TMP/body")" = 907.0 ] &&
    [ "$(jfield points.5.alert <"$PW_TMP/body")" = "regression (new)" ] &&
    pass web_api_history || fail web_api_history "$code $(head -c 400 "$PW_TMP/body")"
code=$(http GET '/api/v1/regressions?state=new')
[ "$code" = 200 ] && [ "$(jfield regressions.0.id <"$PW_TMP/body")" = 1 ] &&
    pass web_api_regressions || fail web_api_regressions "$code"
code=$(http GET '/api/v1/regressions?state=bogus')
check web_api_regressions_bad_state [ "$code" = 400 ]
grep -q 'perfwatch_regressions{state="new"} 1' <(curl -s "$PW_URL/metrics") &&
    pass web_metrics || fail web_metrics "no regression gauge"

# Login: the form's CSRF field must match its cookie; the token must be
# the admin token; the session cookie is HttpOnly and SameSite=Strict.
J=$PW_TMP/jar
curl -s -c "$J" -b "$J" -o "$PW_TMP/login" "$PW_URL/login"
pre=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/login")
code=$(curl -s -c "$J" -b "$J" -o /dev/null -w '%{http_code}' \
    --data-urlencode "csrf=$pre" --data-urlencode "token=wrong" \
    "$PW_URL/login")
check web_login_wrong_token [ "$code" = 403 ]
curl -s -c "$J" -b "$J" -o "$PW_TMP/login" "$PW_URL/login"
pre=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/login")
code=$(curl -s -b "$J" -o /dev/null -w '%{http_code}' \
    --data-urlencode "csrf=0$pre" --data-urlencode "token=$(cat "$ADM")" \
    "$PW_URL/login")
check web_login_bad_csrf [ "$code" = 403 ]
hdr=$(curl -s -D - -c "$J" -b "$J" -o /dev/null \
    --data-urlencode "csrf=$pre" --data-urlencode "token=$(cat "$ADM")" \
    --data-urlencode "next=/regressions" "$PW_URL/login")
if grep -qi '^Set-Cookie: pw_session=[0-9a-f]\{64\}; Path=/; HttpOnly; SameSite=Strict' <<<"$hdr" &&
    grep -qi '^Location: /regressions' <<<"$hdr"; then
	pass web_login
else
	fail web_login "$hdr"
fi
# After login, only a local path: a next= that a browser would read as
# another site (tab or newline dropped, backslash as slash) goes to
# /regressions instead.
bad=
for next in "$(printf '/\t/evil.example')" "$(printf '/\n/evil.example')" \
    '/\evil.example' '//evil.example' 'https://evil.example' \
    "$(printf '/\x7f/evil.example')" '/ /evil.example'; do
	J2=$PW_TMP/jar2
	rm -f "$J2"
	curl -s -c "$J2" -b "$J2" -o "$PW_TMP/login" "$PW_URL/login"
	pre=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/login")
	hdr=$(curl -s -D - -c "$J2" -b "$J2" -o /dev/null \
	    --data-urlencode "csrf=$pre" --data-urlencode "token=$(cat "$ADM")" \
	    --data-urlencode "next=$next" "$PW_URL/login")
	loc=$(sed -n 's/^[Ll]ocation: *//p' <<<"$hdr" | tr -d '\r')
	[ "$loc" = /regressions ] || bad="$bad [$(printf %q "$next") -> $(printf %q "$loc")]"
done
[ -z "$bad" ] && pass web_login_next_stays_local || fail web_login_next_stays_local "$bad"
curl -s -b "$J" -o "$PW_TMP/reg" "$PW_URL/regressions"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/reg" | head -1)
check web_triage_form_shown grep -q 'action="/regressions/1/triage"' "$PW_TMP/reg"
code=$(curl -s -b "$J" -o /dev/null -w '%{http_code}' \
    --data-urlencode "state=fixed" "$PW_URL/regressions/1/triage")
check web_triage_needs_csrf [ "$code" = 403 ]
code=$(curl -s -o /dev/null -w '%{http_code}' --data-urlencode "csrf=$csrf" \
    --data-urlencode "state=fixed" "$PW_URL/regressions/1/triage")
check web_triage_needs_session [ "$code" = 403 ]
code=$(curl -s -b "$J" -o /dev/null -w '%{http_code}' \
    --data-urlencode "csrf=$csrf" --data-urlencode "state=acknowledged" \
    --data-urlencode "note=looking <b>into</b> it" \
    "$PW_URL/regressions/1/triage")
st=$(sql "SELECT state || '|' || note FROM regressions WHERE id = 1")
if [ "$code" = 303 ] && [ "$st" = 'acknowledged|looking <b>into</b> it' ]; then
	pass web_triage_form
else
	fail web_triage_form "$code $st"
fi
page web_triage_note_escaped /regressions 'looking &lt;b&gt;into&lt;/b&gt; it'

# Triage by API: admin bearer only, state checked.
code=$(http POST /api/v1/regressions/1/triage - '{"state":"fixed"}')
check web_api_triage_401 [ "$code" = 401 ]
code=$(http POST /api/v1/regressions/1/triage "$(token_of r1)" '{"state":"fixed"}')
check web_api_triage_runner_403 [ "$code" = 403 ]
code=$(http POST /api/v1/regressions/1/triage "$ADM" '{"state":"gone"}')
check web_api_triage_bad_state [ "$code" = 400 ]
code=$(http POST /api/v1/regressions/9/triage "$ADM" '{"state":"fixed"}')
check web_api_triage_404 [ "$code" = 404 ]
code=$(http POST /api/v1/regressions/1/triage "$ADM" '{"state":"fixed","note":"v2 fixes it"}')
st=$(sql "SELECT state || '|' || note FROM regressions WHERE id = 1")
[ "$code" = 200 ] && [ "$st" = 'fixed|v2 fixes it' ] && pass web_api_triage ||
    fail web_api_triage "$code $st"

# A pair whose candidate has not run has no verdict: its page shows the
# base's medians, the verdict unknown.
code=$(http POST /api/v1/submit "$ADM" '{"job":"kv"}')
[ "$code" = 201 ] && [ "$(http POST /api/v1/jobs/claim "$(token_of r1)" \
    '{"wait_s":1}')" = 200 ] && web_runs "$(jfield job.id <"$PW_TMP/body")" 1000 ||
    fail web_pair_unknown_setup "could not run the base of pair 4"
page web_pair_unknown /pair/4 'badge v-unknown' 'the medians of both sides'

# Logout ends the session.
code=$(curl -s -b "$J" -o /dev/null -w '%{http_code}' \
    --data-urlencode "csrf=$csrf" "$PW_URL/logout")
curl -s -b "$J" -o "$PW_TMP/reg" "$PW_URL/regressions"
[ "$code" = 303 ] && grep -q 'Log in</a> to triage' "$PW_TMP/reg" &&
    pass web_logout || fail web_logout "$code"
finish
