package main

// The realistic and durable runs (bench/run.sh -runs realistic, -runs
// durable): cmd/realisticweb's HTTPS web of real-looking pages, the three
// crawlers side by side (realistic), and crawlkit with its state in Pebble
// against crawlkit in memory (durable). Their tables go into sections of
// their own in BENCHMARKS.md, between "<!-- realistic:begin -->" and
// "<!-- realistic:end -->" (and durable:…).

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

// variant is one line of a run's table: a crawler command and its extra
// flags. A flag value "{tmpdir}" is replaced by a new temporary directory,
// removed after the crawl.
type variant struct {
	Name string
	Cmd  string
	Args []string
}

// args returns v's flags with "{tmpdir}" made, and a function that removes
// what it made.
func (v variant) args() ([]string, func(), error) {
	out := make([]string, len(v.Args))
	var dirs []string
	for i, a := range v.Args {
		if a == "{tmpdir}" {
			d, err := os.MkdirTemp("", "matrix-"+v.Name+"-")
			if err != nil {
				return nil, func() {}, err
			}
			dirs = append(dirs, d)
			a = d
		}
		out[i] = a
	}
	return out, func() {
		for _, d := range dirs {
			_ = os.RemoveAll(d)
		}
	}, nil
}

// variantsOf returns s's variants, or one per crawler.
func variantsOf(s runSpec, crawlers []string) []variant {
	if len(s.Variants) > 0 {
		return s.Variants
	}
	vs := make([]variant, len(crawlers))
	for i, c := range crawlers {
		vs[i] = variant{Name: c, Cmd: c}
	}
	return vs
}

// realisticWorkers is every crawler's concurrency on the realistic web: with
// responses taking 20–300 ms (median 60), 128 requests in flight keep the
// crawler, not the latency, the bound.
const realisticWorkers = 128

// realisticSizes are the -size knob's webs (hosts of 10–20 pages, about
// 15 000 pages per 1 000 hosts) and the page cap of their crawls (0: none).
var realisticSizes = map[string]struct{ hosts, maxPages int }{
	"small":  {500, 3000},
	"medium": {1000, 10000},
	"large":  {2000, 0},
}

func realisticSpecs(size string) (map[string]runSpec, error) {
	sz, ok := realisticSizes[size]
	if !ok {
		return nil, fmt.Errorf("unknown -size %q (small, medium, large)", size)
	}
	hosts := sz.hosts
	web := []string{"-hosts", fmt.Sprint(hosts), "-min-pages", "10", "-max-pages", "20", "-max-depth", "5"}
	crawl := []string{"-max-depth", "5", "-delay", "1ms", "-workers", fmt.Sprint(realisticWorkers), "-timeout", "15m",
		"-max-pages", fmt.Sprint(sz.maxPages)}
	title := fmt.Sprintf("%d HTTPS hosts × 10–20 real-looking pages (-size %s)", hosts, size)
	if sz.maxPages > 0 {
		title += fmt.Sprintf(", crawls capped at %d pages", sz.maxPages)
	}
	return map[string]runSpec{
		"realistic": {Name: "realistic", Title: title, Server: "realisticweb", Kind: "realistic", Web: web, Crawl: crawl},
		"durable": {Name: "durable", Title: title + ", crawlkit in memory and on disk", Server: "realisticweb", Kind: "durable",
			Web: web, Crawl: crawl,
			Variants: []variant{
				{Name: "memory", Cmd: "crawlkit"},
				{Name: "durable", Cmd: "crawlkit", Args: []string{"-data-dir", "{tmpdir}"}},
			}},
		"warc": {Name: "warc", Title: title + ", crawlkit on a DataDir with and without WARC", Server: "realisticweb", Kind: "warc",
			Web: web, Crawl: crawl,
			Variants: []variant{
				{Name: "warc-off", Cmd: "crawlkit", Args: []string{"-data-dir", "{tmpdir}"}},
				{Name: "warc-on", Cmd: "crawlkit", Args: []string{"-data-dir", "{tmpdir}", "-warc-dir", "{tmpdir}"}},
			}},
	}, nil
}

// Published figures of a billion-page crawl: 1.005 billion pages in 25.5 h
// on 12 nodes of 16 vCPUs, pages of 242 KB on average.
const (
	pubPages  = 1.005e9
	pubHours  = 25.5
	pubVCPUs  = 12 * 16
	pubPageKB = 242.0
)

func cpuMSPerPage(r harness.Result) float64 {
	if r.Pages == 0 {
		return 0
	}
	return r.CPUSeconds * 1000 / float64(r.Pages)
}

func pagesPerCPUSecond(r harness.Result) float64 {
	if r.CPUSeconds == 0 {
		return 0
	}
	return float64(r.Pages) / r.CPUSeconds
}

func decodedMBPerS(r harness.Result) float64 {
	if r.ElapsedS == 0 {
		return 0
	}
	return float64(r.Server.DecodedBytes) / 1e6 / r.ElapsedS
}

func decodedKBPerPage(r harness.Result) float64 {
	if r.Pages == 0 {
		return 0
	}
	return float64(r.Server.DecodedBytes) / 1e3 / float64(r.Pages)
}

func spreadF(rs []harness.Result, f func(harness.Result) float64, format string) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf(format, f(r))
	}
	return strings.Join(parts, ", ")
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range []string{"HTTP/2.0", "HTTP/1.1", "br", "gzip", "identity"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// webLine describes the realistic web from its info line.
func webLine(info harness.WebInfo) string {
	return fmt.Sprintf("%d hosts, ground truth %d pages within depth %d (robots.txt respected); pages of median %.0f KB, mean %.0f KB, "+
		"largest %.0f KB decoded, median %d links. HTTPS with a CA made at the web's start (each crawler loads it with -ca), "+
		"HTTP/2 where the client offers it, brotli or gzip as Accept-Encoding asks, 20–300 ms per response.",
		info.Hosts, info.TruthUnique, info.MaxDepth, info.MedianPageKB, info.MeanPageKB, info.MaxPageKB, info.MedianLinks)
}

// realisticReport renders the realistic run's table; it ends with the
// crawlkit ÷ colly line.
func realisticReport(s runSpec, names []string, info harness.WebInfo, res map[string][]harness.Result, reps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n#### %s\n\n%s\n\n", s.Title, webLine(info))
	fmt.Fprintf(&b, "Every crawler: %d requests in flight (crawlkit Workers, colly's Parallelism; gocrawl runs one worker per host and has no such knob), "+
		"-delay 1 ms between requests to a host, depth ≤ 5. Medians of %d runs, crawlers alternating. CPU is user+sys of the crawler process; "+
		"decoded MB/s is the server's decoded bytes of the pages it sent ÷ elapsed time; violations and duplicates are the worst run.\n\n",
		realisticWorkers, reps)
	b.WriteString("| crawler | pages/s (runs) | median pages/s | CPU ms / page (runs) | median CPU ms / page | pages / CPU-s | decoded MB/s | KB / page | peak RSS MB | pages | elapsed s | coverage | exact dup | spelling dup | robots viol. | before robots | politeness viol. | TLS handshakes | protocols, encodings | server CPU s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	pps := func(r harness.Result) float64 { return r.PagesPerS }
	for _, c := range names {
		rs := res[c]
		last := rs[len(rs)-1].Server
		merged := map[string]int{}
		for k, v := range last.Protocols {
			merged[k] = v
		}
		for k, v := range last.Encodings {
			merged[k] = v
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f | %s | %.1f | %.0f | %.1f | %.0f | %.0f | %.0f | %.1f | %.3f | %d | %d | %d | %d | %d | %.0f | %s | %.1f |\n",
			c, spreadF(rs, pps, "%.1f"), pick(rs, pps), spreadF(rs, cpuMSPerPage, "%.1f"), pick(rs, cpuMSPerPage),
			pick(rs, pagesPerCPUSecond), pick(rs, decodedMBPerS), pick(rs, decodedKBPerPage),
			pick(rs, func(r harness.Result) float64 { return r.PeakRSSMB }),
			pick(rs, func(r harness.Result) float64 { return float64(r.Pages) }),
			pick(rs, func(r harness.Result) float64 { return r.ElapsedS }), minCov(rs),
			maxOf(rs, func(r harness.Result) int { return r.ExactDup }),
			maxOf(rs, func(r harness.Result) int { return r.SpellingDup }),
			maxOf(rs, func(r harness.Result) int { return r.RobotsViol }),
			maxOf(rs, func(r harness.Result) int { return r.Server.BeforeRobots }),
			maxOf(rs, func(r harness.Result) int { return r.PolitenessVio }),
			pick(rs, func(r harness.Result) float64 { return float64(r.Server.TLSHandshakes) }),
			counts(merged)+" (last run)",
			pick(rs, func(r harness.Result) float64 { return r.Server.ServerCPUSeconds }))
	}
	ck := res["crawlkit"]
	if len(ck) > 0 {
		ms := pick(ck, cpuMSPerPage)
		kb := pick(ck, decodedKBPerPage)
		pub := pubHours * 3600 * pubVCPUs / pubPages * 1000
		fmt.Fprintf(&b, "\nAgainst a published billion-page crawl (1.005 billion pages in %.1f h on %d nodes × 16 vCPU, %.0f KB per page): "+
			"%.1f vCPU-ms per page there (every provisioned vCPU-second, so an upper bound on the CPU it used), %.1f per 100 KB. "+
			"crawlkit here: %.1f CPU-ms per page of %.0f KB decoded, %.1f per 100 KB: %.2f× the published per-page figure, "+
			"%.2f× per 100 KB (pages here are %.0f%% of that size on average; this crawl fetches, decodes and extracts links and keeps "+
			"nothing; what else the published figure covers is not known here).\n",
			pubHours, pubVCPUs/16, pubPageKB, pub, pub/pubPageKB*100, ms, kb, ms/kb*100, ms/pub, (ms/kb)/(pub/pubPageKB), 100*kb/pubPageKB)
	}
	for _, peer := range names {
		if peer == "crawlkit" || peer == "colly" || len(ck) == 0 || len(res[peer]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\ncrawlkit ÷ %s per CPU-s: %.2f\n", peer, pick(ck, pagesPerCPUSecond)/pick(res[peer], pagesPerCPUSecond))
	}
	if len(ck) > 0 && len(res["colly"]) > 0 {
		fmt.Fprintf(&b, "\ncrawlkit ÷ colly per CPU-s: %.2f\n", pick(ck, pagesPerCPUSecond)/pick(res["colly"], pagesPerCPUSecond))
	}
	return b.String()
}

// durableReport renders the durable run's table; it ends with the
// durable ÷ memory pages/s line.
func durableReport(s runSpec, names []string, info harness.WebInfo, res map[string][]harness.Result, reps int) string {
	var b strings.Builder
	stateTable(&b, s, info, "crawlkit with Config.DataDir (crawl state in Pebble, a new directory each run) against crawlkit in memory", names, res, reps)
	pps := func(r harness.Result) float64 { return r.PagesPerS }
	d, m := res["durable"], res["memory"]
	if len(d) > 0 && len(m) > 0 {
		fmt.Fprintf(&b, "\ndurable ÷ memory CPU-s per page: %.2f\n", pick(d, cpuMSPerPage)/pick(m, cpuMSPerPage))
		fmt.Fprintf(&b, "\ndurable ÷ memory pages/s: %.2f\n", pick(d, pps)/pick(m, pps))
	}
	if d, m := res["base-durable"], res["base-memory"]; len(d) > 0 && len(m) > 0 {
		fmt.Fprintf(&b, "\nthe earlier build (crawl-base): durable ÷ memory pages/s: %.2f\n", pick(d, pps)/pick(m, pps))
	}
	return b.String()
}

// warcReport renders the warc run's table: crawlkit on a DataDir with and
// without WARC files; it ends with WARC's share of the crawl's CPU.
func warcReport(s runSpec, names []string, info harness.WebInfo, res map[string][]harness.Result, reps int) string {
	var b strings.Builder
	stateTable(&b, s, info, "crawlkit with Config.DataDir, writing WARC files with a CDXJ index (warc-on) or none (warc-off)", names, res, reps)
	if on, off := res["warc-on"], res["warc-off"]; len(on) > 0 && len(off) > 0 {
		writeWARCShare(&b, on, off)
	}
	return b.String()
}

// writeWARCShare writes WARC's share of the crawl's CPU: the CPU per page
// that writing the archive adds, over the CPU per page with it.
func writeWARCShare(b *strings.Builder, on, off []harness.Result) {
	with, without := pick(on, cpuMSPerPage), pick(off, cpuMSPerPage)
	fmt.Fprintf(b, "\nWARC's share of the crawl's CPU: %.0f %% (%.2f of %.2f CPU ms per page)\n", 100*(with-without)/with, with-without, with)
}

// stateTable writes the heading, the web, what was compared and the table
// of durableReport and warcReport.
func stateTable(b *strings.Builder, s runSpec, info harness.WebInfo, compared string, names []string, res map[string][]harness.Result, reps int) {
	fmt.Fprintf(b, "\n#### %s\n\n%s\n\n", s.Title, describeWeb(s, info))
	fmt.Fprintf(b, "%s, %s workers, medians of %d runs alternating.\n\n", compared, flagValue(s.Crawl, "-workers"), reps)
	b.WriteString("| state | pages/s (runs) | median pages/s | CPU ms / page (runs) | median CPU ms / page | peak RSS MB | pages | elapsed s | coverage | exact dup | spelling dup | robots viol. | politeness viol. |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	pps := func(r harness.Result) float64 { return r.PagesPerS }
	for _, c := range names {
		rs := res[c]
		fmt.Fprintf(b, "| %s | %s | %.1f | %s | %.1f | %.0f | %.0f | %.1f | %.3f | %d | %d | %d | %d |\n",
			c, spreadF(rs, pps, "%.1f"), pick(rs, pps), spreadF(rs, cpuMSPerPage, "%.1f"), pick(rs, cpuMSPerPage),
			pick(rs, func(r harness.Result) float64 { return r.PeakRSSMB }),
			pick(rs, func(r harness.Result) float64 { return float64(r.Pages) }),
			pick(rs, func(r harness.Result) float64 { return r.ElapsedS }), minCov(rs),
			maxOf(rs, func(r harness.Result) int { return r.ExactDup }),
			maxOf(rs, func(r harness.Result) int { return r.SpellingDup }),
			maxOf(rs, func(r harness.Result) int { return r.RobotsViol }),
			maxOf(rs, func(r harness.Result) int { return r.PolitenessVio }))
	}
}

// describeWeb says what web s ran on: the realistic web, or benchweb.
func describeWeb(s runSpec, info harness.WebInfo) string {
	if s.Server == "realisticweb" {
		return webLine(info)
	}
	return fmt.Sprintf("cmd/benchweb: %d hosts (%d crawlable), ground truth %d unique pages within depth %d, "+
		"plain HTTP on loopback, robots.txt with Crawl-delay %s on some hosts, spider traps.",
		info.Hosts, info.CrawlableHosts, info.TruthUnique, info.MaxDepth, flagValue(s.Web, "-crawl-delay"))
}

// flagValue is the value of the last flag name in args, or "?".
func flagValue(args []string, name string) string {
	v := "?"
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			v = args[i+1]
		}
	}
	return v
}

// shippedReport renders the shipped run's table: colly against crawlkit as
// the quickstart configures it; it ends with the shipped ÷ colly pages/s
// line.
func shippedReport(s runSpec, names []string, info harness.WebInfo, res map[string][]harness.Result, reps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n#### %s\n\n%s Medians of %d runs alternating; `-delay 1ms` for both. "+
		"Pages are the server's count of page requests; truth pages/s counts only the unique ground-truth pages fetched.\n\n",
		s.Title, describeWeb(s, info), reps)
	b.WriteString("| crawler | pages/s (runs) | median pages/s | truth pages/s | CPU ms / page | peak RSS MB | pages | elapsed s | coverage | exact dup | robots viol. | politeness viol. |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	pps := func(r harness.Result) float64 { return r.PagesPerS }
	tps := func(r harness.Result) float64 { return float64(r.Server.Covered) / r.ElapsedS }
	for _, c := range names {
		rs := res[c]
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %.2f | %.0f | %.0f | %.1f | %.3f | %d | %d | %d |\n",
			c, spreadF(rs, pps, "%.1f"), pick(rs, pps), pick(rs, tps), pick(rs, cpuMSPerPage),
			pick(rs, func(r harness.Result) float64 { return r.PeakRSSMB }),
			pick(rs, func(r harness.Result) float64 { return float64(r.Pages) }),
			pick(rs, func(r harness.Result) float64 { return r.ElapsedS }), minCov(rs),
			maxOf(rs, func(r harness.Result) int { return r.ExactDup }),
			maxOf(rs, func(r harness.Result) int { return r.RobotsViol }),
			maxOf(rs, func(r harness.Result) int { return r.PolitenessVio }))
	}
	if k, c := res["crawlkit-shipped"], res["colly"]; len(k) > 0 && len(c) > 0 {
		fmt.Fprintf(&b, "\ncrawlkit as shipped ÷ colly truth pages/s: %.2f\n", pick(k, tps)/pick(c, tps))
		fmt.Fprintf(&b, "\ncrawlkit as shipped ÷ colly pages/s: %.2f\n", pick(k, pps)/pick(c, pps))
	}
	if on, off := res["crawlkit-shipped"], res["crawlkit-shipped-nowarc"]; len(on) > 0 && len(off) > 0 {
		writeWARCShare(&b, on, off)
	}
	return b.String()
}

// writeMarked replaces the text between "<!-- name:begin -->" and
// "<!-- name:end -->" in path.
func writeMarked(path, name, text string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(old)
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return errors.New(path + " has no " + begin + " … " + end + " section")
	}
	s = s[:i+len(begin)] + "\n" + text + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// header is the machine and command line of a realistic or durable section.
func header(command, load0, load1 string, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s, %d cores (shared with other jobs). Load average at start %s, at end %s. The command took %s.\n\n",
		cpuModel(), numCPU(), load0, load1, took.Round(time.Second))
	if command != "" {
		fmt.Fprintf(&b, "Command (from the repository root): `%s`\n", command)
	}
	return b.String()
}
