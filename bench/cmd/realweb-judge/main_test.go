package main

import (
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	e, ok := parseLine(`doc1.test 18081 1795843575 427 "GET /doc/std/index.html HTTP/1.1" 200 62922 "text/html; charset=utf-8" "realwebbot/1.0 (+bench/realweb)"`)
	if !ok {
		t.Fatal("not parsed")
	}
	if e.sec != 1795843575 || e.method != "GET" || e.target != "/doc/std/index.html" || e.status != 200 || !isHTML(e.ctype) || classify(e.ua, "realwebbot") != crawlkit {
		t.Fatalf("got %+v", e)
	}
	e, ok = parseLine(`doc1.test 18081 1795843575 204 "GET /a\"b HTTP/1.1" 404 196 "-" "Wget/1.21.3"`)
	if !ok || e.target != `/a"b` || e.ctype != "" || classify(e.ua, "realwebbot") != wget {
		t.Fatalf("got %+v, %v", e, ok)
	}
	if _, ok := parseLine(`doc1.test 18081 x 1 "GET / HTTP/1.1" 200 1 "text/html" "Wget/1.21.3"`); ok {
		t.Fatal("bad time parsed")
	}
}

func TestRobots(t *testing.T) {
	txt := "# c\nUser-agent: *\nDisallow: /doc/technical/\n\nUser-agent: otherbot\nUser-agent: realwebbot\nDisallow: /x\nAllow: /x/y\n"
	star := parseRobots(txt, "wget")
	if star.allowed("/doc/technical/a.html") || !star.allowed("/doc/git.html") || !star.allowed("/x") {
		t.Fatal("* group")
	}
	bot := parseRobots(txt, "realwebbot")
	if bot.allowed("/x/z") || !bot.allowed("/x/y/z") || !bot.allowed("/doc/technical/a.html") {
		t.Fatal("realwebbot group")
	}
	none := parseRobots("", "realwebbot")
	if !none.allowed("/anything") {
		t.Fatal("empty robots.txt")
	}
	empty := parseRobots("User-agent: *\nDisallow:\n", "realwebbot")
	if !empty.allowed("/anything") {
		t.Fatal("empty Disallow")
	}
}

func TestNormTarget(t *testing.T) {
	for in, want := range map[string]string{
		"/a%7eb":      "/a~b",
		"/a%2fb":      "/a%2Fb",
		"/plain.html": "/plain.html",
		"/%41%3f":     "/A%3F",
	} {
		if got := normTarget(in); got != want {
			t.Errorf("normTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadCounts(t *testing.T) {
	h := &host{name: "d", rules: map[client]*rules{
		wget:     parseRobots("User-agent: *\nDisallow: /no/\n", "wget"),
		crawlkit: parseRobots("User-agent: *\nDisallow: /no/\n", "realwebbot"),
		other:    parseRobots("", "*"),
	}}
	for c := range h.sides {
		h.sides[c] = newSide()
	}
	log := strings.Join([]string{
		`d.test 1 10 1 "GET /robots.txt HTTP/1.1" 200 1 "text/plain" "realwebbot/1.0"`,
		`d.test 1 10 1 "GET /robots.txt HTTP/1.1" 200 1 "text/plain" "realwebbot/1.0"`,
		`d.test 1 10 1 "GET / HTTP/1.1" 200 1 "text/html" "realwebbot/1.0"`,
		`d.test 1 11 1 "GET / HTTP/1.1" 200 1 "text/html" "realwebbot/1.0"`,
		`d.test 1 12 1 "GET /no/x.html HTTP/1.1" 200 1 "text/html" "realwebbot/1.0"`,
		`d.test 1 12 1 "GET /a.png HTTP/1.1" 200 1 "image/png" "realwebbot/1.0"`,
		`d.test 1 12 1 "GET /gone.html HTTP/1.1" 404 1 "text/html" "realwebbot/1.0"`,
		`d.test 1 10 1 "GET / HTTP/1.1" 200 1 "text/html" "Wget/1.21.3"`,
		`garbage`,
	}, "\n")
	if err := h.read(strings.NewReader(log), "realwebbot"); err != nil {
		t.Fatal(err)
	}
	ck := h.sides[crawlkit]
	if ck.requests != 7 || ck.robotsReqs != 2 || ck.dups != 1 || ck.violations != 1 || len(ck.pages) != 2 || ck.last-ck.first != 2 {
		t.Fatalf("crawlkit side %+v", ck)
	}
	if h.badLines != 1 || len(h.sides[wget].pages) != 1 {
		t.Fatalf("bad lines %d, wget pages %d", h.badLines, len(h.sides[wget].pages))
	}
}
