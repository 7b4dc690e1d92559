package usage_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/usage"
)

// summary renders Signals as the testdata tables spell them.
func summary(s usage.Signals) string {
	var parts []string
	for _, p := range []usage.Purpose{usage.Search, usage.AITraining, usage.AIInput, usage.GenAITraining, usage.Automated} {
		if v := s.Verdict(p); v != usage.Unknown {
			parts = append(parts, p.String()+"="+v.String())
		}
	}
	if s.NoImageAI {
		parts = append(parts, "noimageai")
	}
	if s.TDMPolicy != "" {
		parts = append(parts, "tdm-policy="+s.TDMPolicy)
	}
	if parts == nil {
		return "-"
	}
	return strings.Join(parts, " ")
}

// readers turn a case's input into the collector's statements, one per
// testdata file.
var readers = map[string]func(c *usage.Collector, in string){
	"content-usage.txt": func(c *usage.Collector, in string) {
		c.AddHeader(http.Header{"Content-Usage": {in}})
	},
	"content-signal.txt": func(c *usage.Collector, in string) {
		c.AddHeader(http.Header{"Content-Signal": {in}})
	},
	"robots-tag.txt": func(c *usage.Collector, in string) {
		c.AddHeader(http.Header{"Robots-Tag": {in}})
	},
	"x-robots-tag.txt": func(c *usage.Collector, in string) {
		c.AddHeader(http.Header{"X-Robots-Tag": strings.Split(in, " ⏎ ")})
	},
	"html.txt": func(c *usage.Collector, in string) {
		c.AddHTML([]byte(strings.ReplaceAll(in, `\n`, "\n")))
	},
	"tdm-header.txt": func(c *usage.Collector, in string) {
		h := http.Header{}
		for _, f := range strings.Split(in, ";") {
			k, v, _ := strings.Cut(f, ":")
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		c.AddHeader(h)
	},
	"tdmrep-json.txt": func(c *usage.Collector, in string) {
		body, path, _ := strings.Cut(in, " ~ ")
		f, err := usage.ParseTDMFile([]byte(body))
		if err != nil && f != nil {
			panic("a file and an error")
		}
		c.AddTDM(usage.KindTDMFile, f.Lookup(path))
	},
}

// TestConformance walks the tables in testdata (see testdata/README.md).
func TestConformance(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) != len(readers) {
		t.Fatalf("%d tables, %d readers", len(files), len(readers))
	}
	total := 0
	for _, file := range files {
		read := readers[filepath.Base(file)]
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		token, now, n := "", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0
		for i, line := range strings.Split(string(data), "\n") {
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
				continue
			case strings.HasPrefix(line, "@token "):
				token = strings.TrimPrefix(line, "@token ")
				continue
			case strings.HasPrefix(line, "@now "):
				now, err = time.Parse(time.RFC3339, strings.TrimPrefix(line, "@now "))
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			var in, want string
			if rest, ok := strings.CutPrefix(line, "=> "); ok {
				want = rest
			} else {
				var ok bool
				in, want, ok = strings.Cut(line, " => ")
				if !ok {
					t.Fatalf("%s:%d: no ' => '", file, i+1)
				}
			}
			c := usage.Collector{Token: token, Now: func() time.Time { return now }}
			read(&c, in)
			if got := summary(c.Signals()); got != want {
				t.Errorf("%s:%d: %s\n got  %s\n want %s", file, i+1, in, got, want)
			}
			n++
		}
		t.Logf("%s: %d cases", filepath.Base(file), n)
		total += n
	}
	t.Logf("%d cases", total)
}
