// Command realweb-crawl crawls the real-HTML test bed of bench/realweb
// (Debian documentation trees served by Apache on 127.0.0.1) with the root
// crawlkit.Crawler, and prints its Stats as JSON on standard output.
//
//	realweb-crawl -seeds http://127.0.0.1:18081/,http://127.0.0.1:18082/ [-workers 16] [-delay 1ms] [-timeout 15m]
//
// Only loopback is allowed: a seed whose host is not a 127.0.0.0/8 address
// is refused, and the address guard passes 127.0.0.0/8 only. The server's
// access logs, not this program's output, are what bench/realweb judges;
// the Stats are printed so that the two can be compared.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	_ "github.com/crawlkit/crawlkit/storage/datadir" // Config.DataDir (-data-dir)
)

func main() {
	seeds := flag.String("seeds", "", "comma-separated seed URLs (http://127.0.0.1:PORT/ only)")
	ua := flag.String("ua", "realwebbot/1.0 (+bench/realweb)", "User-Agent (its product token is what robots.txt groups match)")
	workers := flag.Int("workers", 16, "Config.Workers")
	delay := flag.Duration("delay", time.Millisecond, "Config.Delay (0 would mean the 1 s default)")
	timeout := flag.Duration("timeout", 15*time.Minute, "stop the crawl after this long")
	pagesOut := flag.String("pages", "", "if set, write one line per page handed to the Handler: status, content type, URL")
	verbose := flag.Bool("v", false, "log the crawler's warnings to standard error")
	dataDir := flag.String("data-dir", "", "Config.DataDir: keep the crawl state in a Pebble store in this directory, as the quickstart does (empty: memory)")
	warcDir := flag.String("warc-dir", "", "archive every exchange in WARC files with a CDXJ index in this directory, as the quickstart does (empty: none)")
	flag.Parse()

	var list []string
	for _, s := range strings.Split(*seeds, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if err := loopbackOnly(s); err != nil {
			fmt.Fprintln(os.Stderr, "realweb-crawl:", err)
			os.Exit(2)
		}
		list = append(list, s)
	}
	if len(list) == 0 {
		fmt.Fprintln(os.Stderr, "realweb-crawl: no -seeds")
		os.Exit(2)
	}

	var (
		mu    sync.Mutex
		pages *os.File
	)
	if *pagesOut != "" {
		f, err := os.Create(*pagesOut)
		if err != nil {
			fmt.Fprintln(os.Stderr, "realweb-crawl:", err)
			os.Exit(1)
		}
		defer f.Close()
		pages = f
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}

	var sink crawlkit.Sink
	if *warcDir != "" {
		ws, err := crawlkit.NewWARCSink(warc.Config{Dir: *warcDir, Software: "realweb-crawl", Index: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, "realweb-crawl:", err)
			os.Exit(1)
		}
		sink = ws
	}
	c, err := crawlkit.New(crawlkit.Config{
		DataDir:      *dataDir,
		Sink:         sink,
		UserAgent:    *ua,
		Seeds:        list,
		Scope:        crawlkit.ScopeSameHost,
		Workers:      *workers,
		Delay:        *delay,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		// ScopeSameHost keeps the crawl on the seeds' hosts; the dialer
		// refuses any address off loopback all the same.
		DialContext:   loopbackDial,
		ShutdownGrace: 2 * time.Second,
		Logger:        logger,
		Handler: func(ctx context.Context, p *crawlkit.Page) error {
			if pages == nil {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			_, err := fmt.Fprintf(pages, "%d\t%s\t%s\n", p.StatusCode, p.ContentType, p.URL)
			return err
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "realweb-crawl:", err)
		os.Exit(1)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, *timeout)
	defer cancelT()

	start := time.Now()
	runErr := c.Run(ctx)
	st := c.Stats()
	out := struct {
		Stats      crawlkit.Stats `json:"stats"`
		WallSecond float64        `json:"wall_seconds"`
		Error      string         `json:"error,omitempty"`
	}{Stats: st, WallSecond: time.Since(start).Seconds()}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "realweb-crawl:", err)
		os.Exit(1)
	}
	if runErr != nil && ctx.Err() == nil {
		os.Exit(1)
	}
}

// loopbackDial connects to literal 127.0.0.0/8 addresses only.
func loopbackDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || ip.To4() == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("realweb-crawl: refusing to dial %s: not a 127.0.0.0/8 address", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// loopbackOnly refuses a seed that is not http(s)://127.x.y.z[:port]/...:
// the test bed must never send a request off this machine.
func loopbackOnly(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("seed %q: scheme must be http or https", s)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return fmt.Errorf("seed %q: host must be a 127.0.0.0/8 address", s)
	}
	return nil
}
