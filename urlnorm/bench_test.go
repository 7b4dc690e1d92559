package urlnorm

import (
	"net/url"
	"testing"

	"github.com/crawlkit/crawlkit/internal/urlcorpus"
)

// benchCorpus is the corpus every benchmark here (and the purell
// comparison in bench/urlnormcmp) runs over.
var benchCorpus = urlcorpus.Generate(1, 10000)

// BenchmarkNormalize normalizes one corpus URL per iteration with each
// profile.
func BenchmarkNormalize(b *testing.B) {
	for _, p := range []struct {
		name string
		o    *Config
	}{{"Crawler", profile(Crawler())}, {"Safe", profile(Safe())}, {"Aggressive", profile(Aggressive())}, {"SafeBrowsing", profile(SafeBrowsing())}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _ = p.o.Normalize(benchCorpus[i%len(benchCorpus)])
			}
		})
	}
}

// BenchmarkNetURLRoundTrip is the baseline: a bare net/url Parse and
// String of the same URLs, which normalizes nothing.
func BenchmarkNetURLRoundTrip(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		u, err := url.Parse(benchCorpus[i%len(benchCorpus)])
		if err == nil {
			_ = u.String()
		}
	}
}

func BenchmarkResolveString(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = ResolveString("http://example.org/dir/page.html", benchCorpus[i%len(benchCorpus)])
	}
}

func BenchmarkKey(b *testing.B) {
	keys := make([]string, len(benchCorpus))
	for i, u := range benchCorpus {
		keys[i], _ = Normalize(u)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = Key(keys[i%len(keys)])
	}
}
