package crawlkit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

// articlePage is a news page in windows-1252 with a menu around one
// article of prose.
func articlePage() string {
	var b strings.Builder
	b.WriteString(`<html><head><title>Caf` + "\xe9" + ` news</title></head><body><nav><ul><li><a href="/">Home</a></li><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul></nav><article><h1>Caf` + "\xe9" + ` news</h1>`)
	for i := range 6 {
		fmt.Fprintf(&b, `<p>Paragraph %d of the story: the caf`+"\xe9"+` on the corner opened again this week, and the neighbours, who had missed it, came in the morning and stayed, as they always had, until lunch.</p>`, i)
	}
	b.WriteString(`<p>Read <a href="/menu">the menu</a>.</p></article></body></html>`)
	return b.String()
}

func TestPageMarkdown(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=windows-1252")
			fmt.Fprint(w, articlePage()+`<img src="/logo.png">`)
		case "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		default:
			http.NotFound(w, r)
		}
	})
	var mu sync.Mutex
	var md string
	var tokens int
	notHTML := 0
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://news.test/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, MediaTypes: []string{"image/png"},
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			d, err := p.Markdown()
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, crawlkit.ErrNotHTML) {
				if p.StatusCode == 200 {
					notHTML++ // 404 pages are text/plain too
				}
				return nil
			}
			if err != nil {
				return err
			}
			if again, _ := p.Markdown(); again != d {
				t.Error("a second call built the Markdown again")
			}
			if p.StatusCode == 200 {
				md, tokens = d.Markdown, d.Tokens
				if d.Title != "Café news" {
					t.Errorf("title %q", d.Title)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if notHTML != 1 {
		t.Errorf("%d pages not HTML, want the image", notHTML)
	}
	if !strings.Contains(md, "the café on the corner") || strings.Contains(md, "Home") ||
		!strings.HasSuffix(md, "Read [the menu][1].\n\n[1]: http://news.test/menu\n") || tokens == 0 {
		t.Errorf("tokens %d, Markdown:\n%s", tokens, md)
	}
}

// A Page the caller built converts on each call; a JSONLSink asked for
// Markdown records it with its token estimate, and only then.
func TestPageMarkdownRecord(t *testing.T) {
	p := &crawlkit.Page{URL: "http://news.test/", StatusCode: 200, ContentType: "text/html",
		Header: http.Header{"Content-Type": {"text/html; charset=windows-1252"}}, Body: []byte(articlePage())}
	for _, opts := range []crawlkit.JSONLConfig{{Dir: t.TempDir()}, {Dir: t.TempDir(), Markdown: true}} {
		sink, err := crawlkit.NewJSONLSink(opts)
		if err != nil {
			t.Fatal(err)
		}
		r := sink.Record(p)
		sink.Close()
		if !opts.Markdown {
			if r.Markdown != "" || r.Tokens != 0 {
				t.Errorf("Markdown recorded unasked")
			}
			continue
		}
		if !strings.Contains(r.Markdown, "# Café news") && !strings.Contains(r.Markdown, "Paragraph 5") || r.Tokens != (len([]rune(r.Markdown))+3)/4 {
			t.Errorf("tokens %d, Markdown:\n%s", r.Tokens, r.Markdown)
		}
	}
	p.ContentType = "application/pdf"
	if _, err := p.Markdown(); !errors.Is(err, crawlkit.ErrNotHTML) {
		t.Errorf("a PDF: err %v", err)
	}
}
