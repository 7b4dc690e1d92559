package markdown_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/markdown"
)

// BenchmarkMarkdown and BenchmarkExtract read the same 40-paragraph page:
// the cost of the main content as Markdown beside the crawler's own pass.
func BenchmarkMarkdown(b *testing.B) {
	page := []byte(article(40))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := markdown.Convert(page, "https://example.com/report"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	page := []byte(article(40))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := extract.ExtractBytes(page, "https://example.com/report", nil); err != nil {
			b.Fatal(err)
		}
	}
}
