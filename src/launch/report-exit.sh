# pi-shepherd: report-exit.sh <exit.json> <launcher argv…>
# Runs the launcher (pi in its process) and writes how pi ended to exit.json, for a multiplexer
# that cannot say so itself: herdr types a program into the pane's shell, and tmux before 3.3
# has no #{pane_dead_signal}. It stays beside pi for the sheep's whole life, so it is plain
# POSIX sh (about 1 MB resident) rather than a second node. Every word it is given is a path
# the package chose; it is run as `/bin/sh <this file> …`, never sourced or typed.
exit_file=$1
shift
gone=
# The pane itself going away hangs up pi and this shell alike: the shepherd closed it and may
# already be removing the sheep's files, so nothing is written back then.
trap 'gone=1' HUP TERM
# Keys typed in the pane are for pi, which shares the terminal; this shell must outlive them.
trap ':' INT QUIT TSTP
"$@"
status=$?
[ -n "$gone" ] && exit "$status"
code=$status
signal=null
what="code $status"
if [ "$status" -gt 128 ]; then
	# A shell reports a child killed by signal N as 128+N.
	n=$((status - 128))
	name=SIG$(kill -l "$n" 2>/dev/null || echo "$n")
	code=null
	signal="\"$name\""
	what=$name
fi
dir=${exit_file%/*}
tmp="$dir/.exit-$$.tmp"
if [ -d "$dir" ]; then
	(
		umask 077
		printf '{"code":%s,"signal":%s,"at":"%s"}\n' "$code" "$signal" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$tmp"
	) 2>/dev/null && mv -f "$tmp" "$exit_file" 2>/dev/null
fi
printf '\n[pi-shepherd] pi exited (%s).\n' "$what" >&2
exit "$status"
