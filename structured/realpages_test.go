package structured

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/extract"
)

// realPagesDir returns the directory of saved news and blog pages (the
// article-extraction benchmark's, outside the repository):
// $CRAWLKIT_ARTICLE_PAGES, or a shared/datasets directory beside the
// checkout.
func realPagesDir() string {
	if d := os.Getenv("CRAWLKIT_ARTICLE_PAGES"); d != "" {
		return d
	}
	for _, up := range []string{"../..", "../../.."} {
		d := filepath.Join(up, "shared", "datasets", "article-extraction")
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	return ""
}

// TestRealPages reads saved real pages: none may hit a limit, and the
// share of pages carrying each kind of data must be plausible for news
// sites (most have Open Graph and JSON-LD). It logs the counts.
func TestRealPages(t *testing.T) {
	dir := realPagesDir()
	files, _ := filepath.Glob(filepath.Join(dir, "html", "*.html.gz"))
	if len(files) == 0 {
		t.Skip("no saved pages (set CRAWLKIT_ARTICLE_PAGES)")
	}
	var truth map[string]struct {
		URL string `json:"url"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ground-truth.json")); err == nil {
		json.Unmarshal(b, &truth)
	}
	var withLD, withMicro, withOG, withTwitter, blocks, malformed, articles, items int
	for _, f := range files {
		body := gunzip(t, f)
		id := strings.TrimSuffix(filepath.Base(f), ".html.gz")
		utf, _ := extract.UTF8(body, "text/html")
		d := ParseBytes(utf, truth[id].URL)
		for _, err := range d.Errors {
			t.Errorf("%s: %v", id, err)
		}
		for i, b := range d.JSONLD {
			blocks++
			switch {
			case errors.Is(b.Err, ErrLimit):
				t.Errorf("%s: block %d: %v", id, i, b.Err)
			case b.Err != nil:
				malformed++
				t.Logf("%s: block %d: %v", id, i, b.Err)
			}
			if b.Raw != nil && !json.Valid(b.Raw) {
				t.Errorf("%s: block %d: invalid Raw", id, i)
			}
		}
		if _, err := json.Marshal(d); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if len(d.JSONLD) > 0 {
			withLD++
		}
		if len(d.Microdata) > 0 {
			withMicro++
		}
		if len(d.OpenGraph.Meta) > 0 {
			withOG++
		}
		if len(d.Twitter) > 0 {
			withTwitter++
		}
		for _, t := range []string{"Article", "NewsArticle", "BlogPosting", "ReportageNewsArticle"} {
			if len(d.Find(t)) > 0 {
				articles++
				break
			}
		}
		items += len(d.Items())
	}
	n := len(files)
	t.Logf("%d pages: JSON-LD on %d (%d blocks, %d malformed), microdata on %d, Open Graph on %d, Twitter on %d; an article item on %d; %d top-level items",
		n, withLD, blocks, malformed, withMicro, withOG, withTwitter, articles, items)
	if withOG < n/2 || withLD < n/3 || articles < n/4 || malformed > blocks/10 {
		t.Errorf("implausible counts for news pages")
	}
}

func gunzip(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
