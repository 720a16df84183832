#!/bin/sh
# buildloop SECONDS SOURCE - a busy machine's process churn for the plugin
# benchmark: for about SECONDS, compiles SOURCE again and again (cc, cc1,
# as: a build's short-lived processes, each mapping its own libraries) and
# runs short shell pipelines between compiles: thousands of processes in
# a recording, beside the workload.  perf's work per sample grows with the
# processes and their map records, so the plugin's ratio to perf's floor
# is measured on this.
set -eu
end=$(( $(date +%s) + $1 ))
while [ "$(date +%s)" -lt "$end" ]; do
	cc -O1 -g -c -o /dev/null "$2"
	i=0
	while [ $i -lt 16 ]; do
		i=$((i + 1))
		printf 'a b\n' | sed 's/a/c/' | awk '{ print $2 }' >/dev/null
	done
done
