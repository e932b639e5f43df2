# A private CA and a server certificate made with openssl, on top of
# lib.sh (t0359 and make check-deploy; docs/DEPLOY.md shows the same
# steps for a real fleet):
#
#   . "$(dirname "$0")/lib_tls.sh"
#
#   tls_certs DIR CN SAN   makes DIR/ca.pem (the CA, valid 2 days,
#                          readable by all), DIR/server.pem and
#                          DIR/server.key for subject CN with
#                          subjectAltName SAN ("IP:127.0.0.1,..."); 0,
#                          or FAIL make_certificates with openssl's
#                          words and 1.  Needs openssl (check first).

tls_certs() {
	local c=$1 cn=$2 san=$3
	mkdir -p "$c"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=perfwatch test CA" \
	    -keyout "$c/ca.key" -out "$c/ca.pem" 2>"$c/log" &&
	    openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" \
	        -keyout "$c/server.key" -out "$c/server.csr" 2>>"$c/log" &&
	    printf 'subjectAltName=%s\n' "$san" >"$c/ext" &&
	    openssl x509 -req -in "$c/server.csr" -CA "$c/ca.pem" -CAkey "$c/ca.key" \
	        -CAcreateserial -days 2 -extfile "$c/ext" -out "$c/server.pem" 2>>"$c/log" ||
	    { fail make_certificates "$(cat "$c/log")"; return 1; }
	chmod 644 "$c/ca.pem"
}
