package llmstxt_test

import (
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/llmstxt"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte("# T\n> s\n## D\n- [a](b): c\n* [x](<y z>)\n- [](\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := llmstxt.Parse(b)
		if len(p.Links) > llmstxt.MaxLinks {
			t.Fatalf("%d links", len(p.Links))
		}
		for _, l := range p.Links {
			if l.URL == "" || strings.ContainsAny(l.URL, " \t\n") {
				t.Fatalf("URL %q", l.URL)
			}
		}
	})
}

func TestParseLimits(t *testing.T) {
	big := strings.Repeat("- [a](https://example.com/)\n", llmstxt.MaxLinks+10)
	if n := len(llmstxt.Parse([]byte(big)).Links); n != llmstxt.MaxLinks {
		t.Errorf("%d links", n)
	}
	if f := llmstxt.Parse([]byte(strings.Repeat("x", 3*llmstxt.MaxBytes))); f.Title != "" || len(f.Links) != 0 {
		t.Errorf("%+v", f)
	}
}
