package chromium_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/render"
	"github.com/crawlkit/crawlkit/render/chromium"
)

// TestRenderPageBytesCap checks Config.MaxPageBytes in bytes, with text
// that takes more than one byte a character: the page the renderer fetches
// itself is cut like a page handed in, and Result.HTML is at most
// MaxPageBytes bytes of valid UTF-8, however the DOM was built.
func TestRenderPageBytesCap(t *testing.T) {
	needBrowser(t)
	const max = 20000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><body><a href="/first">x</a>` + strings.Repeat("中", 30000) + `</body></html>`))
	}))
	t.Cleanup(srv.Close)
	c := newChromium(t, chromium.Config{Fetcher: localFetcher(t), AllowCIDRs: loopback, MaxPageBytes: max, Timeout: 10 * time.Second})
	check := func(t *testing.T, res *render.Result) {
		t.Helper()
		if len(res.HTML) > max || !utf8.Valid(res.HTML) || !res.Truncated || res.Bytes > max {
			t.Fatalf("HTML %d bytes (valid UTF-8 %v), Bytes %d, truncated %v; want at most %d, truncated",
				len(res.HTML), utf8.Valid(res.HTML), res.Bytes, res.Truncated, max)
		}
	}
	t.Run("fetched page", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/big"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, res)
		if !hasLink(res, "/first") {
			t.Errorf("links %v", res.Document.Links)
		}
	})
	t.Run("DOM built by a script", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		body := `<html><body><div id="o"></div><script>document.getElementById("o").textContent = "é".repeat(15000);</script></body></html>`
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/given", Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		check(t, res)
	})
}
