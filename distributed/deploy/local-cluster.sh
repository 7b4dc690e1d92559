#!/usr/bin/env bash
# The topology of compose.yaml with the binaries, on loopback: three NATS
# servers in one JetStream cluster (cmd/natsd), the synthetic web
# (examples/syntheticweb) and N crawl nodes (cmd/crawlnode) with the flags
# compose.yaml gives them, plus crawlresults writing every page once.
#
#   deploy/local-cluster.sh nats       # build, start a fresh NATS cluster and the web, return
#   deploy/local-cluster.sh crawl [N]  # start N nodes (default 3), wait for the end, check it
#   deploy/local-cluster.sh down       # stop what "nats" started
#   deploy/local-cluster.sh test [N]   # nats, crawl and down
#
# Run it from anywhere in the repository. Everything lives in $CLUSTER_DIR (default
# /tmp/crawlkit-cluster): binaries, logs, JetStream stores, results. Ports
# (all on 127.0.0.1): NATS 14222-14224 (cluster 16222-16224), the web 18080
# (control 18081), node N's stats 19090+N. The check is the web's own
# accounting: every reachable page fetched, no robots or politeness
# violation.
set -euo pipefail
cd "$(dirname "$0")/.." # distributed/, the module

DIR=${CLUSTER_DIR:-/tmp/crawlkit-cluster}
BIN=$DIR/bin
NATS_URLS=nats://127.0.0.1:14222,nats://127.0.0.1:14223,nats://127.0.0.1:14224
ROUTES=nats-route://127.0.0.1:16222,nats-route://127.0.0.1:16223,nats-route://127.0.0.1:16224
CRAWL=${CRAWL:-demo}

# wait_for FILE TEXT SECONDS: wait until FILE contains TEXT.
wait_for() {
	for _ in $(seq $((10 * $3))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "timed out waiting for '$2' in $1" >&2
	tail -20 "$1" >&2
	return 1
}

# start NAME CMD...: run CMD in the background, logging to $DIR/NAME.log,
# and remember its pid for "down".
start() {
	local name=$1
	shift
	"$@" >"$DIR/$name.log" 2>&1 </dev/null &
	echo "$!" >"$DIR/$name.pid"
}

nats() {
	# A fresh crawl: no servers, stores or results of an earlier one.
	down
	rm -rf "$DIR"/nats-* "$DIR/results"
	mkdir -p "$BIN" "$DIR/results"
	CGO_ENABLED=0 go build -trimpath -o "$BIN/" ./cmd/crawlnode ./cmd/crawlstats ./cmd/crawlresults ./cmd/natsd ./examples/syntheticweb
	for i in 1 2 3; do
		mkdir -p "$DIR/nats-$i"
		start "nats-$i" "$BIN/natsd" -name "n$i" -host 127.0.0.1 -port $((14221 + i)) -store "$DIR/nats-$i" \
			-cluster crawl -cluster-port $((16221 + i)) -routes "$ROUTES"
	done
	start web "$BIN/syntheticweb" -addr 127.0.0.1:18080 -control 127.0.0.1:18081 -seeds-file "$DIR/seeds.txt" \
		-hosts "${HOSTS:-300}" -pages "${PAGES:-10}"
	for i in 1 2 3; do wait_for "$DIR/nats-$i.log" '^ready' 30; done
	wait_for "$DIR/web.log" '^web ' 30
	echo "NATS cluster at $NATS_URLS; $(cat "$DIR/web.log")"
}

crawl() {
	local n=${1:-3} pids=()
	start results "$BIN/crawlresults" -nats "$NATS_URLS" -crawl "$CRAWL" -out "$DIR/results" -until-done
	for i in $(seq "$n"); do
		# The flags of compose.yaml's nodes.
		start "node-$i" "$BIN/crawlnode" -nats "$NATS_URLS" -crawl "$CRAWL" -id "node-$i" -replicas 3 \
			-seeds-file "$DIR/seeds.txt" -route-tld test=127.0.0.1:18080 -allow-private 127.0.0.0/8 \
			-delay 50ms -max-crawl-delay 1s -retry-base 2s -robots-retries -1 -http "127.0.0.1:$((19090 + i))" -results -log-level info
		pids+=("$(cat "$DIR/node-$i.pid")")
	done
	local t0=$SECONDS
	echo "started $n nodes; crawlstats in $DIR/crawlstats.txt"
	# The cluster view once every node owns partitions and pages are
	# fetched (or the nodes have finished).
	for _ in $(seq 1200); do
		local alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 1 ] || break
		if "$BIN/crawlstats" -nats "$NATS_URLS" -crawl "$CRAWL" >"$DIR/crawlstats.txt" 2>/dev/null &&
			grep -q "^crawl $CRAWL: $n nodes" "$DIR/crawlstats.txt" &&
			grep -q '^total: fetched=[1-9][0-9][0-9]' "$DIR/crawlstats.txt" &&
			awk '$1 ~ /^node-/ && $3 > 0 { f++ } END { exit f < '"$n"' }' "$DIR/crawlstats.txt"; then
			head -$((3 + n)) "$DIR/crawlstats.txt"
			break
		fi
		sleep 0.5
	done
	local failed=0
	for p in "${pids[@]}"; do wait "$p" || failed=1; done
	wait "$(cat "$DIR/results.pid")" || failed=1
	echo "the nodes finished in $((SECONDS - t0)) s; $(tail -1 "$DIR/results.log")"
	"$BIN/crawlstats" -nats "$NATS_URLS" -crawl "$CRAWL" >"$DIR/crawlstats-end.txt" || failed=1
	head -1 "$DIR/crawlstats-end.txt"
	for i in $(seq "$n"); do
		echo "node-$i $(grep -o '^stats {"crawl":{"urls":{[^}]*"fetched":[0-9]*' "$DIR/node-$i.log" | grep -o '"fetched":[0-9]*$')"
	done
	if ! curl -fsS http://127.0.0.1:18081/check; then
		failed=1
	fi
	return $failed
}

down() {
	for f in "$DIR"/*.pid; do
		[ -e "$f" ] || continue
		kill "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
}

case ${1:-test} in
nats) nats ;;
crawl) crawl "${2:-3}" ;;
down) down ;;
test)
	rm -rf "$DIR"
	trap down EXIT
	nats
	crawl "${2:-3}"
	;;
*)
	echo "usage: $0 nats|crawl [N]|down|test [N]" >&2
	exit 2
	;;
esac
