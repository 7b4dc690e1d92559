package urlcorpus

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(7, 500), Generate(7, 500)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different corpora")
	}
	if slices.Equal(a, Generate(8, 500)) {
		t.Fatal("different seeds gave the same corpus")
	}
}

func TestGenerateIsVaried(t *testing.T) {
	corpus := Generate(1, 10000)
	if len(corpus) != 10000 {
		t.Fatalf("got %d URLs", len(corpus))
	}
	count := func(pred func(string) bool) int {
		n := 0
		for _, u := range corpus {
			if pred(u) {
				n++
			}
		}
		return n
	}
	hosts := map[string]bool{}
	for _, u := range corpus {
		if p, err := url.Parse(u); err == nil {
			hosts[p.Host] = true
		}
	}
	checks := []struct {
		what string
		n    int
		min  int
	}{
		{"distinct hosts", len(hosts), 1000},
		{"queries", count(func(u string) bool { return strings.Contains(u, "?") }), 3000},
		{"fragments", count(func(u string) bool { return strings.Contains(u, "#") }), 500},
		{"percent-escapes", count(func(u string) bool { return strings.Contains(u, "%") }), 500},
		{"non-ASCII", count(func(u string) bool { return strings.ContainsFunc(u, func(r rune) bool { return r > 127 }) }), 200},
		{"tracking parameters", count(func(u string) bool { return strings.Contains(u, "utm_") }), 100},
		{"dot segments", count(func(u string) bool { return strings.Contains(u, "/./") || strings.Contains(u, "/../") }), 50},
		{"ports", count(func(u string) bool { return strings.Contains(u, ":80") }), 100},
	}
	for _, c := range checks {
		if c.n < c.min {
			t.Errorf("%s: %d, want at least %d", c.what, c.n, c.min)
		}
	}
}
