// Command waczreplay replays a page from a WACZ file in ReplayWeb.page, in
// headless Chromium, and prints the replayed page's title: the check that a
// crawl's archive replays in the reader archivists use. It serves the WACZ
// and ReplayWeb.page's index.html, ui.js and sw.js (from the replaywebpage
// npm package, -ui DIR) on 127.0.0.1, where service workers are allowed.
//
//	go run ./internal/tools/waczreplay -ui DIR -wacz crawl.wacz -url http://h0000.test/
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
)

const page = `<!doctype html><html><head><script src="ui.js"></script></head>
<body><replay-web-page style="height:600px" source="%s" url="%s" replayBase="./" embed="replayonly"></replay-web-page></body></html>`

// innerTitle digs through ReplayWeb.page's shadow roots and frames to the
// replayed page's document, and returns its title ("" until it is there).
const innerTitle = `(() => {
  const rwp = document.querySelector("replay-web-page");
  const f1 = rwp && rwp.shadowRoot && rwp.shadowRoot.querySelector("iframe");
  const d1 = f1 && f1.contentDocument;
  if (!d1) return "";
  const app = d1.querySelector("replay-app-main");
  const root = app && app.shadowRoot;
  const item = root && root.querySelector("wr-item");
  const ir = item && item.shadowRoot;
  const replay = ir && ir.querySelector("wr-coll-replay");
  const rr = replay && replay.shadowRoot;
  const f2 = rr && rr.querySelector("iframe");
  const d2 = f2 && f2.contentDocument;
  return d2 ? d2.title : "";
})()`

const debugJS = `(() => {
  const out = [];
  const walk = (root, depth) => {
    if (!root || depth > 8) return;
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { out.push(depth + " shadow:" + el.tagName); walk(el.shadowRoot, depth+1); }
      if (el.tagName === "IFRAME") { out.push(depth + " iframe:" + el.src); try { walk(el.contentDocument, depth+1); } catch (e) { out.push("x " + e); } }
    }
  };
  walk(document, 0);
  return out.join("\n");
})()`

func main() {
	ui := flag.String("ui", "", "directory holding ReplayWeb.page's ui.js and sw.js")
	wacz := flag.String("wacz", "", "the WACZ file")
	target := flag.String("url", "", "the archived URL to replay")
	timeout := flag.Duration("timeout", 60*time.Second, "how long to wait for the replay")
	want := flag.String("want", "", "fail unless the replayed page's title is this")
	flag.Parse()
	title, err := run(*ui, *wacz, *target, *timeout)
	if err == nil && *want != "" && title != *want {
		err = fmt.Errorf("replayed %s with the title %q, want %q", *target, title, *want)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "waczreplay:", err)
		os.Exit(1)
	}
}

func run(ui, wacz, target string, timeout time.Duration) (string, error) {
	if ui == "" || wacz == "" || target == "" {
		return "", errors.New("-ui, -wacz and -url are required")
	}
	mux := http.NewServeMux()
	for _, name := range []string{"ui.js", "sw.js", "index.html"} {
		path := filepath.Join(ui, name)
		mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, path) })
	}
	mux.HandleFunc("/archive.wacz", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, wacz) })
	// The embedding page; ReplayWeb.page's own app page (its index.html)
	// is the root, where the embed's frame loads it.
	mux.HandleFunc("/embed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, page, "archive.wacz", target)
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(ui, "index.html")) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+ln.Addr().String()+"/embed")); err != nil {
		return "", err
	}
	for {
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](innerTitle))
		if err != nil {
			return "", err
		}
		if title != "" {
			fmt.Println(title)
			return title, nil
		}
		if os.Getenv("WACZREPLAY_DEBUG") != "" {
			dbg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](debugJS))
			fmt.Fprintln(os.Stderr, dbg)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no replayed page within %v", timeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
