#!/bin/bash
# run.sh: the real-HTML test bed. Serves Debian documentation trees (real
# HTML written by others, several generators) as Apache virtual hosts on
# 127.0.0.1, crawls them with wget --recursive (the reference) and with
# crawlkit's Crawler (cmd/realweb-crawl), and judges both from Apache's
# access logs (cmd/realweb-judge). See README.md.
#
#	bench/realweb/run.sh            # everything
#	REALWEB_DIR=/some/dir REALWEB_PORT=18080 bench/realweb/run.sh
#
# Every request goes to 127.0.0.1. Needs root for apt-get the first time
# (apache2, wget and the documentation packages, which are downloaded and
# unpacked into $REALWEB_DIR, not installed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bench=$(cd "$here/.." && pwd)
work=${REALWEB_DIR:-/var/tmp/crawlkit-realweb}
base_port=${REALWEB_PORT:-18080}
workers=${REALWEB_WORKERS:-16}
delay=${REALWEB_DELAY:-1ms}
timeout=${REALWEB_TIMEOUT:-15m}
# REALWEB_SHIPPED=1 runs crawlkit as the quickstart ships it: its state in
# a DataDir and every exchange archived in WARC files with a CDXJ index.
shipped=${REALWEB_SHIPPED:-0}

# name  package  tree inside the package  entry pages (relative to the tree)
hosts=(
	"doc1 rust-doc            usr/share/doc/rust-doc/html        index.html std/index.html core/index.html"
	"doc2 python3.11-doc      usr/share/doc/python3.11/html      index.html"
	"doc3 libglib2.0-doc      usr/share/gtk-doc/html             glib/index.html gobject/index.html gio/index.html"
	"doc4 libeigen3-doc       usr/share/doc/libeigen3-dev/html   index.html"
	"doc5 debian-reference-en usr/share/debian-reference         index.en.html"
	"doc6 gettext-doc         usr/share/doc/gettext              index.html gettext_toc.html"
	"doc7 git-doc             usr/share/doc/git-doc              git.html user-manual.html everyday.html"
)

# robots.txt per host; a host with none answers 404 (all allowed).
robots() {
	case $1 in
	doc1) printf 'User-agent: *\nDisallow: /doc/unstable-book/\nDisallow: /doc/src/\n' ;;
	doc2) printf 'User-agent: *\nDisallow: /doc/whatsnew/\n' ;;
	doc3) ;;
	doc4) printf 'User-agent: *\nDisallow: /doc/unsupported/\n' ;;
	doc5) printf 'User-agent: *\nDisallow:\n' ;;
	doc6) printf 'User-agent: *\nDisallow: /doc/javadoc2/\nDisallow: /doc/csharpdoc/\n' ;;
	doc7) printf '# git-doc: the technical notes are off limits\nUser-agent: *\nDisallow: /doc/technical/\n' ;;
	esac
}

say() { printf '== %s\n' "$*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

umask 022
mkdir -p "$work"
chmod 755 "$work"

# 1. Tools.
need=()
command -v /usr/sbin/apache2 >/dev/null || need+=(apache2)
command -v wget >/dev/null || need+=(wget)
if ((${#need[@]})); then
	say "installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${need[@]}" >/dev/null ||
		{ apt-get update >/dev/null && apt-get install -y --no-install-recommends "${need[@]}" >/dev/null; }
fi

# 2. Documentation packages: downloaded with apt-get and unpacked into
# $work/trees/PKG (not installed: their dependencies, such as MathJax and
# jQuery, are not needed to serve the HTML, and the links to them 404).
mkdir -p "$work/debs" "$work/trees"
for h in "${hosts[@]}"; do
	read -r name pkg tree entries <<<"$h"
	if [ ! -e "$work/trees/$pkg/.unpacked" ]; then
		say "fetching $pkg"
		(cd "$work/debs" && { apt-get download "$pkg" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get download "$pkg" >/dev/null; }; })
		rm -rf "$work/trees/$pkg"
		mkdir -p "$work/trees/$pkg"
		deb=$(ls -t "$work/debs/${pkg}"_*.deb | head -1)
		dpkg-deb -x "$deb" "$work/trees/$pkg"
		basename "$deb" >"$work/trees/$pkg/.unpacked"
	fi
done

# 3. Sites: one document root per vhost with an index page linking into
# the tree (served under /doc/) and the host's robots.txt.
rm -rf "$work/sites" "$work/logs" "$work/apache" "$work/wget" "$work/out"
mkdir -p "$work/sites" "$work/logs" "$work/apache/run" "$work/wget" "$work/out"
: >"$work/hosts.txt"
i=0
for h in "${hosts[@]}"; do
	read -r name pkg tree entries <<<"$h"
	i=$((i + 1))
	port=$((base_port + i))
	site="$work/sites/$name"
	mkdir -p "$site"
	ln -s "$work/trees/$pkg/$tree" "$site/doc"
	{
		printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s: %s</title></head>\n<body>\n<h1>%s</h1>\n<p>Documentation from the Debian package %s (%s).</p>\n<ul>\n' \
			"$name" "$pkg" "$pkg" "$pkg" "$(cat "$work/trees/$pkg/.unpacked")"
		for e in $entries; do
			printf '<li><a href="/doc/%s">%s</a></li>\n' "$e" "$e"
		done
		printf '</ul>\n</body></html>\n'
	} >"$site/index.html"
	r=$(robots "$name")
	[ -z "$r" ] || printf '%s\n' "$r" >"$site/robots.txt"
	echo "$name $port $pkg" >>"$work/hosts.txt"
done

# 4. Apache with a private configuration.
conf="$work/apache/httpd.conf"
{
	cat <<EOF
ServerRoot "$work/apache"
PidFile "$work/apache/run/httpd.pid"
DefaultRuntimeDir "$work/apache/run"
Mutex file:$work/apache/run default
ErrorLog "$work/logs/error.log"
LogLevel warn
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule dir_module /usr/lib/apache2/modules/mod_dir.so
LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so
User nobody
Group nogroup
ServerName realweb.test
ServerTokens Prod
TypesConfig /etc/mime.types
DirectoryIndex index.html
Timeout 30
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 5
StartServers 2
ThreadsPerChild 25
MaxRequestWorkers 100
LogFormat "%v %{local}p %{sec}t %D \"%r\" %>s %B \"%{Content-Type}o\" \"%{User-Agent}i\"" realweb
<Directory />
	AllowOverride None
	Require all denied
</Directory>
<Directory "$work/sites">
	Options FollowSymLinks
	Require all granted
</Directory>
<Directory "$work/trees">
	Options FollowSymLinks
	Require all granted
</Directory>
EOF
	while read -r name port pkg; do
		cat <<EOF
Listen 127.0.0.1:$port
<VirtualHost 127.0.0.1:$port>
	ServerName $name.test
	DocumentRoot "$work/sites/$name"
	CustomLog "$work/logs/$name.access.log" realweb
</VirtualHost>
EOF
	done <"$work/hosts.txt"
} >"$conf"

stop_apache() {
	if [ -s "$work/apache/run/httpd.pid" ]; then
		/usr/sbin/apache2 -f "$conf" -k stop 2>/dev/null || true
		for _ in $(seq 50); do
			[ -e "$work/apache/run/httpd.pid" ] || break
			sleep 0.1
		done
	fi
}
trap stop_apache EXIT

# 5. Build the crawler and the judge (bench is its own module).
say "building realweb-crawl and realweb-judge"
mkdir -p "$work/bin"
(cd "$bench" && go build -o "$work/bin/" ./cmd/realweb-crawl ./cmd/realweb-judge)

say "starting Apache on 127.0.0.1:$((base_port + 1))-$((base_port + i))"
/usr/sbin/apache2 -f "$conf" -k start
seeds=()
while read -r name port pkg; do
	for _ in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
	seeds+=("http://127.0.0.1:$port/")
done <"$work/hosts.txt"

# 6. The reference: wget, one host after another in one process, robots.txt
# obeyed, everything but HTML and unknown types rejected by name so that it
# does not spend the run on images and scripts (HTML pages are judged only).
say "wget --recursive over ${#seeds[@]} hosts"
t0=$(now)
set +e
wget --recursive --level=inf -e robots=on --delete-after --no-verbose \
	--tries=2 --timeout=10 --directory-prefix="$work/wget" \
	--reject-regex '\.(css|js|png|gif|jpe?g|svg|ico|woff2?|ttf|eot|otf|pdf|gz|bz2|xz|zip|txt|map|json|xml)(\?.*)?$' \
	"${seeds[@]}" >"$work/out/wget.log" 2>&1
wget_rc=$?
set -e
t1=$(now)
say "wget done in $(elapsed "$t0" "$t1") s (exit $wget_rc; 8 means some answers were errors, such as 404s)"

# 7. crawlkit.
ck_args=()
if [ "$shipped" = 1 ]; then
	rm -rf "$work/state" "$work/warc"
	ck_args=(-data-dir "$work/state" -warc-dir "$work/warc")
fi
say "crawlkit (workers $workers, delay $delay${ck_args[*]:+, ${ck_args[*]}})"
t2=$(now)
set +e
"$work/bin/realweb-crawl" -workers "$workers" -delay "$delay" -timeout "$timeout" "${ck_args[@]}" \
	-pages "$work/out/crawlkit-pages.tsv" -seeds "$(IFS=,; echo "${seeds[*]}")" \
	>"$work/out/crawlkit-stats.json" 2>"$work/out/crawlkit.log"
ck_rc=$?
set -e
t3=$(now)
say "crawlkit done in $(elapsed "$t2" "$t3") s (exit $ck_rc); Stats in $work/out/crawlkit-stats.json"

stop_apache
trap - EXIT

# 8. Judge from the access logs.
say "judging $work/logs/*.access.log"
"$work/bin/realweb-judge" -hosts "$work/hosts.txt" -logs "$work/logs" -sites "$work/sites" -out "$work/out" |
	tee "$work/out/judge.txt"
echo "wget ${wget_seconds:-$(elapsed "$t0" "$t1")} s, crawlkit $(elapsed "$t2" "$t3") s" | tee -a "$work/out/judge.txt"
