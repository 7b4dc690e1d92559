package markdown_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/markdown"
)

// article returns a page of n paragraphs of prose inside navigation and a
// footer, and the link count of its body.
func article(n int) string {
	var b strings.Builder
	b.WriteString(`<html><head><title>The Widget Report</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/about">About</a></li></ul></nav>
<main><article><h1>The Widget Report</h1>`)
	for i := range n {
		fmt.Fprintf(&b, `<p>Paragraph %d tells how widgets, cranks and levers were made in the old
workshops, where every craftsman kept a drawer of parts, and how the <a href="/part/%d">part
number %d</a> came to be the one everybody asked for, year after year.</p>`, i, i, i)
	}
	b.WriteString(`</article></main><footer><p>Copyright Widget Co. <a href="/legal">Legal</a></p></footer></body></html>`)
	return b.String()
}

func TestConvertArticle(t *testing.T) {
	d, err := markdown.Convert([]byte(article(8)), "https://example.com/report")
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "The Widget Report" || !d.Date.IsZero() || d.Truncated {
		t.Errorf("title %q date %v truncated %v", d.Title, d.Date, d.Truncated)
	}
	for _, unwanted := range []string{"Home", "Copyright", "legal"} {
		if strings.Contains(d.Markdown, unwanted) {
			t.Errorf("boilerplate %q in the Markdown:\n%s", unwanted, d.Markdown)
		}
	}
	if len(d.Links) != 8 || d.Links[7] != "https://example.com/part/7" {
		t.Errorf("links %q", d.Links)
	}
	if !strings.Contains(d.Markdown, "the [part number 7][8] came") || !strings.HasSuffix(d.Markdown, "\n[8]: https://example.com/part/7\n") {
		t.Errorf("Markdown:\n%s", d.Markdown)
	}
	if want := (len([]rune(d.Markdown)) + 3) / 4; d.Tokens != want {
		t.Errorf("Tokens %d, want %d", d.Tokens, want)
	}
}

func TestConvertBase(t *testing.T) {
	page := `<html><head><base href="https://cdn.example/docs/"></head><body><article>` +
		strings.Repeat(`<p>Some prose about the subject at hand, long enough to count as an article body for the extractor.</p>`, 5) +
		`<p>See <a href="guide">the guide</a>.</p></article></body></html>`
	d, err := markdown.Convert([]byte(page), "https://example.com/x")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Links) != 1 || d.Links[0] != "https://cdn.example/docs/guide" {
		t.Errorf("links %q", d.Links)
	}
}

func TestConvertEmpty(t *testing.T) {
	for _, page := range []string{"", "<html></html>", "<p>hi</p>", "\x00\xff<"} {
		d, err := markdown.Convert([]byte(page), "https://example.com/")
		if err != nil {
			t.Fatalf("%q: %v", page, err)
		}
		if d.Tokens != (len([]rune(d.Markdown))+3)/4 {
			t.Errorf("%q: tokens %d for %q", page, d.Tokens, d.Markdown)
		}
	}
}

func TestConvertInvalidURL(t *testing.T) {
	for _, u := range []string{"", "/relative", "ftp://example.com/", "https://"} {
		if _, err := markdown.Convert([]byte("<p>x</p>"), u); !errors.Is(err, markdown.ErrInvalidPageURL) {
			t.Errorf("%q: err %v", u, err)
		}
	}
}

func TestConvertLimits(t *testing.T) {
	t.Run("deep nesting", func(t *testing.T) {
		page := strings.Repeat("<div>", 50_000) + "deep" + strings.Repeat("</div>", 50_000)
		if _, err := markdown.Convert([]byte(page), "https://example.com/"); !errors.Is(err, markdown.ErrTooDeep) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("too many elements", func(t *testing.T) {
		page := strings.Repeat("<p>x</p>", markdown.MaxElements)
		if _, err := markdown.Convert([]byte(page), "https://example.com/"); !errors.Is(err, markdown.ErrTooManyElements) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("input", func(t *testing.T) {
		page := "<article><p>" + strings.Repeat("word é ", markdown.MaxInputBytes/7+10) + "</p></article>"
		d, err := markdown.Convert([]byte(page), "https://example.com/")
		if err != nil {
			t.Fatal(err)
		}
		if !d.Truncated || len(d.Markdown) > markdown.MaxMarkdownBytes {
			t.Errorf("truncated %v, %d bytes", d.Truncated, len(d.Markdown))
		}
	})
	t.Run("links", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("<article>")
		for i := range markdown.MaxLinks + 50 {
			fmt.Fprintf(&b, `<p>Paragraph %d of prose, with commas, and a <a href="/p/%d">link</a> inside it, as articles have.</p>`, i, i)
		}
		d, err := markdown.Convert([]byte(b.String()), "https://example.com/")
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Links) != markdown.MaxLinks {
			t.Errorf("%d links", len(d.Links))
		}
	})
}
