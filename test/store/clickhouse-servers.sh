# test/store/clickhouse-servers.sh - real ClickHouse servers for the store
# tests and benchmark, as plain processes of this user (sourced):
#
#   ch_start DIR ADDR...    one server per loopback address (127.0.0.1,
#                           127.0.0.2...), each with its files in
#                           DIR/ADDR/; they form the cluster "fleet" (a
#                           shard each) in their remote_servers.  Their
#                           HTTP port is the same free one, CH_HTTP (as in
#                           a fleet: fold-push --init --cluster reaches
#                           every server at its URL's port); their native
#                           ports (CH_TCPS) differ, for ClickHouse takes a
#                           shard on a local address and its own port for
#                           itself, and 127.0.0.2 is this machine's too.
#                           Sets CH_ADDRS.  With openssl, each also
#                           serves HTTPS on CH_HTTPS, with a self-signed
#                           certificate for the addresses, DIR/server.crt
#                           (CH_CERT).  Returns 0, or 1 with the
#                           reason in CH_WHY.
#   ch_stop                 stops them all (SIGTERM, then SIGKILL); call it
#                           from an EXIT trap
#   ch_sql ADDR QUERY       runs QUERY with clickhouse-client (the test's
#                           own view of what was stored)
#
# Users: default (no password), fk (password s3cret), ro (read-only,
# password ro), tiny (password tiny, 20 MB of memory per query).
# Debian's clickhouse-server 18.16 runs as any user with a config file
# naming its paths and ports; startup is waited for (up to 120 s on a
# busy machine), never timed.

CH_PIDS=()
CH_ADDRS=()
CH_TCPS=()
CH_WHY=

ch_port_free() { # PORT: not listened on (IPv4 or IPv6)
	local hex
	hex=$(printf ':%04X ' "$1")
	! grep -qs " 0A " <(grep -h "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null)
}

ch_pick_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		ch_port_free "$p" && { echo "$p"; return; }
	done
}

ch_config() { # DIR INDEX
	local d=$1/${CH_ADDRS[$2]} i
	mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas"
	{
		cat <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <http_port>$CH_HTTP</http_port>
EOF
		if [ -n "$CH_CERT" ]; then
			cat <<EOF
  <https_port>$CH_HTTPS</https_port>
  <openSSL><server><certificateFile>$CH_CERT</certificateFile><privateKeyFile>$1/server.key</privateKeyFile><verificationMode>none</verificationMode><loadDefaultCAFile>false</loadDefaultCAFile><disableProtocols>sslv2,sslv3</disableProtocols></server></openSSL>
EOF
		fi
		cat <<EOF
  <tcp_port>${CH_TCPS[$2]}</tcp_port>
  <listen_host>${CH_ADDRS[$2]}</listen_host>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>$1/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>20</max_concurrent_queries>
  <remote_servers>
    <fleet>
EOF
		for ((i = 0; i < ${#CH_ADDRS[@]}; i++)); do
			echo "      <shard><replica><host>${CH_ADDRS[$i]}</host><port>${CH_TCPS[$i]}</port></replica></shard>"
		done
		cat <<EOF
    </fleet>
  </remote_servers>
</yandex>
EOF
	} > "$d/config.xml"
}

ch_users() { # DIR
	cat > "$1/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default><max_memory_usage>4000000000</max_memory_usage></default>
    <readonly><readonly>1</readonly></readonly>
    <tiny><max_memory_usage>20000000</max_memory_usage></tiny>
  </profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.0/8</ip></networks><profile>default</profile><quota>default</quota></default>
    <fk><password>s3cret</password><networks><ip>127.0.0.0/8</ip></networks><profile>default</profile><quota>default</quota></fk>
    <ro><password>ro</password><networks><ip>127.0.0.0/8</ip></networks><profile>readonly</profile><quota>default</quota></ro>
    <tiny><password>tiny</password><networks><ip>127.0.0.0/8</ip></networks><profile>tiny</profile><quota>default</quota></tiny>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
EOF
}

ch_sql() { # ADDR QUERY
	local i
	for ((i = 0; i < ${#CH_ADDRS[@]}; i++)); do
		[ "${CH_ADDRS[$i]}" = "$1" ] && break
	done
	clickhouse-client --host "$1" --port "${CH_TCPS[$i]}" -q "$2"
}

# ch_wait ADDR PID: 0 when the server answers, 1 when it died
ch_wait() {
	local i
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$2" 2>/dev/null || return 1
		ch_sql "$1" 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

ch_start() { # DIR ADDR...
	local dir=$1 server attempt a ok i pid
	shift
	server=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
	if [ ! -x "$server" ] || ! command -v clickhouse-client >/dev/null; then
		CH_WHY="clickhouse-server or clickhouse-client not installed (tools/deps install test)"
		return 2
	fi
	CH_ADDRS=("$@")
	mkdir -p "$dir"
	CH_CERT=
	if command -v openssl >/dev/null; then
		local san
		san=$(printf 'IP:%s,' "${CH_ADDRS[@]}")
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=${CH_ADDRS[0]}" \
			-addext "subjectAltName=${san%,}" -keyout "$dir/server.key" \
			-out "$dir/server.crt" 2>/dev/null && CH_CERT=$dir/server.crt
	fi
	ch_users "$dir"
	for attempt in 1 2 3 4 5; do
		CH_HTTP=$(ch_pick_port)
		CH_HTTPS=$(ch_pick_port)
		CH_TCPS=()
		for a in "${CH_ADDRS[@]}"; do CH_TCPS+=("$(ch_pick_port)"); done
		[ "$(printf '%s\n' "$CH_HTTP" "$CH_HTTPS" "${CH_TCPS[@]}" | sort -u | wc -l)" = $((${#CH_ADDRS[@]} + 2)) ] || continue
		CH_PIDS=()
		ok=1
		for ((i = 0; i < ${#CH_ADDRS[@]}; i++)); do
			a=${CH_ADDRS[$i]}
			ch_config "$dir" $i
			(cd "$dir/$a" && exec "$server" --config-file="$dir/$a/config.xml") \
				>"$dir/$a/stdout" 2>&1 &
			CH_PIDS+=($!)
		done
		for ((i = 0; i < ${#CH_ADDRS[@]}; i++)); do
			ch_wait "${CH_ADDRS[$i]}" "${CH_PIDS[$i]}" || ok=0
		done
		[ $ok = 1 ] && return 0
		# a port taken meanwhile: the log says so; try others
		if grep -qs 'Address already in use' "$dir"/*/server.err.log "$dir"/*/stdout; then
			ch_stop
			rm -rf "${CH_ADDRS[@]/#/$dir/}"
			continue
		fi
		CH_WHY="clickhouse-server did not start: $(cat "$dir"/*/server.err.log "$dir"/*/stdout 2>/dev/null | grep -v '^Logging' | tail -n 3 | tr '\n' ' ')"
		for pid in "${CH_PIDS[@]}"; do
			wait "$pid" 2>/dev/null
			[ $? = 132 ] && { CH_WHY="clickhouse-server cannot run on this processor (SIGILL: it needs SSE 4.2)"; ch_stop; return 2; }
		done
		ch_stop
		return 1
	done
	CH_WHY="no free ports for clickhouse-server after 5 tries"
	return 1
}

ch_stop() {
	local pid i alive
	[ ${#CH_PIDS[@]} -gt 0 ] || return 0
	for pid in "${CH_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for ((i = 0; i < 300; i++)); do
		alive=0
		for pid in "${CH_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for pid in "${CH_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	CH_PIDS=()
}
