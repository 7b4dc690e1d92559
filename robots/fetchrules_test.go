package robots_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/robots"
)

var update = flag.Bool("update", false, "rewrite the expected results in testdata")

// TestFetchRules walks testdata/fetch/*.txt: how a Cache turns what the
// server answered for robots.txt (a status, a redirect, a network error,
// a Cache-Control header, and how long that has gone on) into a policy,
// after RFC 9309 §2.3.1 and §2.4. A file is a sequence of lines:
//
//	new [Field=value ...]   a new Cache and server (Config fields: TTL, MinTTL,
//	                        MinRetry, MaxRetry, UnreachableLimit as durations,
//	                        MaxRedirects as a number, Fallback as last-good,
//	                        allow-all or disallow-all)
//	serve PATH STATUS [Header=value ...] [body=QUOTED]
//	serve PATH error=QUOTED the server's answer for https://a.test + PATH from now on
//	at DURATION             the clock, as an offset from the start
//	policy => RESULT        Cache.PolicyAt for https://a.test/ at the clock
//
// A value may be Go-quoted. RESULT is what fmtPolicy writes: the policy's
// source (file, unavailable: allow all, unreachable: disallow all), whether
// it is the fallback after UnreachableLimit, the fetch's status, final
// URL, error, expiry and the start of the unreachable run (as offsets),
// whether /x and /y are allowed for ExampleBot, and the requests the call
// made. Run with -update to rewrite the results after a deliberate change,
// and review the diff.
func TestFetchRules(t *testing.T) {
	files, err := filepath.Glob("testdata/fetch/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runFetchRules(t, file) })
	}
}

const fetchOrigin = "https://a.test"

// fakeServer answers robots.txt fetches from its table, by URL.
type fakeServer struct {
	answers  map[string]answer
	requests int
}

type answer struct {
	status int
	header http.Header
	body   string
	err    string
}

func (s *fakeServer) fetch(_ context.Context, rawURL string) (*http.Response, error) {
	s.requests++
	a, ok := s.answers[rawURL]
	if !ok {
		a = answer{status: 404}
	}
	if a.err != "" {
		return nil, errors.New(a.err)
	}
	h := a.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader(a.body))}, nil
}

// splitArgs splits s at spaces, keeping Go-quoted values (after "=" or
// alone) whole and unquoting them.
func splitArgs(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		var b strings.Builder
		for s != "" && s[0] != ' ' {
			if s[0] == '"' {
				q, err := strconv.QuotedPrefix(s)
				if err != nil {
					return nil, err
				}
				u, _ := strconv.Unquote(q)
				b.WriteString(u)
				s = s[len(q):]
				continue
			}
			b.WriteByte(s[0])
			s = s[1:]
		}
		out = append(out, b.String())
	}
	return out, nil
}

func runFetchRules(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out   []string
		c     *robots.Cache
		srv   *fakeServer
		clock time.Duration
	)
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		cmd, want, hasWant := strings.Cut(text, " => ")
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
		}
		args, err := splitArgs(cmd)
		if err != nil {
			fail("%v", err)
		}
		if len(args) == 0 || strings.HasPrefix(args[0], "#") {
			out = append(out, text)
			continue
		}
		switch args[0] {
		case "new":
			cfg, err := fetchConfig(args[1:])
			if err != nil {
				fail("%v", err)
			}
			srv = &fakeServer{answers: map[string]answer{}}
			cfg.Fetch = srv.fetch
			c, clock = robots.NewCache(cfg), 0
			out = append(out, text)
			continue
		case "serve":
			if srv == nil || len(args) < 3 {
				fail("serve PATH STATUS|error=TEXT [Header=value ...] [body=TEXT] after new")
			}
			a, err := parseAnswer(args[2:])
			if err != nil {
				fail("%v", err)
			}
			srv.answers[fetchOrigin+args[1]] = a
			out = append(out, text)
			continue
		case "at":
			if len(args) != 2 {
				fail("at DURATION")
			}
			if clock, err = time.ParseDuration(args[1]); err != nil {
				fail("%v", err)
			}
			out = append(out, text)
			continue
		case "policy":
		default:
			fail("unknown command %q", args[0])
		}
		if c == nil {
			fail("policy before new")
		}
		before := srv.requests
		p, err := c.PolicyAt(context.Background(), fetchOrigin+"/", t0.Add(clock))
		if err != nil {
			fail("PolicyAt: %v", err)
		}
		got := fmtPolicy(t, p, srv.requests-before)
		out = append(out, strings.TrimRight(cmd, " ")+" => "+got)
		if !*update && (!hasWant || got != want) {
			t.Errorf("%s:%d: %s\n got: %s\nwant: %s", file, line, cmd, got, want)
		}
	}
	if *update {
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fetchConfig(args []string) (robots.Config, error) {
	var cfg robots.Config
	for _, a := range args {
		name, val, _ := strings.Cut(a, "=")
		var d *time.Duration
		switch name {
		case "TTL":
			d = &cfg.TTL
		case "MinTTL":
			d = &cfg.MinTTL
		case "MinRetry":
			d = &cfg.MinRetry
		case "MaxRetry":
			d = &cfg.MaxRetry
		case "UnreachableLimit":
			d = &cfg.UnreachableLimit
		case "MaxRedirects":
			n, err := strconv.Atoi(val)
			if err != nil {
				return cfg, err
			}
			cfg.MaxRedirects = n
			continue
		case "Fallback":
			fb, ok := map[string]robots.Fallback{"last-good": robots.FallbackLastGood,
				"allow-all": robots.FallbackAllowAll, "disallow-all": robots.FallbackDisallowAll}[val]
			if !ok {
				return cfg, fmt.Errorf("unknown Fallback %q", val)
			}
			cfg.Fallback = fb
			continue
		default:
			return cfg, fmt.Errorf("unknown Config field %q", name)
		}
		v, err := time.ParseDuration(val)
		if err != nil {
			return cfg, err
		}
		*d = v
	}
	return cfg, nil
}

func parseAnswer(args []string) (answer, error) {
	var a answer
	if e, ok := strings.CutPrefix(args[0], "error="); ok {
		a.err = e
		return a, nil
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return a, fmt.Errorf("status: %v", err)
	}
	a.status = n
	for _, arg := range args[1:] {
		name, val, ok := strings.Cut(arg, "=")
		switch {
		case !ok:
			return a, fmt.Errorf("%q is not NAME=value", arg)
		case name == "body":
			a.body = val
		default:
			if a.header == nil {
				a.header = http.Header{}
			}
			a.header.Add(name, val)
		}
	}
	return a, nil
}

// offset writes a time of the table as an offset from t0.
func offset(at time.Time) string {
	if at.IsZero() {
		return "-"
	}
	d := at.Sub(t0)
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

func fmtPolicy(t *testing.T, p *robots.Policy, requests int) string {
	info := p.FetchInfo()
	var b strings.Builder
	switch p.Source() {
	case robots.SourceFile:
		b.WriteString("file")
	case robots.SourceUnavailable:
		b.WriteString("unavailable (allow all)")
	case robots.SourceUnreachable:
		b.WriteString("unreachable (disallow all)")
	default:
		b.WriteString(p.Source().String())
	}
	if info.Fallback {
		b.WriteString(" fallback")
	}
	fmt.Fprintf(&b, " status=%d", info.Status)
	if u := strings.TrimPrefix(info.URL, fetchOrigin); u != "/robots.txt" {
		fmt.Fprintf(&b, " url=%s", u)
	}
	if info.Err != "" {
		fmt.Fprintf(&b, " err=%q", info.Err)
	}
	fmt.Fprintf(&b, " expires=%s", offset(info.Expires))
	if !info.UnreachableSince.IsZero() {
		fmt.Fprintf(&b, " unreachable-since=%s", offset(info.UnreachableSince))
	}
	for _, path := range []string{"/x", "/y"} {
		d, err := p.Allowed("ExampleBot", path)
		if err != nil {
			t.Fatalf("Allowed(%s): %v", path, err)
		}
		verdict := "disallowed"
		if d.Allowed {
			verdict = "allowed"
		}
		fmt.Fprintf(&b, " %s=%s", path, verdict)
	}
	fmt.Fprintf(&b, " requests=%d", requests)
	return b.String()
}
