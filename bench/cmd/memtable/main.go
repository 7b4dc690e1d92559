// Command memtable renders the memory curves written by memcurve.sh (result
// lines with samples) as a Markdown table: resident set and live Go heap at
// fixed fractions of each crawl, and the growth per 100 000 pages between
// the first quarter and the end.
//
//	memtable results/memcurve.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: memtable results/memcurve.jsonl")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "memtable:", err)
		os.Exit(1)
	}
	defer f.Close()
	var rows []harness.Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r harness.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, "memtable:", err)
			os.Exit(1)
		}
		rows = append(rows, r)
	}
	fmt.Print(table(rows))
}

// at returns the first sample with at least frac of the crawl's final
// page count.
func at(s []harness.Sample, frac float64) harness.Sample {
	last := s[len(s)-1]
	for _, x := range s {
		if float64(x.Pages) >= frac*float64(last.Pages) {
			return x
		}
	}
	return last
}

func table(rows []harness.Result) string {
	var b strings.Builder
	fracs := []float64{0.25, 0.5, 0.75, 1}
	b.WriteString("| crawl state | pages | pages/s | peak RSS MB |")
	for _, f := range fracs {
		fmt.Fprintf(&b, " RSS / Go / live heap MB at %.0f %% |", f*100)
	}
	b.WriteString(" growth per 100 000 pages, 25 % → end: RSS / Go / live heap | RSS, 50 % → end |\n|---|---|---|---|")
	for range fracs {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	for _, r := range rows {
		if len(r.Samples) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f |", r.Label, r.Pages, r.PagesPerS, r.PeakRSSMB)
		for _, f := range fracs {
			x := at(r.Samples, f)
			fmt.Fprintf(&b, " %.0f / %s / %.0f (%d pages) |", x.RSSMB, goMB(x), x.LiveHeapMB, x.Pages)
		}
		q, h, end := at(r.Samples, 0.25), at(r.Samples, 0.5), r.Samples[len(r.Samples)-1]
		per := func(from harness.Sample, v func(harness.Sample) float64) float64 {
			if end.Pages <= from.Pages {
				return 0
			}
			return (v(end) - v(from)) / float64(end.Pages-from.Pages) * 100000
		}
		rss := func(x harness.Sample) float64 { return x.RSSMB }
		gomb := func(x harness.Sample) float64 { return x.GoMB }
		live := func(x harness.Sample) float64 { return x.LiveHeapMB }
		goGrowth := "?"
		if q.GoMB != 0 {
			goGrowth = fmt.Sprintf("%+.1f", per(q, gomb))
		}
		fmt.Fprintf(&b, " %+.1f / %s / %+.1f MB | %+.1f MB |\n", per(q, rss), goGrowth, per(q, live), per(h, rss))
	}
	return b.String()
}

// goMB formats a sample's Go runtime memory, "?" for results recorded
// before it was sampled.
func goMB(x harness.Sample) string {
	if x.GoMB == 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f", x.GoMB)
}
