// Command crawl-crawlkit crawls a benchweb synthetic web with
// crawlkit.Crawler and prints one JSON line of results (harness.Result).
//
//	crawl-crawlkit -web 127.0.0.1:PORT -control 127.0.0.1:PORT [-max-pages N] [-delay 1s] [-ca CA.pem] [-data-dir DIR]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	_ "github.com/crawlkit/crawlkit/datadir" // Config.DataDir on Pebble

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

func main() {
	fs := flag.NewFlagSet("crawl-crawlkit", flag.ExitOnError)
	verbose := fs.Bool("v", false, "log at Debug and print every fetch error and the final Stats to standard error")
	dataDir := fs.String("data-dir", "", "keep the crawl state in a Pebble store in this directory (empty: memory)")
	harness.Main("crawlkit", fs, os.Args[1:], func(ctx context.Context, p harness.Params) (int64, error) {
		seeds, err := harness.NewControl(p.Control).Seeds()
		if err != nil {
			return 0, err
		}
		if p.CAFile != "" {
			if err := trustOnly(p.CAFile); err != nil {
				return 0, err
			}
		}
		var pages atomic.Int64
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
