#!/bin/bash
# html-safety.sh — fold2html's promise that no input can add markup or
# script to its page: svg-safety.sh's checks, on the page.  Hostile frame
# names and option values (--title, --subtitle, --notes, --countname,
# --nametype, --fonttype) — <script>, "</script>", <img onerror>, "]]>",
# "<!--", quotes, entities, javascript: and data: URLs, U+2028 and U+2029,
# control characters, invalid UTF-8 and UTF-8-encoded surrogates, a 200 kB
# name — go through fold2html, then
#  (a) xmllint accepts every page (it is well-formed XML as well as HTML),
#      whose elements are the writer's own, with no on* attribute, no
#      link or source, and one <script>: the writer's configuration (JSON
#      whose strings are the cleaned options), the frames as one base64
#      string, and lib/render/fold2html.js, byte for byte; no "</script",
#      "<script" or "<!--" inside it;
#  (b) headless Chromium (test/browser/html-safety.js) opens each from a
#      file:// URL with traps on alert/confirm/print/open installed before
#      load, hovers every frame, zooms, opens sandwiches, searches with
#      hostile regexes and restores a hostile ?s=&x=&y=&sandwich= URL: no
#      trap, no dialog, no navigation, no request, no uncaught exception;
#      a hand-made unsafe page must trip the traps, so the test can fail;
#  (c) the names shown (hover, tooltip, #title, #subtitle) are the input
#      with invalid bytes and control characters as U+FFFD.
# If Chromium cannot start, the test FAILS.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
fail() { echo "html-safety FAILED: $*" >&2; exit 1; }
. "$ROOT/test/browser/setup.sh"
[ -x "$BIN/fold2html" ] || fail "no $BIN/fold2html; run make"
command -v xmllint >/dev/null || fail "xmllint is missing (apt-get install libxml2-utils)"

T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir "$T/opt"

# Frame names, one stack each ("root;NAME 10"); printf writes exact bytes.
{
	printf '%s\n' \
		'<script>alert(1)</script>' \
		'</script><script>alert(2)</script>' \
		'</SCRIPT ><img src=x onerror=alert(3)>' \
		'<img src=x onerror=fk_pwn("img")>' \
		']]><script>fk_pwn("cdata")</script><![CDATA[' \
		'<!--<script>alert(4)</script>-->' \
		"'\"&amp;&lt;&#60;&#x3c;script&gt;" \
		'" onload="alert(5)" x="' \
		'javascript:alert(7)' \
		'data:text/html,<script>alert(8)</script>' \
		'${alert(9)}\");alert(10);//' \
		'\u2028\");fk_pwn(12);//' \
		'__proto__' 'constructor' 'hasOwnProperty' 'all' '--' '-'
	printf 'c\001\002\003\004\005\006\007\010\t\013\014\015\016\017\020\021\022\023\024\025\026\027\030\031\032\033\034\035\036\037\177\302\200\302\237end\n'
	printf 'u\377\376\300\257\355\240\200\355\277\277\364\220\200\200\357\277\276\342\202end\n'
	printf '\342\200\250\342\200\251</script><script>alert(13)</script>\n'
	printf 'x\342\200\250");fk_pwn(14);("\n'
	awk 'BEGIN { for (i = 0; i < 8000; i++) printf "<script>alert(11)</script>"; printf "\n" }'
} | sed 's/^/root;/; s/$/ 10/' > "$T/names.folded"

printf '<script>alert(21)</script>]]>"'"'"'&amp;</title>\001\033\177\377\355\240\200 end' > "$T/opt/title"
printf '<img src=x onerror=alert(22)>\002\300\257</div>' > "$T/opt/subtitle"
printf -- '--><script>alert(23)</script><!-- ]]> \003 -' > "$T/opt/notes"
printf 's"\\'"'"')(.*+?[$^{</script><script>alert(24)</script>\004\376\342\200\250' > "$T/opt/countname"
printf '</script><script>alert(25)</script>\342\200\250\005\355\240\200:' > "$T/opt/nametype"
printf '"; } body { background: url(javascript:alert(26)) } x { "\377' > "$T/opt/fonttype"

opts=(--title="$(cat "$T/opt/title")" --subtitle="$(cat "$T/opt/subtitle")"
      --notes="$(cat "$T/opt/notes")" --countname="$(cat "$T/opt/countname")"
      --nametype="$(cat "$T/opt/nametype")" --fonttype="$(cat "$T/opt/fonttype")")
f2h() { "$BIN/fold2html" "$@" 2> "$T/err" || { cat "$T/err" >&2; fail "fold2html $* failed"; }; }
f2h "${opts[@]}" "$T/names.folded" > "$T/plain.html"
f2h "${opts[@]}" --inverted --hash --colors=java "$T/names.folded" > "$T/java.html"
# a differential graph of the same names, as a flame chart
sed 's/ 10$/ 10 13/' "$T/names.folded" | f2h "${opts[@]}" --flamechart --negate > "$T/diff.html"
pages=(plain java diff)

# (a) well-formed, the writer's elements, one script of the writer's
for p in "${pages[@]}"; do
	f=$T/$p.html
	xmllint --noout --nonet "$f" || fail "$p.html: xmllint rejects it"
	xp() { xmllint --nonet --xpath "$1" "$f" 2>/dev/null; }
	[ "$(xp 'count(//script)')" = 1 ] || fail "$p.html: not exactly one <script>"
	[ "$(xp 'count(//*[not(contains(" html head meta title style body header div button h1 input main canvas footer span script ", concat(" ", local-name(), " ")))])')" = 0 ] ||
		fail "$p.html: an element the writer does not write"
	[ "$(xp 'count(//@*[starts-with(translate(local-name(), "ON", "on"), "on")])')" = 0 ] ||
		fail "$p.html: an on* attribute"
	[ "$(xp 'count(//@href | //@src | //@srcdoc | //@action | //@formaction | //@style)')" = 0 ] ||
		fail "$p.html: a link, a source or a style attribute"
	echo "ok   $p.html is well-formed XML with the writer's elements only"
done

# (b), (c) in the browser; the canary is unsafe on purpose
cat > "$T/canary.html" <<'EOF'
<!DOCTYPE html>
<html><body><script>alert("canary")</script>
<a id="canary" href="javascript:fk_pwn('canary-link')">x</a></body></html>
EOF
cd "$ROOT/test/browser" && timeout "$BROWSER_HANG" node html-safety.js "$T" "$ROOT/lib/render/fold2html.js" "${pages[@]}"
st=$?
[ $st = 3 ] && fail "Chromium (/usr/bin/chromium) could not start"
[ $st = 0 ] || fail "html-safety.js exit $st"
