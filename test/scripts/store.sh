#!/bin/bash
# store.sh - fold-push and fold-query against real ClickHouse servers
# (Debian's clickhouse-server, started here as plain processes on free
# loopback ports, test/store/clickhouse-servers.sh): one server alone, and
# two as a two-shard cluster with Distributed tables.  Real profiles
# (FlameGraph's perf recordings of Vert.x and Java, fold-report's C++
# server) are pushed from several "hosts" at two times, and queries must
# give back exactly what an awk sum of the files gives: all merged, one
# host, one time range, split by host; counts of 2^64-1 and nine decimals
# exactly; rows on both shards, every stack key ClickHouse's own
# sipHash64() of its text (checked with clickhouse-client, not foldkit).
# Then what must fail, and what it must leave: a server down, a wrong
# password, a read-only user, a query that runs out of memory, a schema of
# another version, a SQL quote in a label, mixed units.  A stand-in for
# Pyroscope checks its request byte for byte (PYROSCOPE_URL=pyroscope://
# HOST:PORT also pushes to a real one).  Exit 77 when clickhouse-server
# cannot run here.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
export PATH="$BIN:$PATH" LC_ALL=C
. "$ROOT/test/store/clickhouse-servers.sh"
T=$(mktemp -d)
STANDIN=
trap '[ -n "$STANDIN" ] && kill "$STANDIN" 2>/dev/null; ch_stop; rm -rf "$T"' EXIT
ch_start "$T/ch" 127.0.0.1 127.0.0.2
case $? in
0) ;;
2) echo "store: $CH_WHY" >&2; exit 77 ;;
*) echo "store test FAILED: $CH_WHY" >&2; exit 1 ;;
esac
A=127.0.0.1 B=127.0.0.2
ONE=clickhouse://$A:$CH_HTTP/single
FLEET=clickhouse://$A:$CH_HTTP/fleet
FLEETB=clickhouse://$B:$CH_HTTP/fleet
status=0
fail() { echo "store test FAILED: $*" >&2; status=1; }

# sum FILE...: the merged profile, summed with awk and sorted bytewise
# (integer counts below 2^53: exact in awk's doubles)
sum() {
	awk '{ c = $NF; s = substr($0, 1, length($0) - length(c) - 1); t[s] += c }
	     END { for (s in t) printf "%s %.0f\n", s, t[s] }' "$@" | sort
}

# same DESC EXPECTED ACTUAL
same() {
	if ! cmp -s "$2" "$3"; then
		fail "$1"
		diff "$2" "$3" | head -5 >&2
	fi
}

# runs CMD, which must fail with STATUS and say REGEX on stderr
must_fail() { # DESC STATUS REGEX CMD...
	local desc=$1 want=$2 re=$3 st
	shift 3
	"$@" > "$T/out" 2> "$T/err"
	st=$?
	[ $st = "$want" ] || fail "$desc: exit $st, not $want ($(head -c 300 "$T/err"))"
	grep -Eq -- "$re" "$T/err" || fail "$desc: stderr does not say /$re/: $(head -c 300 "$T/err")"
}

D=$ROOT/test/golden/data/flamegraph/diff
VA=$D/vertx-addrs-a.folded VB=$D/vertx-addrs-b.folded JA=$D/java-a.folded
CXX=$ROOT/test/golden/fold-report/data/cxx-on.folded
T1=1733400000 T2=1733403600

# --- the schema: one server, then the cluster from one of its servers
fold-push --init "$ONE" > "$T/out" || fail "--init $ONE"
grep -q 'schema version 1 ready' "$T/out" || fail "--init says: $(cat "$T/out")"
fold-push --init "$ONE" > /dev/null || fail "--init twice"
fold-push --init "$FLEET" --cluster fleet > "$T/out" || fail "--init --cluster"
grep -q "2 servers of cluster 'fleet'" "$T/out" || fail "--init --cluster says: $(cat "$T/out")"
must_fail "--init without the cluster on a cluster's database" 1 "for cluster 'fleet'" \
	fold-push --init "$FLEET"
must_fail "--init --cluster of no such cluster" 1 "no cluster 'nope'" \
	fold-push --init "$ONE" --cluster nope
for h in $A $B; do
	[ "$(ch_sql $h "SELECT engine FROM system.tables WHERE database = 'fleet' AND name = 'foldkit_samples'")" = Distributed ] ||
		fail "no Distributed foldkit_samples on $h"
done

# --- push: the same service on two hosts at T1, one of them again at T2
push() { # URL HOST SERVICE TIME FILE [ARGS...]
	local url=$1 host=$2 service=$3 t=$4 file=$5
	shift 5
	fold-push "$url" --label host="$host" --label service="$service" \
		--label profile=on-cpu --from "$t" --until $((t + 30)) "$@" "$file"
}
for url in "$ONE" "$FLEET"; do
	push "$url" h1 vertx $T1 "$VA" || fail "push h1 to $url"
	push "$url" h2 vertx $T1 "$VB" || fail "push h2 to $url"
	push "$url" h1 vertx $T2 "$VA" || fail "push h1 at T2 to $url"
	push "$url" h3 java $T1 "$JA" || fail "push h3 to $url"
	push "$url" h4 cxx $T2 "$CXX" || fail "push h4 to $url"
done
fold-push -v "$ONE" --label host=h1 --label service=vertx --label profile=on-cpu \
	--from $T1 --until $((T1 + 30)) "$VA" > "$T/out" || fail "push again"
grep -q '^already stored ' "$T/out" || fail "a profile pushed twice was not recognised: $(cat "$T/out")"

# --- queries give back exactly what was pushed
sum "$VA" "$VB" "$VA" > "$T/vertx.expect"
sum "$VB" > "$T/h2.expect"
sum "$VA" "$VB" > "$T/t1.expect"
sum "$VA" > "$T/h1.expect"
sum "$VA" "$VA" > "$T/h1both.expect"
for url in "$ONE" "$FLEET" "$FLEETB"; do
	fold-query "$url" --label service=vertx > "$T/q" || fail "query $url"
	same "all vertx hosts merged ($url)" "$T/vertx.expect" "$T/q"
	fold-query "$url" --label host=h2 > "$T/q" || fail "query host $url"
	same "one host ($url)" "$T/h2.expect" "$T/q"
	fold-query "$url" -l service=vertx --from $T1 --until $T2 > "$T/q" || fail "query range $url"
	same "one time range ($url)" "$T/t1.expect" "$T/q"
	fold-query "$url" -l service=vertx --from $T2 > "$T/q" || fail "query from $url"
	same "from T2 ($url)" "$T/h1.expect" "$T/q"
	fold-query "$url" -l host=h1 -l service=vertx > "$T/q" || fail "query h1 $url"
	same "one host at two times ($url)" "$T/h1both.expect" "$T/q"
	rm -rf "$T/by"
	fold-query "$url" -l service=vertx --by host -o "$T/by" || fail "query --by $url"
	same "--by host: h1 ($url)" "$T/h1both.expect" "$T/by/h1.folded"
	same "--by host: h2 ($url)" "$T/h2.expect" "$T/by/h2.folded"
	printf 'file\tcomm\tpid\tsamples\tshare\ttotal\tunit\n' > "$T/index.expect"
	for h in h1 h2; do
		t=$(awk '{ s += $NF } END { print s }' "$T/by/$h.folded")
		printf '%s.folded\t%s\t%s\n' $h $h "$t"
	done | sort -t $'\t' -k3,3nr | awk -F '\t' -v all="$(cat "$T/vertx.expect" | awk '{ s += $NF } END { print s }')" \
		'{ printf "%s\t%s\t%d\t-\t%.4f\t%s\tsamples\n", $1, $2, NR, $3 / all, $3 }' >> "$T/index.expect"
	same "--by host: index.tsv ($url)" "$T/index.expect" "$T/by/index.tsv"
done
# --by's directory is made as fp-record's is (core/outdir.h): new (with its
# parents), or the user's own, empty, writable by no other user, no link
rm -rf "$T/byd"
fold-query "$ONE" -l service=vertx --by host -o "$T/byd/a/b" || fail "--by into new parents"
same "--by into new parents" "$T/h2.expect" "$T/byd/a/b/h2.folded"
mkdir "$T/byd/empty"
fold-query "$ONE" -l service=vertx --by host -o "$T/byd/empty" || fail "--by into an empty directory"
must_fail "--by into a directory with a file" 1 "byd/a/b: .*not empty" \
	fold-query "$ONE" -l service=vertx --by host -o "$T/byd/a/b"
cmp -s "$T/h2.expect" "$T/byd/a/b/h2.folded" || fail "a refused --by changed a file"
mkdir "$T/byd/target"
ln -s "$T/byd/target" "$T/byd/link"
must_fail "--by into a symbolic link" 1 "byd/link: .*symbolic link" \
	fold-query "$ONE" -l service=vertx --by host -o "$T/byd/link"
[ -z "$(ls -A "$T/byd/target")" ] || fail "--by wrote through a link: $(ls "$T/byd/target")"
mkdir -m 1777 "$T/byd/public"
must_fail "--by into a directory any user may write to" 1 "byd/public: .*any user may write" \
	fold-query "$ONE" -l service=vertx --by host -o "$T/byd/public"
[ -z "$(ls -A "$T/byd/public")" ] || fail "--by wrote into a public directory"
# what the other tools make of a query is what they make of the files
fold-query "$FLEET" -l service=vertx | fold-report > "$T/q.md" || fail "fold-query | fold-report"
sum "$VA" "$VB" "$VA" | fold-report > "$T/f.md"
same "fold-report of a query" "$T/f.md" "$T/q.md"
fold-diff <(fold-query "$FLEET" -l host=h1 --until $T2) <(fold-query "$FLEET" -l host=h2) > "$T/q.diff" ||
	fail "fold-diff of two queries"
fold-diff "$VA" "$VB" > "$T/f.diff"
same "fold-diff of two queries" "$T/f.diff" "$T/q.diff"
fold-query "$FLEET" -l service=cxx | fold2svg > "$T/q.svg" || fail "fold-query | fold2svg"

# --- the cluster: rows on both shards, a host's on one; keys are sipHash64
na=$(ch_sql $A "SELECT count() FROM fleet.foldkit_samples_local")
nb=$(ch_sql $B "SELECT count() FROM fleet.foldkit_samples_local")
rows=$(( $(sum "$VA" | wc -l) * 2 + $(sum "$VB" | wc -l) + $(sum "$JA" | wc -l) + $(sum "$CXX" | wc -l) ))
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] || fail "rows on one shard only: $na and $nb"
[ $((na + nb)) = "$rows" ] || fail "$((na + nb)) sample rows on the shards, not $rows"
ha=$(ch_sql $A "SELECT DISTINCT host FROM fleet.foldkit_samples_local ORDER BY host" | tr '\n' ' ')
hb=$(ch_sql $B "SELECT DISTINCT host FROM fleet.foldkit_samples_local ORDER BY host" | tr '\n' ' ')
for h in h1 h2 h3 h4; do
	case " $ha$hb " in *" $h "*" $h "*) fail "host $h on both shards ($ha/ $hb)" ;; esac
done
for h in $A $B; do
	[ "$(ch_sql $h "SELECT count() FROM fleet.foldkit_stacks_local WHERE key != sipHash64(stack)")" = 0 ] ||
		fail "a stack key on $h is not sipHash64(stack)"
	[ "$(ch_sql $h "SELECT count() FROM fleet.foldkit_stacks_local")" -gt 0 ] || fail "no stacks on $h"
done

# --- counts are exact: 2^64-1 twice, nine decimals, zero
printf 'big;max 18446744073709551615\nbig;frac 0.000000001\nbig;half 12.5\nbig;zero 0\n' > "$T/big.folded"
push "$ONE" b1 big $T1 "$T/big.folded" || fail "push big counts"
push "$ONE" b2 big $T1 "$T/big.folded" || fail "push big counts again"
fold-query "$ONE" -l service=big > "$T/q" || fail "query big counts"
printf 'big;frac 0.000000002\nbig;half 25\nbig;max 36893488147419103230\nbig;zero 0\n' > "$T/big.expect"
same "exact sums past 2^64 and of decimals" "$T/big.expect" "$T/q"

# --- a label cannot inject SQL; any bytes in a value come back as they were
evil="x' OR '1'='1"
push "$ONE" h5 vertx $T1 "$JA" --label "release=$evil" || fail "push with a quote in a label"
fold-query "$ONE" -l "release=$evil" > "$T/q" || fail "query a quoted label"
same "a quote in a label selects its profile only" <(sum "$JA") "$T/q"
must_fail "a quoted label that matches nothing" 1 "no stored profile matches" \
	fold-query "$ONE" -l "release=y' OR '1'='1"
must_fail "a bad label key" 2 "label key" fold-query "$ONE" -l "a b=c"
weird=$(printf 'p\\\t\001\303\251,}=\\x41')
push "$ONE" h6 weird $T1 "$JA" --label "process=$weird" || fail "push with control characters in a label"
rm -rf "$T/byp"
fold-query "$ONE" -l service=weird --by process -o "$T/byp" || fail "query --by process"
[ "$(awk -F '\t' 'NR == 2 { print $2 }' "$T/byp/index.tsv")" = 'p\\\x09\x01é,}=\\x41' ] ||
	fail "index.tsv's comm of a weird name: $(awk -F '\t' 'NR == 2 { print $2 }' "$T/byp/index.tsv")"
[ -f "$T/byp/p_________x41.folded" ] || fail "the file of a weird name: $(ls "$T/byp")"

# --- a capture (fp-record's index.tsv) and a split= directory label
# their profiles themselves
mkdir -p "$T/cap/on" "$T/cap/off" "$T/cap/wake" "$T/split"
cp "$VA" "$T/cap/on/srv-4242.folded"
cp "$JA" "$T/cap/off/srv-4242.folded"
cp "$CXX" "$T/cap/wake/srv-4242.folded"
cp "$VB" "$T/cap/on/wrk-4243.folded"
{
	printf 'process\tpid\trole\texe\ton_cpu\ton_unit\toff_cpu\toff_unit\ton_folded\ton_svg\toff_folded\toff_svg\twake_folded\twake_unit\n'
	printf 'srv\\x09x\t4242\tmain\t/srv/bin/srv (deleted)\t1\tns\t2\tus\ton/srv-4242.folded\t-\toff/srv-4242.folded\t-\twake/srv-4242.folded\tus\n'
	printf 'wrk\t4243\t-\t-\t1\tns\t-\t-\ton/wrk-4243.folded\t-\t-\t-\t-\t-\n'
} > "$T/cap/index.tsv"
fold-push -v "$ONE" -l host=c1 --from $T1 --until $((T1 + 30)) "$T/cap" > "$T/out" || fail "push a capture"
[ "$(wc -l < "$T/out")" = 4 ] || fail "a capture's profiles: $(cat "$T/out")"
grep -q "^stored $T/cap/off/srv-4242.folded: $(sum "$JA" | wc -l) stacks, $(awk '{ s += $NF } END { print s }' "$JA") us, host=c1 pid=4242 process=srv\\\\x09x profile=off-cpu role=main service=srv unit=us$" "$T/out" ||
	fail "a capture's labels: $(cat "$T/out")"
grep -q "^stored $T/cap/wake/srv-4242.folded: .* us, host=c1 pid=4242 process=srv\\\\x09x profile=off-wake role=main service=srv unit=us$" "$T/out" ||
	fail "a capture's off-wake labels: $(cat "$T/out")"
fold-query "$ONE" -l host=c1 -l profile=off-wake > "$T/q" || fail "query a capture's off-wake side"
same "a capture's off-wake profile" <(sum "$CXX") "$T/q"
fold-query "$ONE" -l host=c1 -l role=main -l profile=on-cpu > "$T/q" || fail "query a capture's role"
same "a capture's role" <(sum "$VA") "$T/q"
fold-query "$ONE" -l host=c1 -l role= -l profile=on-cpu > "$T/q" || fail "query a capture's process without a role"
same "a capture's process without a role" <(sum "$VB") "$T/q"
[ "$(ch_sql $A "SELECT DISTINCT toUInt32(time), toUInt32(until) FROM single.foldkit_samples WHERE host = 'c1'")" = "$T1	$((T1 + 30))" ] ||
	fail "a capture's window: $(ch_sql $A "SELECT DISTINCT time, until FROM single.foldkit_samples WHERE host = 'c1'")"
rm -rf "$T/by"
fold-query "$ONE" -l host=c1 -l profile=on-cpu --by process -o "$T/by" || fail "query a capture by process"
same "a capture: one process" <(sum "$VA") "$T/by/srv_x.folded"
same "a capture: the other" <(sum "$VB") "$T/by/wrk.folded"
fold-query "$ONE" -l host=c1 -l service=wrk > "$T/q" || fail "query a capture's service"
same "a capture's service without an executable is its process" <(sum "$VB") "$T/q"
fold-query "$ONE" -l host=c1 -l profile=off-cpu -v > "$T/q" 2> "$T/err" || fail "query a capture's off-CPU side"
same "a capture's off-CPU profile" <(sum "$JA") "$T/q"
grep -q '1 profiles, .* unit us, profile off-cpu' "$T/err" || fail "-v says: $(cat "$T/err")"
cp "$VA" "$T/split/a-1.folded"
cp "$JA" "$T/split/b-2.folded"
printf 'file\tcomm\tpid\tsamples\tshare\ttotal\tunit\na-1.folded\ta\t1\t3\t0.5\t9\tus\nb-2.folded\tb\\\\\t2\t3\t0.5\t9\tus\n' > "$T/split/index.tsv"
fold-push "$ONE" -l host=s1 -l service=split "$T/split" || fail "push a split directory"
rm -rf "$T/by"
fold-query "$ONE" -l host=s1 --by pid -o "$T/by" || fail "query a split directory by pid"
same "a split directory: pid 1" <(sum "$VA") "$T/by/1.folded"
same "a split directory: pid 2" <(sum "$JA") "$T/by/2.folded"
cut -f 2,3,7 "$T/by/index.tsv" | sort > "$T/q"
printf '1\t1\tus\n2\t2\tus\ncomm\tpid\tunit\n' > "$T/index.expect"
same "--by pid: index.tsv's pids and unit" "$T/index.expect" "$T/q"
fold-query "$ONE" -l host=s1 -l 'process=b\' > "$T/q" || fail "query an unescaped process name"
same "a split index's escaped name" <(sum "$JA") "$T/q"
# an index cannot send a file from elsewhere: nothing of such a directory goes
mkdir "$T/evil"
cp "$VA" "$T/evil/a.folded"
ln -s /etc/passwd "$T/evil/p.folded"
printf 'file\tcomm\tpid\na.folded\ta\t1\np.folded\tp\t2\n' > "$T/evil/index.tsv"
must_fail "a link in a split directory" 1 "p.folded: a symbolic link, not a regular file" \
	fold-push "$ONE" -l host=e1 "$T/evil"
printf 'file\tcomm\tpid\na.folded\ta\t1\n../cap/on/wrk-4243.folded\tp\t2\n' > "$T/evil/index.tsv"
must_fail "a file outside a split directory" 1 "index.tsv:3: a file that is not inside the directory" \
	fold-push "$ONE" -l host=e1 "$T/evil"
must_fail "an evil directory stored nothing" 1 "no stored profile matches" fold-query "$ONE" -l host=e1

# --- a text stored twice (two pushes of a new stack at once, before
# ClickHouse merges them) counts once; a key with two texts (a collision)
# or none is refused
COLL=clickhouse://$A:$CH_HTTP/coll
fold-push --init "$COLL" > /dev/null || fail "--init coll"
push "$COLL" x1 coll $T1 "$JA" || fail "push coll"
push "$COLL" x2 coll $T1 "$JA" || fail "push coll x2"
ch_sql $A "INSERT INTO coll.foldkit_stacks (key, stack) SELECT key, stack FROM coll.foldkit_stacks"
[ "$(ch_sql $A "SELECT count() - uniqExact(key) FROM coll.foldkit_stacks")" -gt 0 ] || fail "no duplicate texts made"
fold-query "$COLL" > "$T/q" || fail "query with texts twice"
same "a text stored twice counts once" <(sum "$JA" "$JA") "$T/q"
rm -rf "$T/by"
fold-query "$COLL" --by host -o "$T/by" || fail "query --by with texts twice"
same "a text stored twice counts once (--by)" <(sum "$JA") "$T/by/x1.folded"
key=$(ch_sql $A "SELECT any(key) FROM coll.foldkit_stacks")
ch_sql $A "INSERT INTO coll.foldkit_stacks (key, stack) VALUES ($key, 'not;the;same;text')"
must_fail "a key with two texts" 1 "stack key $key names two stacks" fold-query "$COLL"
must_fail "a key with two texts (pinned)" 1 "names two stacks" fold-query "$COLL" -l unit=samples -l profile=on-cpu
ch_sql $A "INSERT INTO coll.foldkit_samples (time, until, host, service, profile, unit, push, stack, value) VALUES ($T2, $T2, 'x3', 'coll', 'on-cpu', 'samples', 1, 42, 5)"
must_fail "samples without a text" 1 "stack key 42 has samples but no text" fold-query "$COLL" -l host=x3

# --- what must fail, and leave nothing stored
rows_one() { ch_sql $A "SELECT count() FROM single.foldkit_samples"; }
before=$(rows_one)
down=$(ch_pick_port)
must_fail "server down" 1 "clickhouse://127.0.0.1:$down/single: cannot connect" \
	fold-push "clickhouse://127.0.0.1:$down/single" "$VA"
must_fail "server down (query)" 1 "clickhouse://127.0.0.1:$down/single: cannot connect" \
	fold-query "clickhouse://127.0.0.1:$down/single"
must_fail "wrong password" 1 "clickhouse://fk@127.0.0.1:$CH_HTTP/single: authentication refused for user 'fk'" \
	fold-push "clickhouse://fk:wrong@$A:$CH_HTTP/single" -l host=h9 "$VA"
grep -q wrong "$T/err" && fail "the password is in a message"
fold-push "clickhouse://fk:s3cret@$A:$CH_HTTP/single" -l host=h8 -l service=fk "$VA" ||
	fail "the right password"
must_fail "a read-only user's insert" 1 "clickhouse://ro@.*readonly" \
	fold-push "clickhouse://ro:ro@$A:$CH_HTTP/single" -l host=h9 "$VA"
grep -q '0 of 1 profiles stored' "$T/err" || fail "a refused push does not say what was stored: $(cat "$T/err")"
# a profile whose sample rows are too many for the user's 20 MB, where
# its stacks' texts were not: the texts are stored, the samples refused,
# and no query sees any of it; then pushed again by a user who may
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "m;f%d %d\n", i, i + 1 }' > "$T/huge.folded"
must_fail "an insert out of memory" 1 "clickhouse://tiny@.*Memory limit .*code 241" \
	fold-push "clickhouse://tiny:tiny@$A:$CH_HTTP/single" -l host=h9 "$T/huge.folded"
[ "$(ch_sql $A "SELECT count() FROM single.foldkit_samples WHERE host = 'h9'")" = 0 ] ||
	fail "a refused push left rows"
[ "$(ch_sql $A "SELECT count() FROM single.foldkit_stacks WHERE stack = 'm;f99999'")" = 1 ] ||
	fail "the memory test did not refuse the samples after the texts (adjust it)"
must_fail "a refused profile is not seen" 1 "no stored profile matches" fold-query "$ONE" -l host=h9
[ "$(rows_one)" = $((before + $(sum "$VA" | wc -l))) ] || fail "rows changed by failed pushes"
fold-push "$ONE" -l host=h9 "$T/huge.folded" || fail "push again what was refused"
fold-query "$ONE" -l host=h9 > "$T/q" || fail "query what was refused once"
same "a profile refused once, then stored" <(sort "$T/huge.folded") "$T/q"
must_fail "no schema" 1 "no foldkit schema in database 'nothing'" \
	fold-query "clickhouse://$A:$CH_HTTP/nothing"
fold-push --init "clickhouse://$A:$CH_HTTP/v2" > /dev/null || fail "--init v2"
ch_sql $A "INSERT INTO v2.foldkit_schema VALUES (2, '')"
must_fail "another schema version (push)" 1 "version 2; this foldkit reads and writes version 1" \
	fold-push "clickhouse://$A:$CH_HTTP/v2" "$VA"
must_fail "another schema version (query)" 1 "version 2" fold-query "clickhouse://$A:$CH_HTTP/v2"
must_fail "another schema version (init)" 1 "version 2" fold-push --init "clickhouse://$A:$CH_HTTP/v2"
push "$ONE" h7 vertx $T1 "$VA" --unit ns || fail "push ns"
must_fail "a selection of two units" 1 "2 kinds \(ns on-cpu, samples on-cpu\)" \
	fold-query "$ONE" -l service=vertx
fold-query "$ONE" -l service=vertx -l unit=ns > "$T/q" || fail "query one unit"
same "one unit of two" "$T/h1.expect" "$T/q"
printf 'a;b 1 2\n' > "$T/diff.folded"
must_fail "a differential profile" 1 "diff.folded:1: .*none of it was" fold-push "$ONE" "$T/diff.folded"
must_fail "a bad URL" 2 "bad URL" fold-push "clickhouse://h:1/db?x=1" "$VA"
must_fail "a URL's password never shown" 2 "clickhouse://u:\.\.\.@" fold-push "clickhouse://u:pw@h:0/db" "$VA"
grep -q 'pw' "$T/err" && fail "a bad URL's password is shown"

# --- HTTPS: the server's certificate is checked
if [ -n "$CH_CERT" ]; then
	TLS=clickhouses://$A:$CH_HTTPS/single
	must_fail "an untrusted certificate" 1 "clickhouses://127.0.0.1:$CH_HTTPS/single: its TLS certificate is not trusted" \
		fold-query "$TLS" -l host=h2
	FOLDKIT_STORE_CA=$CH_CERT fold-query "$TLS" -l host=h2 > "$T/q" || fail "query over HTTPS"
	same "a query over HTTPS" "$T/h2.expect" "$T/q"
	FOLDKIT_STORE_CA=$CH_CERT fold-push "$TLS" -l host=t1 "$JA" || fail "push over HTTPS"
	fold-query "$ONE" -l host=t1 > "$T/q" || fail "query what was pushed over HTTPS"
	same "a push over HTTPS" <(sum "$JA") "$T/q"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$A" -addext "subjectAltName=IP:$A" \
		-keyout "$T/other.key" -out "$T/other.crt" 2>/dev/null
	FOLDKIT_STORE_CA=$T/other.crt must_fail "another authority's certificate" 1 "not trusted" \
		fold-push "$TLS" -l host=t2 "$JA"
else
	fail "no openssl (tools/deps install test): HTTPS is not tested"
fi

# --- Pyroscope: a stand-in checks the request byte for byte
wait_port() { # DIR: until the stand-in has written DIR/port
	local i
	for ((i = 0; i < 600; i++)); do
		[ -s "$1/port" ] && return 0
		sleep 0.1
	done
	fail "the Pyroscope stand-in did not start"
}
if command -v node > /dev/null; then
	mkdir "$T/py"
	node "$ROOT/test/store/pyroscope-standin.js" "$T/py" & STANDIN=$!
	wait_port "$T/py"
	port=$(cat "$T/py/port")
	fold-push "pyroscope://$A:$port" -l host=h1 -l service=vertx -l profile=on-cpu \
		-l "release=v1,x=y}" --unit ns --from $T1 --until $((T1 + 30)) "$VA" || fail "push to pyroscope"
	{
		printf 'POST /ingest?name=vertx.cpu%%7Bhost%%3Dh1%%2Crelease%%3Dv1_x_y_%%7D&from=%s&until=%s' $T1 $((T1 + 30))
		printf '&format=folded&units=samples&sampleRate=1000000000&spyName=foldkit\n'
		printf 'content-type: text/plain\nauthorization: \n\n'
		sum "$VA"
	} > "$T/py.expect"
	same "the Pyroscope request" "$T/py.expect" "$T/py/req-1"
	fold-push "pyroscope://u:p%40ss@$A:$port/base/" -l service=off -l profile=off-cpu -l host=h \
		--unit us --from $T1 "$JA" || fail "push to pyroscope with a user"
	head -n 3 "$T/py/req-2" > "$T/q"
	printf 'POST /base/ingest?name=off.off_cpu%%7Bhost%%3Dh%%7D&from=%s&until=%s&format=folded&units=samples&sampleRate=1000000&spyName=foldkit\ncontent-type: text/plain\nauthorization: Basic %s\n' \
		$T1 $T1 "$(printf 'u:p@ss' | base64)" > "$T/py2.expect"
	same "the Pyroscope request with a user" "$T/py2.expect" "$T/q"
	must_fail "a decimal count to Pyroscope" 1 "whole counts" \
		fold-push "pyroscope://$A:$port" -l service=big "$T/big.folded"
	[ ! -e "$T/py/req-3" ] || fail "a refused profile was sent to Pyroscope"
	kill "$STANDIN"; wait "$STANDIN" 2>/dev/null
	mkdir "$T/py401"
	node "$ROOT/test/store/pyroscope-standin.js" "$T/py401" 401 & STANDIN=$!
	wait_port "$T/py401"
	must_fail "Pyroscope refusing the user" 1 "pyroscope://u@127.0.0.1:[0-9]+: authentication refused: HTTP status 401" \
		fold-push "pyroscope://u:x@$A:$(cat "$T/py401/port")" -l service=s "$VA"
	kill "$STANDIN"; wait "$STANDIN" 2>/dev/null
	STANDIN=
else
	fail "node is not installed (tools/deps install test): the Pyroscope stand-in cannot run"
fi
if [ -n "${PYROSCOPE_URL:-}" ]; then
	now=$(date +%s)
	fold-push "$PYROSCOPE_URL" -l service=foldkit-test -l profile=on-cpu -l host="$(hostname)" \
		--unit ns --from $((now - 10)) --until "$now" "$CXX" || fail "push to $PYROSCOPE_URL"
fi
exit $status
