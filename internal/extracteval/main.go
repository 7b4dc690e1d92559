// Command extracteval scores main-content extraction against labelled
// pages: token-level precision, recall and F1 of each page's extracted
// text against its human-labelled article body (whitespace-separated
// tokens counted as multisets), then the mean F1, the measure of the
// Scrapinghub article-extraction benchmark.
//
//	go run ./internal/extracteval -dir DIR [-lib markdown|readability|extract]
//
// DIR holds html/<id>.html.gz and ground-truth.json, a JSON object from id
// to {"articleBody": ..., "url": ...}. Pages are decoded to UTF-8 as the
// crawler decodes them (extract.UTF8). The CPU per page goes to stderr, so
// that standard output ends with "mean F1 X.XXX over N pages".
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"

	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/markdown"
)

// extractors are the -lib choices: each returns a page's main-content text.
var extractors = map[string]func(body []byte, pageURL string) string{
	// markdown scores the text a reader of the Markdown sees.
	"markdown": func(body []byte, pageURL string) string {
		d, err := markdown.Convert(body, pageURL)
		if err != nil {
			return ""
		}
		return plain(d.Markdown)
	},
	// readability is the extractor under markdown, with its own text.
	"readability": func(body []byte, pageURL string) string {
		u, err := url.Parse(pageURL)
		if err != nil {
			return ""
		}
		a, err := readability.FromReader(bytes.NewReader(body), u)
		if err != nil || a.Node == nil {
			return ""
		}
		var b strings.Builder
		if a.RenderText(&b) != nil {
			return ""
		}
		return b.String()
	},
	// extract is the crawler's own pass: all visible text, no selection.
	"extract": func(body []byte, pageURL string) string {
		d, _ := extract.ExtractBytes(body, pageURL, nil)
		if d == nil {
			return ""
		}
		return d.Text
	},
}

func main() {
	dir := flag.String("dir", "", "dataset directory: html/<id>.html.gz and ground-truth.json")
	lib := flag.String("lib", "markdown", "extractor: markdown, readability or extract")
	flag.Parse()
	if _, err := run(os.Stdout, os.Stderr, *dir, *lib); err != nil {
		fmt.Fprintln(os.Stderr, "extracteval:", err)
		os.Exit(1)
	}
}

type truth struct {
	ArticleBody string `json:"articleBody"`
	URL         string `json:"url"`
}

// run scores lib on the pages in dir, writing a line per page and the mean
// F1 to out, and the CPU per page to diag. It returns the mean F1.
func run(out, diag io.Writer, dir, lib string) (float64, error) {
	fn := extractors[lib]
	if fn == nil {
		return 0, fmt.Errorf("unknown -lib %q", lib)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ground-truth.json"))
	if err != nil {
		return 0, err
	}
	var pages map[string]truth
	if err := json.Unmarshal(b, &pages); err != nil {
		return 0, fmt.Errorf("ground-truth.json: %w", err)
	}
	if len(pages) == 0 {
		return 0, errors.New("no pages")
	}
	ids := make([]string, 0, len(pages))
	for id := range pages {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var sum float64
	var spent time.Duration
	for _, id := range ids {
		body, err := readPage(filepath.Join(dir, "html", id+".html.gz"))
		if err != nil {
			return 0, err
		}
		c0 := cpuTime()
		got := fn(body, pages[id].URL)
		spent += cpuTime() - c0
		p, r, f := tokenF1(got, pages[id].ArticleBody)
		sum += f
		fmt.Fprintf(out, "%s %.3f %.3f %.3f\n", id, p, r, f)
	}
	mean := sum / float64(len(ids))
	fmt.Fprintf(diag, "%s: CPU %.2f ms/page\n", lib, float64(spent.Microseconds())/1000/float64(len(ids)))
	fmt.Fprintf(out, "mean F1 %.3f over %d pages\n", mean, len(ids))
	return mean, nil
}

// readPage returns a gzipped page decoded to UTF-8.
func readPage(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw, err := io.ReadAll(io.LimitReader(z, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	body, _ := extract.UTF8(raw, "text/html")
	return body, nil
}

// tokenF1 scores got against want as multisets of whitespace-separated
// tokens. Two empty texts agree perfectly.
func tokenF1(got, want string) (precision, recall, f1 float64) {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) == 0 && len(w) == 0 {
		return 1, 1, 1
	}
	left := make(map[string]int, len(w))
	for _, t := range w {
		left[t]++
	}
	common := 0
	for _, t := range g {
		if left[t] > 0 {
			left[t]--
			common++
		}
	}
	if common == 0 {
		return 0, 0, 0
	}
	precision = float64(common) / float64(len(g))
	recall = float64(common) / float64(len(w))
	return precision, recall, 2 * precision * recall / (precision + recall)
}
