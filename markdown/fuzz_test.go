package markdown_test

import (
	"testing"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/markdown"
)

func FuzzConvert(f *testing.F) {
	f.Add([]byte(article(1)))
	f.Add([]byte("<ul><li><ol><li><pre>```</pre><table><tr><td><a href=x>*</a></td></tr></table>"))
	f.Add([]byte("<blockquote><h1>#</h1><code>``</code><a href='//\x00'>[</a>"))
	f.Fuzz(func(t *testing.T, page []byte) {
		d, err := markdown.Convert(page, "https://example.com/a/b")
		if err != nil {
			return
		}
		if !utf8.ValidString(d.Markdown) && utf8.Valid(page) {
			t.Errorf("invalid UTF-8 out of valid UTF-8 in")
		}
		if len(d.Links) > markdown.MaxLinks {
			t.Errorf("%d links", len(d.Links))
		}
	})
}
