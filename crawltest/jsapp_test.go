package crawltest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/crawltest"
)

// anchors returns the canonical URLs of the <a href> links of an HTML page
// as served, resolved against base; it reads no script.
func anchors(t *testing.T, body []byte, base string) []string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := url.Parse(base)
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					ref, err := b.Parse(a.Val)
					if err != nil {
						t.Fatalf("bad href %q", a.Val)
					}
					c, err := crawltest.Canonical(ref.String())
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(out, c) {
						out = append(out, c)
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func jsGet(t *testing.T, c *http.Client, u string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

func TestJSSiteOff(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	if web.JSTruth() != nil || web.JSSeed() != "" {
		t.Fatal("a web without JSPages has a JavaScript site")
	}
	if _, err := web.DialContext(context.Background(), "tcp", crawltest.JSHost+":80"); !errors.Is(err, crawltest.ErrUnknownHost) {
		t.Fatalf("dialing %s without JSPages: %v", crawltest.JSHost, err)
	}
	if _, err := crawltest.NewWeb(crawltest.Config{JSPages: -1}); !errors.Is(err, crawltest.ErrConfig) {
		t.Fatalf("JSPages -1: %v", err)
	}
}

// TestJSSiteTruth checks the ground truth against what the server serves:
// the links in each page's HTML are exactly its StaticLinks, and a page
// needs JavaScript exactly when its HTML lacks some of its links.
func TestJSSiteTruth(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 3, JSPages: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	truth := web.JSTruth()
	if truth.Seed != "http://app.test/" || web.JSSeed() != truth.Seed {
		t.Fatalf("seed %q / %q", truth.Seed, web.JSSeed())
	}
	if len(truth.Pages) != 31 {
		t.Fatalf("%d pages, want 30 numbered + leak", len(truth.Pages))
	}
	client := web.Client()
	kinds := map[string]int{}
	needJS := 0
	for u, p := range truth.Pages {
		kinds[p.Kind]++
		status, hdr, body := jsGet(t, client, u)
		if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", u, status, hdr.Get("Content-Type"))
		}
		static := anchors(t, body, u)
		slices.Sort(static)
		want := slices.Clone(p.StaticLinks)
		slices.Sort(want)
		if !slices.Equal(static, want) {
			t.Errorf("%s (%s): HTML links %v, truth says %v", u, p.Kind, static, want)
		}
		missing := false
		for _, l := range p.Links {
			if !slices.Contains(static, l) {
				missing = true
			}
			if _, ok := truth.Pages[l]; !ok {
				t.Errorf("%s links to %s, which is not a page", u, l)
			}
		}
		if missing != p.NeedsJS || truth.NeedsJS(u) != p.NeedsJS {
			t.Errorf("%s (%s): NeedsJS %v, but links missing from the HTML: %v", u, p.Kind, p.NeedsJS, missing)
		}
		if p.NeedsJS {
			needJS++
		}
	}
	for _, k := range []string{crawltest.JSKindHome, crawltest.JSKindStatic, crawltest.JSKindReactRoot, crawltest.JSKindVueApp,
		crawltest.JSKindNextShell, crawltest.JSKindNoscript, crawltest.JSKindNextSSR, crawltest.JSKindHybrid,
		crawltest.JSKindAngular, crawltest.JSKindScripts, crawltest.JSKindLeak} {
		if kinds[k] == 0 {
			t.Errorf("no page of kind %s", k)
		}
	}
	if needJS == 0 || needJS == len(truth.Pages) {
		t.Errorf("%d of %d pages need JavaScript", needJS, len(truth.Pages))
	}
	if len(truth.WithJS) != len(truth.Pages) {
		t.Errorf("%d pages reachable with JavaScript, want all %d", len(truth.WithJS), len(truth.Pages))
	}
	if len(truth.WithoutJS) >= len(truth.WithJS) {
		t.Errorf("%d pages reachable without JavaScript, not fewer than %d with", len(truth.WithoutJS), len(truth.WithJS))
	}
	for _, u := range truth.WithoutJS {
		if !slices.Contains(truth.WithJS, u) {
			t.Errorf("%s reachable without JavaScript only", u)
		}
	}

	// The API and scripts the pages use answer.
	status, _, body := jsGet(t, client, "http://app.test/api/links?page=2")
	if status != http.StatusOK || !strings.HasPrefix(string(body), "[\"/p/") {
		t.Errorf("api: %d %s", status, body)
	}
	for _, s := range []string{"/static/app.js", "/static/next.js", "/static/main.js", "/static/vendor.js"} {
		if status, hdr, _ := jsGet(t, client, "http://app.test"+s); status != http.StatusOK || !strings.Contains(hdr.Get("Content-Type"), "javascript") {
			t.Errorf("%s: %d %s", s, status, hdr.Get("Content-Type"))
		}
	}
	if status, _, body := jsGet(t, client, "http://app.test/robots.txt"); status != http.StatusOK || !strings.Contains(string(body), "Disallow: /private-api/") {
		t.Errorf("robots.txt: %d %q", status, body)
	}
	if status, _, _ := jsGet(t, client, "http://app.test/p/999"); status != http.StatusNotFound {
		t.Errorf("/p/999: %d", status)
	}

	// The leak page names private targets that the web refuses to dial.
	if len(truth.PrivateTargets) == 0 || len(truth.DisallowedTargets) == 0 {
		t.Fatal("no targets for the leak page")
	}
	_, _, leak := jsGet(t, client, "http://app.test"+crawltest.JSLeakPath)
	for _, u := range append(slices.Clone(truth.PrivateTargets), "/private-api/data") {
		if !strings.Contains(string(leak), u) {
			t.Errorf("the leak page does not request %s", u)
		}
	}
	for _, u := range truth.PrivateTargets {
		pu, _ := url.Parse(u)
		if _, err := web.DialContext(context.Background(), "tcp", pu.Host); !errors.Is(err, crawltest.ErrUnknownHost) {
			t.Errorf("dialing %s: %v, want ErrUnknownHost", pu.Host, err)
		}
	}

	rep := web.JSReport()
	if rep.Requests == 0 || rep.PerPath["/"] != 1 || rep.RobotsViolations != 0 || rep.MaxInFlight != 1 {
		t.Errorf("report: %+v", rep)
	}
	jsGet(t, client, "http://app.test/private-api/data")
	if web.JSReport().RobotsViolations != 1 {
		t.Error("a disallowed request was not counted")
	}

	// ResetReport clears the JavaScript site's accounting too.
	web.ResetReport()
	if rep := web.JSReport(); rep.Requests != 0 || len(rep.PerPath) != 0 || rep.RobotsViolations != 0 || rep.MaxInFlight != 0 || rep.Gaps != 0 {
		t.Errorf("after ResetReport: %+v", rep)
	}
	jsGet(t, client, "http://app.test/")
	if rep := web.JSReport(); rep.Requests != 1 || rep.PerPath["/"] != 1 || rep.Gaps != 0 {
		t.Errorf("first request after ResetReport: %+v", rep)
	}
}
