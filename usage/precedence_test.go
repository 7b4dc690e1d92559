package usage_test

import (
	"net/http"
	"testing"

	"github.com/crawlkit/crawlkit/usage"
)

// TestPrecedence checks how signals from different places merge (see the
// package documentation).
func TestPrecedence(t *testing.T) {
	cu := func(s string) usage.Statement {
		st, ok := usage.ParseContentUsage(s)
		if !ok {
			t.Fatalf("%q does not parse", s)
		}
		return st
	}
	for _, c := range []struct {
		name string
		add  func(c *usage.Collector)
		want string
	}{
		{"nothing", func(c *usage.Collector) {}, "-"},
		{"a header narrows robots.txt (vocab §7.1)", func(c *usage.Collector) {
			c.Add(usage.KindRobotsContentUsage, "train-ai=y, search=y", cu("train-ai=y, search=y"))
			c.AddHeader(http.Header{"Content-Usage": {"train-ai=n"}})
		}, "search=allowed train-ai=disallowed train-genai=disallowed"},
		{"a header does not widen robots.txt (vocab §7.1)", func(c *usage.Collector) {
			c.Add(usage.KindRobotsContentUsage, "train-ai=n", cu("train-ai=n"))
			c.AddHeader(http.Header{"Content-Usage": {"train-ai=y, search=y"}})
		}, "search=allowed train-ai=disallowed train-genai=disallowed"},
		{"the more specific category within one statement (vocab-03 §5)", func(c *usage.Collector) {
			c.Add(usage.KindContentUsage, "bots=n, search=y", cu("bots=n, search=y"))
		}, "search=allowed train-ai=disallowed ai-input=disallowed train-genai=disallowed bots=disallowed"},
		{"a parent in one statement is not overridden by a child in another", func(c *usage.Collector) {
			c.Add(usage.KindRobotsContentUsage, "bots=n", cu("bots=n"))
			c.Add(usage.KindContentUsage, "search=y", cu("search=y"))
		}, "search=disallowed train-ai=disallowed ai-input=disallowed train-genai=disallowed bots=disallowed"},
		{"aipref and Content-Signal combine", func(c *usage.Collector) {
			c.Add(usage.KindRobotsContentSignal, "search=yes, ai-input=yes", usage.ParseContentSignal("search=yes, ai-input=yes"))
			c.Add(usage.KindRobotsContentUsage, "search=n", cu("search=n"))
		}, "search=disallowed ai-input=allowed"},
		{"TDMRep header overrides the file (TDMRep §3.5)", func(c *usage.Collector) {
			c.AddTDM(usage.KindTDMFile, usage.TDM{Reservation: usage.TDMReserved, Policy: "https://p/1"})
			c.AddHeader(http.Header{"Tdm-Reservation": {"0"}})
		}, "train-ai=allowed ai-input=allowed train-genai=allowed"},
		{"TDMRep meta overrides the header (TDMRep §3.5)", func(c *usage.Collector) {
			c.AddHeader(http.Header{"Tdm-Reservation": {"0"}})
			c.AddHTML([]byte(`<meta name="tdm-reservation" content="1">`))
		}, "train-ai=disallowed ai-input=disallowed train-genai=disallowed"},
		{"an absent TDMRep value does not reset (TDMRep §3.5)", func(c *usage.Collector) {
			c.AddTDM(usage.KindTDMFile, usage.TDM{Reservation: usage.TDMReserved})
			c.AddHeader(http.Header{"Tdm-Reservation": {"maybe"}})
			c.AddHTML([]byte(`<title>x</title>`))
		}, "train-ai=disallowed ai-input=disallowed train-genai=disallowed"},
		{"TDMRep's no reservation loses to an aipref disallow", func(c *usage.Collector) {
			c.AddHeader(http.Header{"Tdm-Reservation": {"0"}, "Content-Usage": {"train-ai=n"}})
		}, "train-ai=disallowed ai-input=allowed train-genai=disallowed"},
		{"robots directives are restrictive only", func(c *usage.Collector) {
			c.AddHeader(http.Header{"Content-Usage": {"search=y"}, "X-Robots-Tag": {"noindex"}})
		}, "search=disallowed"},
	} {
		var col usage.Collector
		c.add(&col)
		if got := summary(col.Signals()); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, got, c.want)
		}
	}
}

// TestSources checks that every signal that spoke is named, bounded.
func TestSources(t *testing.T) {
	var c usage.Collector
	c.AddHeader(http.Header{"Content-Usage": {"train-ai=n"}, "X-Robots-Tag": {"noai"}, "Tdm-Reservation": {"1"}, "Tdm-Policy": {"https://p/1"}})
	c.AddHeader(http.Header{"Content-Usage": {"future=y"}})
	s := c.Signals()
	want := []usage.Source{
		{Kind: usage.KindContentUsage, Value: "train-ai=n"},
		{Kind: usage.KindXRobotsTag, Value: "noai"},
		{Kind: usage.KindTDMHeader, Value: "tdm-reservation=1, tdm-policy=https://p/1"},
		{Kind: usage.KindContentUsage, Value: "future=y"},
	}
	if len(s.Sources) != len(want) {
		t.Fatalf("sources %+v, want %+v", s.Sources, want)
	}
	for i := range want {
		if s.Sources[i] != want[i] {
			t.Errorf("source %d: %+v, want %+v", i, s.Sources[i], want[i])
		}
	}
	if s.TDMPolicy != "https://p/1" {
		t.Errorf("TDMPolicy %q", s.TDMPolicy)
	}
	for range 100 {
		c.AddHeader(http.Header{"Content-Usage": {string(make([]byte, 4096))}})
	}
	s = c.Signals()
	if len(s.Sources) > 32 {
		t.Errorf("%d sources kept", len(s.Sources))
	}
	for _, src := range s.Sources {
		if len(src.Value) > 512 {
			t.Errorf("a source of %d octets kept", len(src.Value))
		}
	}
}
