#!/usr/bin/env bash
# compose.yaml run for real with Debian's container tools: podman serves the
# Docker API on a socket of its own, and docker-compose (1.29) starts the
# file's services with the demo profile (three NATS servers, three nodes,
# crawlresults, crawlstats and the synthetic web, all on the host's
# loopback). It waits for crawlresults to end (-until-done), checks the web's
# own accounting (/check: every reachable page fetched, no robots or
# politeness violation) and the cluster view, then takes it all down.
#
#   distributed/deploy/compose-test.sh
#
# Run it as root from anywhere in the repository. It installs podman, runc,
# docker-compose and busybox-static from Debian's packages when they are
# missing. The image's build stage is $GO_IMAGE; unset, it is an image made
# here from this machine's Go toolchain and busybox, for machines that reach
# no image registry, and modules come from this machine's module cache
# (GOPROXY=off in the build).
#
# Debian 12's podman-compose (1.0.3) cannot run compose.yaml: it gives every
# service --net and --network-alias, which podman refuses beside
# network_mode: host ("--network-alias can only be set when the network mode
# is bridge"), so this uses docker-compose against podman's socket instead.
set -euo pipefail
cd "$(dirname "$0")/../.." # the repository's root: the image's build context

DIR=${COMPOSE_TEST_DIR:-/tmp/crawlkit-compose}
PROJECT=crawlkit-demo
COMPOSE=(docker-compose -f distributed/deploy/compose.yaml -p "$PROJECT" --profile demo)
rm -rf "$DIR"
mkdir -p "$DIR"

missing=()
for p in podman:podman runc:runc docker-compose:docker-compose busybox:busybox-static; do
	command -v "${p%%:*}" >/dev/null 2>&1 || missing+=("${p#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "== installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Podman's default limits (nofile 1048576, nproc from the host) are more
# than some sandboxes let a container set; these fit them and a crawl.
cat >"$DIR/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=${NOFILE:-20000}:${NOFILE:-20000}", "nproc=${NPROC:-30000}:${NPROC:-30000}"]
EOF
export CONTAINERS_CONF=$DIR/containers.conf

if [ -z "${GO_IMAGE:-}" ]; then
	GO_IMAGE=localhost/crawlkit-go:local
	echo "== $GO_IMAGE from $(go env GOROOT) and busybox"
	root=$DIR/go-rootfs
	mkdir -p "$root/bin" "$root/usr/local" "$root/etc/ssl/certs" "$root/tmp" "$root/root"
	cp "$(command -v busybox)" "$root/bin/"
	for c in sh cp mkdir chmod; do ln -sf busybox "$root/bin/$c"; done
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	chmod 1777 "$root/tmp"
	cp -a "$(go env GOROOT)" "$root/usr/local/go"
	tar -C "$root" -cf "$DIR/go-rootfs.tar" .
	rm -rf "$root"
	podman import --change 'ENV PATH=/usr/local/go/bin:/bin' --change 'ENV HOME=/root' \
		--change 'ENV GOPROXY=off' --change 'ENV GOTOOLCHAIN=local' \
		"$DIR/go-rootfs.tar" "$GO_IMAGE" >/dev/null
	rm -f "$DIR/go-rootfs.tar"
	# The distributed module's dependencies, into the cache the build reads.
	(cd distributed && go mod download)
	build_volumes=(-v "$(go env GOMODCACHE):/root/go/pkg/mod:ro")
else
	build_volumes=()
fi

echo "== image localhost/crawlkit"
t0=$SECONDS
podman build -q -f distributed/deploy/Containerfile --build-arg GO_IMAGE="$GO_IMAGE" \
	"${build_volumes[@]}" -t localhost/crawlkit .
echo "built in $((SECONDS - t0)) s: $(podman image inspect localhost/crawlkit --format '{{.Size}}') bytes"

podman system service --time=0 "unix://$DIR/podman.sock" >"$DIR/podman-service.log" 2>&1 &
service=$!
export DOCKER_HOST=unix://$DIR/podman.sock
for _ in $(seq 100); do
	[ -S "$DIR/podman.sock" ] && break
	sleep 0.1
done

down() {
	"${COMPOSE[@]}" down -v >"$DIR/down.log" 2>&1 || true
	kill "$service" 2>/dev/null || true
}
trap down EXIT

echo "== compose up (demo profile)"
"${COMPOSE[@]}" down -v >/dev/null 2>&1 || true
t0=$SECONDS
"${COMPOSE[@]}" up -d
# crawlresults -until-done ends with the crawl; every node ends too.
code=$(timeout "${TIMEOUT:-900}" podman wait "${PROJECT}_results_1")
echo "the crawl ended after $((SECONDS - t0)) s; crawlresults exited $code"
"${COMPOSE[@]}" logs --no-color >"$DIR/compose.log" 2>&1 || true
grep -h "results_1 " "$DIR/compose.log" | tail -2
failed=0
[ "$code" = 0 ] || failed=1
for i in 1 2 3; do
	c=$(timeout 120 podman wait "${PROJECT}_node-${i}_1")
	echo "node-$i exited $c, $(grep -o 'node-'"$i"'_1 .*"fetched":[0-9]*' "$DIR/compose.log" | grep -o '"fetched":[0-9]*$' | tail -1)"
	[ "$c" = 0 ] || failed=1
done
if podman run --rm --network host --entrypoint /usr/local/bin/crawlstats localhost/crawlkit \
	-nats nats://127.0.0.1:14222 -crawl "${CRAWL:-demo}" >"$DIR/crawlstats.txt"; then
	head -1 "$DIR/crawlstats.txt"
	grep -q ', lag 0$' "$DIR/crawlstats.txt" || failed=1 # every partition acknowledged to its end
else
	failed=1
fi
# /check answers an error status unless the crawl is complete and polite.
if check=$(curl -sS --fail-with-body http://127.0.0.1:18081/check); then
	echo "the web's accounting: $check"
else
	echo "the web's accounting: $check" >&2
	failed=1
fi
echo "logs in $DIR/compose.log"
exit $failed
