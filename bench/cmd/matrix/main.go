// Command matrix runs the end-to-end benchmark: for each web size it starts
// cmd/benchweb in its own process, runs every crawler command against it
// several times, alternating which crawler goes first, and writes the
// medians and ratios as a Markdown section into BENCHMARKS.md (between the
// markers "<!-- e2e:begin -->" and "<!-- e2e:end -->") and every raw JSON
// result line into a file.
//
// bench/run.sh builds the commands and runs it; see BENCHMARKS.md for the
// exact command.
//
// The runs:
//
//	small   200 hosts × 50 pages, depth ≤ 5, no cap
//	large   1 000 hosts × 100 pages, depth ≤ 5, capped at 60 000 pages
//	polite  5 000 hosts × 20 pages, 1 request/s per host (every host asks
//	        for it with min gap and Crawl-delay), throughput measured over a
//	        window shorter than the 20 s that 20 pages take at that rate, so
//	        no crawlable host can run out of work within it
//	polite1k the same at 1 000 hosts, whose politeness ceiling (about 830
//	        pages/s) is within what this machine can serve and crawl, so it
//	        shows whether a crawler's scheduling reaches the ceiling
//
// In the two throughput runs, hosts with a Crawl-delay ask for 50 ms and the
// crawlers are told to wait 1 ms between requests to a host, so the crawl is
// bound by the machine, not by politeness; the server still counts
// concurrent requests to one host and requests inside a Crawl-delay as
// politeness violations.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

// runSpec describes one web and the settings of the crawls on it.
type runSpec struct {
	Name     string
	Title    string
	Web      []string // benchweb flags
	Crawl    []string // flags for every crawler command
	PerCrawl map[string][]string
	Polite   bool
	// Server is the web's command (default benchweb). Kind is "" for the
	// tables of the e2e section, "realistic" or "durable" for theirs
	// (realistic.go). Variants, if set, replaces the crawler list: each
	// variant is a crawler command run with extra flags.
	Server   string
	Kind     string
	Variants []variant
}

// shippedSpec is a run of colly against crawlkit as the quickstart ships
// it, with and without WARC, on the 200×50 web with the given Crawl-delay.
func shippedSpec(name, titled, crawlDelay string) runSpec {
	shipped := []string{"-workers", fmt.Sprint(crawlkit.DefaultWorkers), "-data-dir", "{tmpdir}"}
	return runSpec{
		Name:  name,
		Title: "200 hosts × 50 pages" + titled + ", crawlkit configured as the quickstart ships (state in a DataDir, WARC on, DefaultWorkers) against colly",
		Kind:  "shipped",
		Web:   []string{"-hosts", "200", "-pages", "50", "-crawl-delay", crawlDelay, "-max-depth", "5"},
		Crawl: []string{"-max-depth", "5", "-delay", "1ms", "-workers", "32", "-timeout", "5m"},
		Variants: []variant{
			{Name: "colly", Cmd: "colly"},
			{Name: "crawlkit-shipped", Cmd: "crawlkit", Args: append(slices.Clip(shipped), "-warc-dir", "{tmpdir}")},
			{Name: "crawlkit-shipped-nowarc", Cmd: "crawlkit", Args: shipped},
		},
	}
}

func specs(politeWindow, politeTimeout time.Duration) map[string]runSpec {
	return map[string]runSpec{
		"small": {
			Name: "small", Title: "200 hosts × 50 pages",
			Web:   []string{"-hosts", "200", "-pages", "50", "-crawl-delay", "50ms", "-max-depth", "5"},
			Crawl: []string{"-max-depth", "5", "-delay", "1ms", "-workers", "32", "-timeout", "5m"},
		},
		"shipped": shippedSpec("shipped", "", "50ms"),
		// shipped-nodelay: the shipped run on a web whose robots.txt
		// Crawl-delay is the crawlers' own -delay (1 ms), a throughput web
		// where no host asks for more spacing than colly gives every host.
		"shipped-nodelay": shippedSpec("shipped-nodelay", ", Crawl-delay 1 ms", "1ms"),
		// durable-before: crawlkit in memory and on a DataDir, now and as
		// an older build (crawl-base in -bin, built by the caller from the
		// commit to compare with), on the 200×50 web.
		"durable-before": {
			Name: "durable-before", Title: "200 hosts × 50 pages, crawlkit in memory and on disk, this build and an earlier one (crawl-base)",
			Kind:  "durable",
			Web:   []string{"-hosts", "200", "-pages", "50", "-crawl-delay", "50ms", "-max-depth", "5"},
			Crawl: []string{"-max-depth", "5", "-delay", "1ms", "-workers", "32", "-timeout", "5m"},
			Variants: []variant{
				{Name: "base-memory", Cmd: "base"},
				{Name: "base-durable", Cmd: "base", Args: []string{"-data-dir", "{tmpdir}"}},
				{Name: "memory", Cmd: "crawlkit"},
				{Name: "durable", Cmd: "crawlkit", Args: []string{"-data-dir", "{tmpdir}"}},
			},
		},
		"large": {
			Name: "large", Title: "1 000 hosts × 100 pages, capped at 60 000 pages",
			Web:   []string{"-hosts", "1000", "-pages", "100", "-crawl-delay", "50ms", "-max-depth", "5"},
			Crawl: []string{"-max-depth", "5", "-delay", "1ms", "-workers", "32", "-max-pages", "60000", "-timeout", "10m"},
		},
		"polite1k": {
			Name: "polite1k", Title: "1 000 hosts × 20 pages at 1 request/s per host",
			Web: []string{"-hosts", "1000", "-pages", "20", "-crawl-delay", "1s", "-min-gap", "1s", "-max-depth", "5"},
			Crawl: []string{"-max-depth", "5", "-delay", "1s", "-workers", "256",
				"-window", politeWindow.String(), "-timeout", politeTimeout.String()},
			PerCrawl: map[string][]string{"colly": {"-per-host"}},
			Polite:   true,
		},
		"polite": {
			Name: "polite", Title: "5 000 hosts × 20 pages at 1 request/s per host",
			Web: []string{"-hosts", "5000", "-pages", "20", "-crawl-delay", "1s", "-min-gap", "1s", "-max-depth", "5"},
			Crawl: []string{"-max-depth", "5", "-delay", "1s", "-workers", "256",
				"-window", politeWindow.String(), "-timeout", politeTimeout.String()},
			PerCrawl: map[string][]string{"colly": {"-per-host"}},
			Polite:   true,
		},
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		os.Exit(1)
	}
}

func run() error {
	exe, _ := os.Executable()
	bin := flag.String("bin", filepath.Dir(exe), "directory holding benchweb and the crawl-* commands")
	reps := flag.Int("reps", 3, "repetitions of every crawler on every web")
	runsFlag := flag.String("runs", "small,large,polite1k,polite", "runs to do, in order")
	politeReps := flag.Int("polite-reps", 2, "repetitions of every crawler on the politeness webs")
	crawlersFlag := flag.String("crawlers", "crawlkit,colly,gocrawl", "crawlers; the first is the one the ratios are for")
	out := flag.String("out", "results/e2e.jsonl", "file the raw result lines are written to")
	md := flag.String("md", "", "BENCHMARKS.md to write the tables into (between the e2e markers); empty: print them")
	window := flag.Duration("polite-window", 15*time.Second, "throughput window of the politeness run")
	politeTimeout := flag.Duration("polite-timeout", 60*time.Second, "time bound of a politeness crawl")
	command := flag.String("command", "", "the command line to print with the tables")
	size := flag.String("size", "small", "size of the realistic and durable webs: small (500 hosts), medium (1 000), large (2 000)")
	from := flag.String("from", "", "comma-separated result files of earlier runs: render their tables instead of crawling")
	flag.Parse()

	crawlers := strings.Split(*crawlersFlag, ",")
	all := specs(*window, *politeTimeout)
	more, err := realisticSpecs(*size)
	if err != nil {
		return err
	}
	for k, v := range more {
		all[k] = v
	}
	var runs []runSpec
	for _, name := range strings.Split(*runsFlag, ",") {
		s, ok := all[name]
		if !ok {
			return fmt.Errorf("unknown run %q", name)
		}
		runs = append(runs, s)
	}
	loadStart := loadAvg()
	began := time.Now()
	results := map[string]map[string][]harness.Result{}
	infos := map[string]harness.WebInfo{}
	if *from != "" {
		return render(*bin, *md, runs, crawlers, strings.Split(*from, ","), func(infos map[string]harness.WebInfo, results map[string]map[string][]harness.Result, reps, politeReps int) string {
			return report(runs, crawlers, infos, results, reps, politeReps, *window, *politeTimeout, *command, "", "", 0)
		})
	}
	var classic []runSpec
	for _, s := range runs {
		if s.Kind == "" {
			classic = append(classic, s)
		}
	}
	if len(classic) == 0 && *out == "results/e2e.jsonl" {
		// Keep the raw lines of the classic matrix.
		*out = "results/" + strings.ReplaceAll(*runsFlag, ",", "-") + ".jsonl"
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, s := range runs {
		n := *reps
		if s.Polite {
			n = *politeReps
		}
		info, res, err := runOne(*bin, s, crawlers, n, f)
		if err != nil {
			return fmt.Errorf("run %s: %w", s.Name, err)
		}
		infos[s.Name] = info
		results[s.Name] = res
	}
	loadEnd, took := loadAvg(), time.Since(began)
	for _, s := range runs {
		if s.Kind == "" {
			continue
		}
		names := []string{}
		for _, v := range variantsOf(s, crawlers) {
			names = append(names, v.Name)
		}
		text := header(*command, loadStart, loadEnd, took)
		switch s.Kind {
		case "realistic":
			text += realisticReport(s, names, infos[s.Name], results[s.Name], *reps)
		case "shipped":
			text += shippedReport(s, names, infos[s.Name], results[s.Name], *reps)
		case "warc":
			text += warcReport(s, names, infos[s.Name], results[s.Name], *reps)
		default:
			text += durableReport(s, names, infos[s.Name], results[s.Name], *reps)
		}
		fmt.Print(text)
		if *md != "" {
			if err := writeMarked(*md, s.Name, text); err != nil {
				return err
			}
		}
	}
	if len(classic) == 0 {
		return nil
	}
	text := report(classic, crawlers, infos, results, *reps, *politeReps, *window, *politeTimeout, *command,
		loadStart, loadEnd, took)
	if *md == "" {
		fmt.Print(text)
		return nil
	}
	return writeSection(*md, text)
}

func numCPU() int { return runtime.NumCPU() }

// startWeb starts benchweb for s and returns its description and a function
// that stops it.
func startWeb(bin string, s runSpec) (harness.WebInfo, func(), error) {
	server := s.Server
	if server == "" {
		server = "benchweb"
	}
	web := exec.Command(filepath.Join(bin, server), s.Web...)
	stdin, err := web.StdinPipe()
	if err != nil {
		return harness.WebInfo{}, nil, err
	}
	stdout, err := web.StdoutPipe()
	if err != nil {
		return harness.WebInfo{}, nil, err
	}
	web.Stderr = os.Stderr
	if err := web.Start(); err != nil {
		return harness.WebInfo{}, nil, err
	}
	stop := func() {
		stdin.Close() // benchweb exits when its standard input closes
		_ = web.Wait()
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		stop()
		return harness.WebInfo{}, nil, fmt.Errorf("%s: %w", server, err)
	}
	var info harness.WebInfo
	if err := json.Unmarshal(line, &info); err != nil {
		stop()
		return info, nil, fmt.Errorf("%s said %q: %w", server, line, err)
	}
	return info, stop, nil
}

// runOne starts the web of s and runs every crawler reps times on it.
func runOne(bin string, s runSpec, crawlers []string, reps int, raw io.Writer) (harness.WebInfo, map[string][]harness.Result, error) {
	info, stop, err := startWeb(bin, s)
	if err != nil {
		return info, nil, err
	}
	defer stop()
	fmt.Fprintf(os.Stderr, "== %s: %s (web %s, %d crawlable hosts, %d unique truth pages)\n",
		s.Name, s.Title, info.Web, info.CrawlableHosts, info.TruthUnique)

	res := map[string][]harness.Result{}
	vs := variantsOf(s, crawlers)
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	for r := 0; r < reps; r++ {
		// Rotate the order so no crawler always runs first (on a cold
		// server) or last.
		order := append(slices.Clone(names[r%len(names):]), names[:r%len(names)]...)
		for _, c := range order {
			v := vs[slices.Index(names, c)]
			args := append([]string{"-web", info.Web, "-control", info.Control, "-label", s.Name}, s.Crawl...)
			if info.CAFile != "" {
				args = append(args, "-ca", info.CAFile)
			}
			args = append(args, s.PerCrawl[v.Cmd]...)
			extra, cleanup, err := v.args()
			if err != nil {
				return info, res, err
			}
			args = append(args, extra...)
			var buf bytes.Buffer
			cmd := exec.Command(filepath.Join(bin, "crawl-"+v.Cmd), args...)
			cmd.Stdout = &buf
			cmd.Stderr = os.Stderr
			err = cmd.Run()
			cleanup()
			if err != nil {
				return info, res, fmt.Errorf("crawl-%s: %w", c, err)
			}
			var one harness.Result
			if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &one); err != nil {
				return info, res, fmt.Errorf("crawl-%s printed %q: %w", c, buf.String(), err)
			}
			one.Label = s.Name
			one.Crawler = c
			line, _ := json.Marshal(one)
			buf.Reset()
			buf.Write(line)
			res[c] = append(res[c], one)
			if _, err := raw.Write(append(bytes.TrimSpace(buf.Bytes()), '\n')); err != nil {
				return info, res, err
			}
			fmt.Fprintf(os.Stderr, "   rep %d %-8s %7d pages %6.1f s %7.0f pages/s cpu %.2f s/1000 rss %.0f MB cov %.3f dup %d/%d robots %d polite %d traps %d %s\n",
				r+1, c, one.Pages, one.ElapsedS, one.PagesPerS, one.CPUPer1000, one.PeakRSSMB, one.Coverage,
				one.ExactDup, one.SpellingDup, one.RobotsViol, one.PolitenessVio, one.TrapFetches, one.Error)
		}
	}
	return info, res, nil
}

// render writes the tables of earlier results (raw JSON lines from files),
// starting each run's web only to learn its description.
func render(bin, md string, runs []runSpec, crawlers []string, files []string,
	report func(map[string]harness.WebInfo, map[string]map[string][]harness.Result, int, int) string) error {
	results := map[string]map[string][]harness.Result{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var r harness.Result
			if err := json.Unmarshal(line, &r); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if results[r.Label] == nil {
				results[r.Label] = map[string][]harness.Result{}
			}
			results[r.Label][r.Crawler] = append(results[r.Label][r.Crawler], r)
		}
	}
	infos := map[string]harness.WebInfo{}
	reps, politeReps := 0, 0
	for _, s := range runs {
		info, stop, err := startWeb(bin, s)
		if err != nil {
			return err
		}
		stop()
		infos[s.Name] = info
		for _, c := range crawlers {
			if len(results[s.Name][c]) == 0 {
				return fmt.Errorf("no results for %s on %s", c, s.Name)
			}
			if s.Polite {
				politeReps = max(politeReps, len(results[s.Name][c]))
			} else {
				reps = max(reps, len(results[s.Name][c]))
			}
		}
	}
	text := report(infos, results, reps, politeReps)
	if md == "" {
		fmt.Print(text)
		return nil
	}
	return writeSection(md, text)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pick(rs []harness.Result, f func(harness.Result) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return median(xs)
}

func spread(rs []harness.Result, f func(harness.Result) float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.0f", f(r))
	}
	return strings.Join(parts, ", ")
}

func maxOf(rs []harness.Result, f func(harness.Result) int) int {
	m := 0
	for _, r := range rs {
		m = max(m, f(r))
	}
	return m
}

func minCov(rs []harness.Result) float64 {
	m := 1.0
	for _, r := range rs {
		m = min(m, r.Coverage)
	}
	return m
}

// report renders the Markdown tables.
func report(runs []runSpec, crawlers []string, infos map[string]harness.WebInfo, results map[string]map[string][]harness.Result,
	reps, politeReps int, window, politeTimeout time.Duration, command, load0, load1 string, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s, %d cores (shared with other jobs), %s/%s, %s.", cpuModel(), runtime.NumCPU(),
		runtime.GOOS, runtime.GOARCH, runtime.Version())
	if load0 != "" {
		fmt.Fprintf(&b, " Load average at start %s, at end %s. Matrix took %s.", load0, load1, took.Round(time.Second))
	}
	b.WriteString("\n\n")
	if command != "" {
		fmt.Fprintf(&b, "Command (from the repository root): `%s`\n\n", command)
	}
	fmt.Fprintf(&b, "Medians of %d repetitions per crawler (%d on the politeness webs) (crawlers alternating, a new process each); "+
		"the server (cmd/benchweb) runs in its own process. Violations, duplicates and trap fetches are the worst repetition; "+
		"coverage the lowest.\n", reps, politeReps)
	ref := crawlers[0]
	for _, s := range runs {
		info := infos[s.Name]
		res := results[s.Name]
		fmt.Fprintf(&b, "\n### %s\n\n", s.Title)
		fmt.Fprintf(&b, "%d hosts (%d crawlable), ground truth %d unique pages within depth %d. ",
			info.Hosts, info.CrawlableHosts, info.TruthUnique, info.MaxDepth)
		if s.Polite {
			ceiling := float64(info.CrawlableHosts)
			fmt.Fprintf(&b, "Politeness ceiling: %d crawlable hosts × 1 request/s = %.0f pages/s. "+
				"Throughput is the server's page count %s after the start divided by %s (20 pages at 1/s take a host ≥ 19 s, "+
				"so every crawlable host has work for the whole window and the ceiling holds throughout); "+
				"each crawl is stopped after %s.\n\n", info.CrawlableHosts, ceiling, window, window, politeTimeout)
			fmt.Fprintf(&b, "| crawler | pages/s in window (runs) | median | %% of ceiling | pages (whole crawl) | elapsed s | CPU s / 1 000 pages | peak RSS MB | coverage | exact dup | spelling dup | robots viol. | politeness viol. | trap fetches |\n")
			fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
			for _, c := range crawlers {
				rs := res[c]
				wr := func(r harness.Result) float64 {
					if r.WindowS == 0 {
						return 0
					}
					return float64(r.WindowPages) / r.WindowS
				}
				m := pick(rs, wr)
				fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f %% | %.0f | %.1f | %.3f | %.0f | %.3f | %d | %d | %d | %d | %d |\n",
					c, spread(rs, wr), m, 100*m/ceiling, pick(rs, func(r harness.Result) float64 { return float64(r.Pages) }),
					pick(rs, func(r harness.Result) float64 { return r.ElapsedS }),
					pick(rs, func(r harness.Result) float64 { return r.CPUPer1000 }),
					pick(rs, func(r harness.Result) float64 { return r.PeakRSSMB }), minCov(rs),
					maxOf(rs, func(r harness.Result) int { return r.ExactDup }),
					maxOf(rs, func(r harness.Result) int { return r.SpellingDup }),
					maxOf(rs, func(r harness.Result) int { return r.RobotsViol }),
					maxOf(rs, func(r harness.Result) int { return r.PolitenessVio }),
					maxOf(rs, func(r harness.Result) int { return r.TrapFetches }))
			}
			continue
		}
		b.WriteString("Pages are the server's count of page requests (all but robots.txt); truth pages/s counts only the unique pages of the ground truth the crawl fetched.\n\n")
		fmt.Fprintf(&b, "| crawler | pages/s (runs) | median pages/s | %s ÷ crawler | pages | elapsed s | CPU s / 1 000 pages | peak RSS MB | %s RSS ÷ crawler RSS | truth pages/s | coverage | exact dup | spelling dup | robots viol. | politeness viol. | trap fetches |\n", ref, ref)
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		pps := func(r harness.Result) float64 { return r.PagesPerS }
		rss := func(r harness.Result) float64 { return r.PeakRSSMB }
		refPPS, refRSS := pick(res[ref], pps), pick(res[ref], rss)
		for _, c := range crawlers {
			rs := res[c]
			m, mr := pick(rs, pps), pick(rs, rss)
			fmt.Fprintf(&b, "| %s | %s | %.0f | %.2f | %.0f | %.1f | %.3f | %.0f | %.2f | %.0f | %.3f | %d | %d | %d | %d | %d |\n",
				c, spread(rs, pps), m, refPPS/m, pick(rs, func(r harness.Result) float64 { return float64(r.Pages) }),
				pick(rs, func(r harness.Result) float64 { return r.ElapsedS }),
				pick(rs, func(r harness.Result) float64 { return r.CPUPer1000 }),
				mr, refRSS/mr, pick(rs, func(r harness.Result) float64 { return float64(r.Server.Covered) / r.ElapsedS }), minCov(rs),
				maxOf(rs, func(r harness.Result) int { return r.ExactDup }),
				maxOf(rs, func(r harness.Result) int { return r.SpellingDup }),
				maxOf(rs, func(r harness.Result) int { return r.RobotsViol }),
				maxOf(rs, func(r harness.Result) int { return r.PolitenessVio }),
				maxOf(rs, func(r harness.Result) int { return r.TrapFetches }))
		}
	}
	return b.String()
}

const beginMark, endMark = "<!-- e2e:begin -->", "<!-- e2e:end -->"

// writeSection replaces the text between the markers in path.
func writeSection(path, text string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(old)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		return errors.New(path + " has no " + beginMark + " … " + endMark + " section")
	}
	s = s[:i+len(beginMark)] + "\n" + text + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}
