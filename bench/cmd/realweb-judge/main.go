// Command realweb-judge judges the crawls of the bench/realweb test bed from
// the web server's side: it reads Apache's per-vhost access logs and the
// robots.txt each vhost served, and reports per host what wget (the
// reference) and crawlkit fetched.
//
//	realweb-judge -hosts hosts.txt -logs LOGDIR -sites SITEDIR [-out DIR]
//
// hosts.txt has one line per vhost: "NAME PORT LABEL" (LABEL, the Debian
// package, is only printed). LOGDIR/NAME.access.log is the vhost's access
// log in the format run.sh configures:
//
//	%v %{local}p %{sec}t %D "%r" %>s %B "%{Content-Type}o" "%{User-Agent}i"
//
// and SITEDIR/NAME/robots.txt, if present, is the robots.txt the vhost
// served. Requests are told apart by User-Agent: "Wget/..." is the
// reference, one whose product token is -bot (default realwebbot) is
// crawlkit.
//
// A page is a distinct request target answered 200 with a text/html
// Content-Type. Coverage is |crawlkit ∩ wget| / |wget|. A robots violation
// is a request (robots.txt itself excluded) for a path the robots.txt group
// of that client disallows. A duplicate fetch is a request for a target the
// same client had requested before on that host (robots.txt excluded).
// With -out, the pages wget got and crawlkit did not are written to
// DIR/NAME.missed.txt, and the reverse to DIR/NAME.extra.txt.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

type client int

const (
	wget client = iota
	crawlkit
	other
	nClients
)

// side is what one client did on one host.
type side struct {
	requests   int
	robotsReqs int
	pages      map[string]bool // normalized targets answered 200 text/html
	seen       map[string]int  // normalized target -> requests (robots.txt excluded)
	status     map[int]int
	violations int
	violURIs   map[string]bool
	dups       int
	first      int64 // unix seconds of the first and last request
	last       int64
}

func newSide() *side {
	return &side{pages: map[string]bool{}, seen: map[string]int{}, status: map[int]int{}, violURIs: map[string]bool{}}
}

type host struct {
	name, port, label string
	rules             map[client]*rules
	sides             [nClients]*side
	badLines          int
}

func main() {
	hostsFile := flag.String("hosts", "", "file of 'NAME PORT LABEL' lines")
	logDir := flag.String("logs", "", "directory of NAME.access.log files")
	siteDir := flag.String("sites", "", "directory of NAME/robots.txt files")
	outDir := flag.String("out", "", "if set, write NAME.missed.txt and NAME.extra.txt here")
	bot := flag.String("bot", "realwebbot", "crawlkit's User-Agent product token")
	flag.Parse()
	if *hostsFile == "" || *logDir == "" || *siteDir == "" {
		flag.Usage()
		os.Exit(2)
	}
	hosts, err := readHosts(*hostsFile)
	if err != nil {
		fatal(err)
	}
	for _, h := range hosts {
		h.rules = map[client]*rules{}
		robotsTxt, err := os.ReadFile(filepath.Join(*siteDir, h.name, "robots.txt"))
		if err != nil && !os.IsNotExist(err) {
			fatal(err)
		}
		h.rules[wget] = parseRobots(string(robotsTxt), "wget")
		h.rules[crawlkit] = parseRobots(string(robotsTxt), *bot)
		h.rules[other] = parseRobots(string(robotsTxt), "*")
		for c := range h.sides {
			h.sides[c] = newSide()
		}
		f, err := os.Open(filepath.Join(*logDir, h.name+".access.log"))
		if err != nil {
			fatal(err)
		}
		err = h.read(f, *bot)
		f.Close()
		if err != nil {
			fatal(err)
		}
	}
	report(os.Stdout, hosts, *outDir)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "realweb-judge:", err)
	os.Exit(1)
}

func readHosts(name string) ([]*host, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var hs []*host
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s: bad line %q", name, line)
		}
		h := &host{name: f[0], port: f[1]}
		if len(f) > 2 {
			h.label = f[2]
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// entry is one access log line.
type entry struct {
	sec    int64
	method string
	target string
	status int
	ctype  string
	ua     string
}

func (h *host) read(r io.Reader, bot string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		e, ok := parseLine(sc.Text())
		if !ok {
			h.badLines++
			continue
		}
		c := classify(e.ua, bot)
		s := h.sides[c]
		s.requests++
		if s.first == 0 || e.sec < s.first {
			s.first = e.sec
		}
		if e.sec > s.last {
			s.last = e.sec
		}
		s.status[e.status]++
		key := normTarget(e.target)
		path := key
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if path == "/robots.txt" {
			s.robotsReqs++
			continue
		}
		if s.seen[key] > 0 {
			s.dups++
		}
		s.seen[key]++
		if !h.rules[c].allowed(key) {
			s.violations++
			s.violURIs[key] = true
		}
		if e.status == 200 && e.method == "GET" && isHTML(e.ctype) {
			s.pages[key] = true
		}
	}
	return sc.Err()
}

func classify(ua, bot string) client {
	switch {
	case strings.HasPrefix(ua, "Wget/"):
		return wget
	case strings.HasPrefix(strings.ToLower(ua), strings.ToLower(bot)+"/"), strings.EqualFold(ua, bot):
		return crawlkit
	}
	return other
}

func isHTML(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(ct))
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = strings.TrimSpace(ct[:i])
	}
	return ct == "text/html" || ct == "application/xhtml+xml"
}

// parseLine parses
//
//	%v %{local}p %{sec}t %D "%r" %>s %B "%{Content-Type}o" "%{User-Agent}i"
func parseLine(line string) (entry, bool) {
	var e entry
	fields, ok := splitLog(line)
	if !ok || len(fields) != 9 {
		return e, false
	}
	var err error
	if e.sec, err = strconv.ParseInt(fields[2], 10, 64); err != nil {
		return e, false
	}
	req := strings.Fields(fields[4])
	if len(req) < 2 {
		return e, false
	}
	e.method, e.target = req[0], req[1]
	if e.status, err = strconv.Atoi(fields[5]); err != nil {
		return e, false
	}
	e.ctype = fields[7]
	if e.ctype == "-" {
		e.ctype = ""
	}
	e.ua = fields[8]
	return e, true
}

// splitLog splits a log line on spaces, keeping "quoted fields" (with
// Apache's \" and \\ escapes) whole.
func splitLog(line string) ([]string, bool) {
	var out []string
	for i := 0; i < len(line); {
		switch {
		case line[i] == ' ':
			i++
		case line[i] == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				b.WriteByte(line[j])
			}
			if j >= len(line) {
				return nil, false
			}
			out = append(out, b.String())
			i = j + 1
		default:
			j := strings.IndexByte(line[i:], ' ')
			if j < 0 {
				j = len(line) - i
			}
			out = append(out, line[i:i+j])
			i += j
		}
	}
	return out, true
}

// normTarget makes two spellings of one request target compare equal:
// percent-escapes of unreserved characters are decoded, the others' hex
// digits upper-cased. Nothing else is changed ("/a/" and "/a/index.html"
// stay two targets).
func normTarget(t string) string {
	if !strings.Contains(t, "%") {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '%' && i+2 < len(t) && ishex(t[i+1]) && ishex(t[i+2]) {
			v, _ := strconv.ParseUint(t[i+1:i+3], 16, 8)
			c := byte(v)
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
				b.WriteByte(c)
			} else {
				b.WriteString(strings.ToUpper(t[i : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(t[i])
	}
	return b.String()
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// rules is one robots.txt group: Allow and Disallow path prefixes, the
// longest match winning and Allow winning a tie (RFC 9309 §2.2.2). The
// test bed's robots.txt files use plain prefixes; '*' and '$' are
// supported all the same.
type rules struct {
	allow, disallow []string
}

// parseRobots returns the group of robots.txt that applies to the product
// token agent: the groups naming it, else the '*' groups.
func parseRobots(txt, agent string) *rules {
	type group struct {
		agents []string
		r      rules
	}
	var groups []*group
	var cur *group
	lastWasAgent := false
	for _, line := range strings.Split(txt, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		switch k {
		case "user-agent":
			if cur == nil || !lastWasAgent {
				cur = &group{}
				groups = append(groups, cur)
			}
			cur.agents = append(cur.agents, strings.ToLower(v))
			lastWasAgent = true
		case "allow", "disallow":
			lastWasAgent = false
			if cur == nil || v == "" {
				continue
			}
			if k == "allow" {
				cur.r.allow = append(cur.r.allow, v)
			} else {
				cur.r.disallow = append(cur.r.disallow, v)
			}
		default:
			lastWasAgent = false
		}
	}
	pick := func(name string) *rules {
		var r *rules
		for _, g := range groups {
			for _, a := range g.agents {
				if a == name {
					if r == nil {
						r = &rules{}
					}
					r.allow = append(r.allow, g.r.allow...)
					r.disallow = append(r.disallow, g.r.disallow...)
				}
			}
		}
		return r
	}
	if r := pick(strings.ToLower(agent)); r != nil {
		return r
	}
	if r := pick("*"); r != nil {
		return r
	}
	return &rules{}
}

func (r *rules) allowed(target string) bool {
	best, allow := -1, true
	for _, p := range r.disallow {
		if n := matchLen(p, target); n > best {
			best, allow = n, false
		}
	}
	for _, p := range r.allow {
		if n := matchLen(p, target); n >= best && n >= 0 {
			best, allow = n, true
		}
	}
	return allow
}

// matchLen returns the length of pattern if it matches target's start,
// else -1.
func matchLen(pattern, target string) int {
	if m(pattern, target) {
		return len(pattern)
	}
	return -1
}

func m(p, t string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := 0; i <= len(t); i++ {
				if m(p[1:], t[i:]) {
					return true
				}
			}
			return false
		case '$':
			if len(p) == 1 {
				return len(t) == 0
			}
		}
		if len(t) == 0 || t[0] != p[0] {
			return false
		}
		p, t = p[1:], t[1:]
	}
	return true
}

func report(w io.Writer, hosts []*host, outDir string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "host\tport\tpackage\twget pages\tcrawlkit pages\tboth\tcoverage\tcrawlkit only\tck requests\tck non-200\tck robots viol.\tck dup fetches\twget robots viol.\twget dup fetches\twget s\tck s\t")
	var tw_, tc, tb, tco, treq, tnon, tv, td, twv, twd int
	type missed struct {
		host   string
		prefix map[string]int
	}
	var misses []missed
	for _, h := range hosts {
		wg, ck := h.sides[wget], h.sides[crawlkit]
		both := 0
		var miss, extra []string
		for p := range wg.pages {
			if ck.pages[p] {
				both++
			} else {
				miss = append(miss, p)
			}
		}
		for p := range ck.pages {
			if !wg.pages[p] {
				extra = append(extra, p)
			}
		}
		sort.Strings(miss)
		sort.Strings(extra)
		non200 := ck.requests - ck.status[200]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n",
			h.name, h.port, h.label, len(wg.pages), len(ck.pages), both, pct(both, len(wg.pages)), len(extra),
			ck.requests, non200, ck.violations, ck.dups, wg.violations, wg.dups, span(wg), span(ck))
		tw_ += len(wg.pages)
		tc += len(ck.pages)
		tb += both
		tco += len(extra)
		treq += ck.requests
		tnon += non200
		tv += ck.violations
		td += ck.dups
		twv += wg.violations
		twd += wg.dups
		if len(miss) > 0 {
			pm := map[string]int{}
			for _, p := range miss {
				pm[prefix(p, 3)]++
			}
			misses = append(misses, missed{h.name, pm})
		}
		if outDir != "" {
			writeList(filepath.Join(outDir, h.name+".missed.txt"), miss)
			writeList(filepath.Join(outDir, h.name+".extra.txt"), extra)
			var v []string
			for u := range ck.violURIs {
				v = append(v, u)
			}
			sort.Strings(v)
			writeList(filepath.Join(outDir, h.name+".violations.txt"), v)
		}
		if h.badLines > 0 {
			fmt.Fprintf(os.Stderr, "realweb-judge: %s: %d unparsable log lines\n", h.name, h.badLines)
		}
		if o := h.sides[other]; o.requests > 0 {
			fmt.Fprintf(os.Stderr, "realweb-judge: %s: %d requests from other clients, not counted\n", h.name, o.requests)
		}
	}
	fmt.Fprintf(tw, "total\t\t\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\t\t\n", tw_, tc, tb, pct(tb, tw_), tco, treq, tnon, tv, td, twv, twd)
	tw.Flush()
	if len(misses) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "pages wget got and crawlkit did not, by path prefix (largest 6 per host):")
		for _, m := range misses {
			type kv struct {
				k string
				v int
			}
			var l []kv
			for k, v := range m.prefix {
				l = append(l, kv{k, v})
			}
			sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || l[i].v == l[j].v && l[i].k < l[j].k })
			for i, e := range l {
				if i == 6 {
					fmt.Fprintf(w, "  %s  ... %d more prefixes\n", m.host, len(l)-6)
					break
				}
				fmt.Fprintf(w, "  %s  %6d  %s\n", m.host, e.v, e.k)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "coverage %s of wget's %d pages, robots violations %d, duplicate fetches %d\n", pct(tb, tw_), tw_, tv, td)
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(a)/float64(b))
}

func span(s *side) string {
	if s.requests == 0 {
		return "-"
	}
	return strconv.FormatInt(s.last-s.first, 10)
}

// prefix returns the first n segments of a path ("/a/b/c/" for n = 3), or
// the path's directory if it has fewer.
func prefix(p string, n int) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(segs) > n {
		segs = segs[:n]
	} else {
		segs = segs[:len(segs)-1]
	}
	return "/" + strings.Join(append(segs, ""), "/")
}

func writeList(name string, l []string) {
	var b []byte
	if len(l) > 0 {
		b = []byte(strings.Join(l, "\n") + "\n")
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		fatal(err)
	}
}
