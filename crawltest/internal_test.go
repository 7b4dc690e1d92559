package crawltest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// FuzzResolve feeds arbitrary request targets to the server's request
// parsing: it must not panic, every target it maps to a page must be that
// page's canonical target, and trap pages must render.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"/", "/index.html", "/docs/beacon-falcon-1.html", "/shop/item?cat=maple&id=5&print=1",
		"/%7Eteam/juniper-saffron-4.html?utm_source=x", "/calendar/2026/06/", "/loop/a/b/a/",
		"/account/orders?sessionid=0123456789abcdef", "/search?q=alpha+beta", "/robots.txt",
		"/docs/-0.html", "/shop/item?cat=&id=00005", "/calendar/0/13/", "/../x/./y?&&",
	} {
		f.Add(1, s)
	}
	cfg := Config{Hosts: 12, PagesPerHost: 30}
	if err := cfg.ensureDefaults(); err != nil {
		f.Fatal(err)
	}
	g := newGenerator(&cfg)
	f.Fuzz(func(t *testing.T, h int, target string) {
		if h < 0 || h >= cfg.Hosts || !strings.HasPrefix(target, "/") {
			return
		}
		r := &http.Request{Host: HostName(h), RequestURI: target}
		res := g.resolve(h, r)
		switch res.kind {
		case resPage:
			if got := g.target(h, res.nd); got != res.target {
				t.Fatalf("%q resolved to page %+v with target %q, not %q", target, res.nd, got, res.target)
			}
			if res.nd.variant == variantPrint && !hasPrint(res.nd.n) {
				t.Fatalf("%q: print variant of page %d, which has none", target, res.nd.n)
			}
		case resTrap:
			hrefs, texts, _ := g.trapLinks(res.trap, res.target)
			if len(hrefs) != len(texts) {
				t.Fatalf("%q: %d hrefs, %d texts", target, len(hrefs), len(texts))
			}
		}
	})
}

func TestEveryPageResolvesToItself(t *testing.T) {
	cfg := Config{Hosts: 13, PagesPerHost: 45}
	if err := cfg.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	g := newGenerator(&cfg)
	for h := 0; h < cfg.Hosts; h++ {
		for n := 0; n < cfg.PagesPerHost; n++ {
			for v := uint8(0); v < 3; v++ {
				if v == variantPrint && !hasPrint(n) || v == variantIndex && n != 0 {
					continue
				}
				nd := node{n, v}
				target := g.target(h, nd)
				res := g.resolve(h, &http.Request{Host: HostName(h), RequestURI: target})
				if res.kind != resPage || res.nd != nd || res.canonical != g.pageURL(h, nd) {
					t.Fatalf("%s resolves to %+v", g.pageURL(h, nd), res)
				}
			}
		}
	}
}

func BenchmarkRenderPage(b *testing.B) {
	cfg := Config{Hosts: 1000, PagesPerHost: 100}
	if err := cfg.ensureDefaults(); err != nil {
		b.Fatal(err)
	}
	g := newGenerator(&cfg)
	buf := make([]byte, 0, 64<<10)
	var bytes int64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = g.renderPage(buf[:0], i%1000, node{i / 1000 % 100, variantPrimary})
		bytes += int64(len(buf))
	}
	b.SetBytes(bytes / int64(b.N))
}

func TestHostName(t *testing.T) {
	for _, i := range []int{0, 7, 42, 999, 1000, 9999, 10000, 123456, 999999} {
		if got, want := HostName(i), fmt.Sprintf("h%04d.test", i); got != want {
			t.Errorf("HostName(%d) = %q, want %q", i, got, want)
		}
	}
}
