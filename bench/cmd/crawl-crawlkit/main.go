// Command crawl-crawlkit crawls a benchweb synthetic web with
// crawlkit.Crawler and prints one JSON line of results (harness.Result).
//
//	crawl-crawlkit -web 127.0.0.1:PORT -control 127.0.0.1:PORT [-max-pages N] [-delay 1s] [-ca CA.pem] [-data-dir DIR] [-warc-dir DIR]
package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	_ "github.com/crawlkit/crawlkit/storage/datadir" // Config.DataDir on Pebble

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

func main() {
	fs := flag.NewFlagSet("crawl-crawlkit", flag.ExitOnError)
	verbose := fs.Bool("v", false, "log at Debug and print every fetch error and the final Stats to standard error")
	dataDir := fs.String("data-dir", "", "keep the crawl state in a Pebble store in this directory (empty: memory)")
	warcDir := fs.String("warc-dir", "", "archive every exchange in WARC files (with a CDXJ index) in this directory, as the quickstart does (empty: none)")
	harness.Main("crawlkit", fs, os.Args[1:], func(ctx context.Context, p harness.Params) (int64, error) {
		seeds, err := harness.NewControl(p.Control).Seeds()
		if err != nil {
			return 0, err
		}
		var roots *x509.CertPool
		if p.CAFile != "" {
			// The web's CA alone, through the Crawler's root pool, as the
			// peers are given theirs.
			if roots, err = harness.RootPool(p.CAFile); err != nil {
				return 0, err
			}
		}
		var pages atomic.Int64
		var sink crawlkit.Sink
		if *warcDir != "" {
			ws, err := crawlkit.NewWARCSink(warc.Config{Dir: *warcDir, Software: "crawl-crawlkit", Index: true})
			if err != nil {
				return 0, err
			}
			sink = ws
		}
		logger := slog.New(slog.DiscardHandler)
		if *verbose {
			logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent:    p.UserAgent(),
			Seeds:        seeds,
			Scope:        crawlkit.ScopeAny,
			MaxDepth:     p.MaxDepth,
			MaxPages:     p.MaxPages,
			Workers:      p.Workers,
			Delay:        p.Delay,
			DialContext:  harness.Dialer(p.Web),
			AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			// Hosts whose robots.txt answers 503 are disallowed entirely
			// (RFC 9309 §2.3.1.4); the synthetic web never recovers them,
			// so do not wait for a retry.
			RobotsRetries: -1,
			DataDir:       *dataDir,
			RootCAs:       roots,
			Sink:          sink,
			// The synthetic web answers in milliseconds; a short grace
			// keeps a time-bounded crawl from idling after its deadline.
			ShutdownGrace: 2 * time.Second,
			ExpectedURLs:  uint64(max(p.MaxPages*4, 1<<16)),
			Logger:        logger,
			OnError: func(ctx context.Context, url string, err error) {
				if *verbose {
					fmt.Fprintln(os.Stderr, "crawl-crawlkit:", url, err)
				}
			},
			Handler: func(ctx context.Context, pg *crawlkit.Page) error {
				pages.Add(1)
				return nil
			},
		})
		if err != nil {
			return 0, err
		}
		err = c.Run(ctx)
		if *verbose {
			st, _ := json.Marshal(c.Stats())
			fmt.Fprintln(os.Stderr, "crawl-crawlkit: stats:", string(st))
		}
		return pages.Load(), err
	})
}
