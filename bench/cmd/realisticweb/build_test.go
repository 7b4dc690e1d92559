package main

import (
	"bytes"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"
)

const corpusDir = "/work/shared/datasets/article-extraction/html"

var (
	corpusOnce sync.Once
	testCorpus *corpus
	corpusErr  error
)

func loadTestCorpus(t *testing.T) *corpus {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("corpus not present:", err)
	}
	corpusOnce.Do(func() { testCorpus, corpusErr = loadCorpus(corpusDir) })
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return testCorpus
}

// hrefs returns the href of every <a> element of doc, as an HTML parser
// reads them.
func hrefs(t *testing.T, doc []byte) []string {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					out = append(out, a.Val)
				}
			}
		}
	}
	return out
}

// Every link a parser finds in a rendered page is either one the page
// does not follow (#…, javascript:, mailto:) or resolves to a page of the
// synthetic web, and those are the links recordLinks records (the menu
// gives every page some).
func TestRenderedLinksStayInTheWeb(t *testing.T) {
	c := loadTestCorpus(t)
	s := newSite(7, 30, 10, 20)
	for id := 0; id < len(s.pages); id += 7 {
		doc := s.render(c, id)
		s.recordLinks(id, doc)
		base, _ := url.Parse("https://" + s.hosts[s.pages[id].host].name + s.pages[id].path)
		var targets []int32
		for _, h := range hrefs(t, doc) {
			l := strings.ToLower(strings.TrimSpace(h))
			if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "javascript:") ||
				strings.HasPrefix(l, "mailto:") || strings.HasPrefix(l, "tel:") {
				continue
			}
			u, err := base.Parse(h)
			if err != nil {
				t.Fatalf("page %d: bad href %q: %v", id, h, err)
			}
			if !strings.HasSuffix(u.Hostname(), ".test") {
				t.Fatalf("page %d: link %q leaves the synthetic web", id, h)
			}
			tid := s.lookup(u.String())
			if tid < 0 {
				t.Fatalf("page %d: link %q names no page", id, h)
			}
			if !slices.Contains(targets, int32(tid)) {
				targets = append(targets, int32(tid))
			}
		}
		got := slices.Clone(s.pages[id].links)
		got = slices.DeleteFunc(got, func(x int32) bool { return x == int32(id) }) // an empty href names the page itself
		targets = slices.DeleteFunc(targets, func(x int32) bool { return x == int32(id) })
		slices.Sort(got)
		slices.Sort(targets)
		if !slices.Equal(targets, got) {
			t.Fatalf("page %d: parser found targets %v, render recorded %v", id, targets, s.pages[id].links)
		}
		if len(targets) == 0 {
			t.Fatalf("page %d has no link", id)
		}
	}
}

// Page sizes have a median near 100 KB and stay within 8 KB–1 MB.
func TestPageSizes(t *testing.T) {
	s := newSite(1, 400, 10, 20)
	sizes := make([]int, len(s.pages))
	for id := range s.pages {
		sizes[id] = s.pageSize(id)
	}
	slices.Sort(sizes)
	med := sizes[len(sizes)/2]
	if med < 85_000 || med > 115_000 {
		t.Errorf("median size %d, want about 100 000", med)
	}
	if sizes[0] < 8_000 || sizes[len(sizes)-1] > 1_000_000 {
		t.Errorf("sizes span %d–%d, want within 8 000–1 000 000", sizes[0], sizes[len(sizes)-1])
	}
	if p99 := sizes[len(sizes)*99/100]; p99 < 500_000 {
		t.Errorf("99th percentile %d: no tail toward 1 MB", p99)
	}
}
