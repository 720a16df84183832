#!/bin/bash
# svg-safety.sh — fold2svg's promise that no input can add markup or script
# to its SVG.  Hostile frame names, option values (--title, --subtitle,
# --notes, --countname, --nametype) and --nameattr attributes — <script>,
# "]]>", "<![CDATA[", quotes, entities, "</svg>", <foreignObject>, on*=
# handlers, javascript: and data: URLs, control characters, invalid UTF-8
# and UTF-8-encoded surrogates, a 200 kB name — go through fold2svg, then
#  (a) xmllint accepts every output, which holds one <script> (fold2svg's
#      own), no <foreignObject>, no on* attribute and no link that is not
#      http(s) or relative;
#  (b) headless Chromium (test/browser/safety.js) opens each from a file://
#      URL with traps on alert/confirm/print/open/eval installed before
#      load, hovers and clicks every frame, Ctrl-clicks the links, searches
#      with hostile regexes and restores a hostile ?s=&x=&y= URL: no trap,
#      no unexpected dialog, no javascript:/data: navigation, no uncaught
#      exception; a hand-made unsafe SVG must trip the traps, so the test
#      can fail;
#  (c) the names shown (titles, #title, #subtitle, hover details) are the
#      input with invalid bytes and control characters as U+FFFD.
# If Chromium cannot start, the test FAILS.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
fail() { echo "svg-safety FAILED: $*" >&2; exit 1; }
. "$ROOT/test/browser/setup.sh"
command -v xmllint >/dev/null || fail "xmllint is missing (apt-get install libxml2-utils)"

T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir "$T/opt"

# Frame names, one stack each ("root;NAME 10"); printf writes exact bytes.
# A name cannot hold ';' (the frame separator), a newline or NUL.
{
	printf '%s\n' \
		'<script>alert(1)</script>' \
		']]><script>fk_pwn("cdata")</script><![CDATA[' \
		'<![CDATA[<script>alert(2)</script>]]>' \
		"'\"&amp;&lt;&#60;&#x3c;script&gt;" \
		'</title></g></svg><svg onload=alert(3)>' \
		'<foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><img src=x onerror=alert(4)></body></foreignObject>' \
		'" onload="alert(5)" x="' \
		"' onclick='alert(6)' y='" \
		'javascript:alert(7)' \
		'data:text/html,<script>alert(8)</script>' \
		'${alert(9)}\");alert(10);//' \
		'--><script>alert(12)</script><!--' \
		'fk_link_js' 'fk_link_data' 'fk_link_ws' 'fk_link_ctl' 'fk_link_ok'
	printf 'c\001\002\003\004\005\006\007\010\t\013\014\015\016\017\020\021\022\023\024\025\026\027\030\031\032\033\034\035\036\037\177\302\200\302\237end\n'
	printf 'u\377\376\300\257\355\240\200\355\277\277\364\220\200\200\357\277\276\342\202end\n'
	printf '\342\200\250\342\200\251</script><script>alert(13)</script>\n'
	awk 'BEGIN { for (i = 0; i < 8000; i++) printf "<script>alert(11)</script>"; printf "\n" }'
} | sed 's/^/root;/; s/$/ 10/' > "$T/names.folded"

printf '<script>alert(21)</script>]]>"'"'"'&amp;</svg>\001\033\177\377\355\240\200 end' > "$T/opt/title"
printf '<foreignObject><iframe src="javascript:alert(22)"/></foreignObject>\002\300\257' > "$T/opt/subtitle"
printf -- '--><script>alert(23)</script><!-- ]]> \003 -' > "$T/opt/notes"
printf 's"\\'"'"')(.*+?[$^{</title><script>alert(24)</script>\004\376' > "$T/opt/countname"
printf '</script><script>alert(25)</script>\342\200\250\005\355\240\200:' > "$T/opt/nametype"

# --nameattr: NAME<TAB>key=value...; only http(s) or relative links may
# stay, such as fk_link_ok's to fk-followed.html, which Ctrl-click opens
{
	printf 'fk_link_js\thref=javascript:fk_pwn("href")\tonclick=fk_pwn("onclick")\tonmouseover=alert(31)\tstyle=background:url("javascript:fk_pwn(1)");x:expression(alert(32))\ttitle=<script>alert(33)</script>\001\tclass=x" onmouseover="alert(34)\n'
	printf 'fk_link_data\thref=data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg" onload="alert(35)"/>\ttarget=_top" onclick="alert(36)\n'
	printf 'fk_link_ws\thref= JaVaScRiPt:alert(37)\tclass=]]><script>alert(38)</script>\n'
	printf 'fk_link_ctl\thref=java\001script:alert(39)\tstyle=fill:red/><script>alert(40)</script><g onload=alert(1)\n'
	printf 'fk_link_ok\thref=fk-followed.html?q="><script>alert(41)</script>\ttitle=ok & "link" <b>\n'
} > "$T/nameattr"
echo '<html><title>followed</title></html>' > "$T/fk-followed.html"

opts=(--title="$(cat "$T/opt/title")" --subtitle="$(cat "$T/opt/subtitle")"
      --notes="$(cat "$T/opt/notes")" --countname="$(cat "$T/opt/countname")"
      --nametype="$(cat "$T/opt/nametype")" --nameattr="$T/nameattr")
f2s() { "$BIN/fold2svg" "$@" 2> "$T/err" || { cat "$T/err" >&2; fail "fold2svg $* failed"; }; }
f2s "${opts[@]}" "$T/names.folded" > "$T/plain.svg"
f2s "${opts[@]}" --encoding=ISO-8859-1 --inverted --hash "$T/names.folded" > "$T/ascii.svg"
# a differential graph of the same names, as a flame chart
sed 's/ 10$/ 10 13/' "$T/names.folded" | f2s "${opts[@]}" --flamechart --negate > "$T/diff.svg"
svgs=(plain ascii diff)

# (a) well-formed, and nothing but fold2svg's own script and markup
for s in "${svgs[@]}"; do
	xmllint --noout --nonet "$T/$s.svg" || fail "$s.svg: xmllint rejects it"
	xp() { xmllint --nonet --xpath "$1" "$T/$s.svg" 2>/dev/null; }
	[ "$(xp 'count(//*[local-name()="script"])')" = 1 ] || fail "$s.svg: not exactly one <script>"
	[ "$(xp 'count(//*[local-name()="foreignObject" or local-name()="iframe" or local-name()="img"])')" = 0 ] ||
		fail "$s.svg: an element from the input"
	[ "$(xp 'count(//@*[starts-with(translate(local-name(), "ON", "on"), "on")])')" = 0 ] ||
		fail "$s.svg: an on* attribute"
	[ "$(xp 'count(//@*[local-name()="href"])')" = 1 ] || fail "$s.svg: expected only fk_link_ok's link"
	[ "$(xp 'string(//@*[local-name()="href"])')" = 'fk-followed.html?q="><script>alert(41)</script>' ] ||
		fail "$s.svg: fk_link_ok's link changed"
	echo "ok   $s.svg is well-formed and holds only fold2svg's script"
done
LC_ALL=C grep -qP '[^\x00-\x7f]' "$T/ascii.svg" &&
	fail "ascii.svg: bytes outside ASCII with --encoding=ISO-8859-1"

# (b), (c) in the browser; the canary is unsafe on purpose
cat > "$T/canary.svg" <<'EOF'
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100">
<script>alert("canary")</script>
<a xlink:href="javascript:fk_pwn('canary-link')"><rect id="canary" width="100" height="100" fill="red"/></a>
</svg>
EOF
cd "$ROOT/test/browser" && timeout "$BROWSER_HANG" node safety.js "$T" "${svgs[@]}"
st=$?
[ $st = 3 ] && fail "Chromium (/usr/bin/chromium) could not start"
[ $st = 0 ] || fail "safety.js exit $st"
