package trap

import (
	"fmt"
	"net/url"
	"testing"
)

// benchURLs is a mix of legitimate corpus URLs, judged with their sources.
func benchURLs(b *testing.B) []legitURL {
	b.Helper()
	c := legitCorpus()
	step := len(c) / 4096
	var out []legitURL
	for i := 0; i < len(c) && len(out) < 4096; i += step {
		out = append(out, c[i])
	}
	return out
}

// BenchmarkJudgeWarm measures a verdict on warm state: every URL has been
// judged once before, as links found again on later pages are.
func BenchmarkJudgeWarm(b *testing.B) {
	urls := benchURLs(b)
	d := New(Config{})
	for _, u := range urls {
		d.JudgeAt(now, Candidate{URL: u.url, Source: u.source})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u := urls[i%len(urls)]
		d.JudgeAt(now, Candidate{URL: u.url, Source: u.source})
	}
}

// BenchmarkJudgeNew measures a verdict on a URL the host has not seen,
// which is counted against the budgets and learned from.
func BenchmarkJudgeNew(b *testing.B) {
	urls := benchURLs(b)
	d := New(Config{HostBudget: -1, PatternBudget: -1})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u := urls[i%len(urls)]
		// A distinct URL per iteration on the corpus URL's host.
		d.JudgeAt(now, Candidate{URL: u.url + "#" + fmt.Sprint(i), Source: u.source})
	}
}

// BenchmarkJudgeParallel is BenchmarkJudgeWarm from all cores.
func BenchmarkJudgeParallel(b *testing.B) {
	urls := benchURLs(b)
	d := New(Config{})
	for _, u := range urls {
		d.JudgeAt(now, Candidate{URL: u.url, Source: u.source})
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			u := urls[i%len(urls)]
			d.JudgeAt(now, Candidate{URL: u.url, Source: u.source})
			i++
		}
	})
}

// BenchmarkObserve measures a content report.
func BenchmarkObserve(b *testing.B) {
	urls := benchURLs(b)
	d := New(Config{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u := urls[i%len(urls)]
		d.Observe(u.url, u.fp)
	}
}

// BenchmarkURLParse is the baseline: the standard library parsing the same
// URLs, which any crawler does at least once per link.
func BenchmarkURLParse(b *testing.B) {
	urls := benchURLs(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := url.Parse(urls[i%len(urls)].url); err != nil {
			b.Fatal(err)
		}
	}
}
