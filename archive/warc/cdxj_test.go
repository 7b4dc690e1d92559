package warc_test

import (
	"encoding/json"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// TestIndexLocatesRecords: with Config.Index each finished file has a
// CDXJ index beside it, sorted, with one line per response or revisit
// record whose offset and length locate that record, and the fields pywb
// and warcio write.
func TestIndexLocatesRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, MaxFileSize: 2 << 10, Now: fixedNow, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	for i, ex := range []warc.Exchange{
		{URL: "http://www.b.test/z?y=2&x=1", StatusCode: 200, Header: html, Body: []byte("<p>one</p>")},
		{URL: "http://a.test/", StatusCode: 200, Header: html, Body: []byte("<p>two</p>")},
		{URL: "http://a.test/copy", StatusCode: 200, Header: html, Body: []byte("<p>one</p>")},
		{URL: "http://a.test/gone", StatusCode: 404, Body: randomBody(rand.New(rand.NewSource(1)), 3000)},
		{URL: "http://a.test/", StatusCode: 304},
	} {
		ex.Date = date.Add(time.Duration(i) * time.Second)
		if _, err := w.WriteExchange(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := strictRead(t, dir)
	byPlace := map[string]strictRecord{}
	want := 0
	for _, r := range recs {
		byPlace[r.file+"@"+strconv.FormatInt(r.offset, 10)] = r
		if typ := r.get("WARC-Type"); typ == "response" || typ == "revisit" {
			want++
		}
	}
	indexes, _ := filepath.Glob(filepath.Join(dir, "*.cdxj"))
	warcs, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(indexes) != len(warcs) || len(warcs) < 2 {
		t.Fatalf("%d indexes for %d files; want one each, and a rotation", len(indexes), len(warcs))
	}
	got := 0
	for _, name := range indexes {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if !slices.IsSorted(lines) {
			t.Errorf("%s is not sorted:\n%s", name, data)
		}
		for _, l := range lines {
			got++
			parts := strings.SplitN(l, " ", 3)
			var f struct{ URL, Mime, Status, Digest, Length, Offset, Filename string }
			if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &f) != nil {
				t.Fatalf("%s: malformed line %q", name, l)
			}
			if strings.TrimSuffix(filepath.Base(name), ".cdxj")+".warc.gz" != f.Filename {
				t.Errorf("%s: line names %s", name, f.Filename)
			}
			r, ok := byPlace[f.Filename+"@"+f.Offset]
			if !ok {
				t.Errorf("%s: no record at %s@%s", name, f.Filename, f.Offset)
				continue
			}
			if r.get("WARC-Target-URI") != f.URL || parts[1] != strings.NewReplacer("-", "", ":", "", "T", "", "Z", "").Replace(r.get("WARC-Date")) ||
				"sha1:"+f.Digest != r.get("WARC-Payload-Digest") && f.Digest != "" {
				t.Errorf("%s: line %q does not describe record %v", name, l, r.fields)
			}
			mime := "text/html"
			switch {
			case r.get("WARC-Type") == "revisit":
				mime = "warc/revisit"
			case strings.HasSuffix(f.URL, "/gone"):
				mime = ""
			}
			if f.Mime != mime {
				t.Errorf("%s: mime %q, want %q", l, f.Mime, mime)
			}
			if f.URL == "http://www.b.test/z?y=2&x=1" && parts[0] != "test,b)/z?x=1&y=2" {
				t.Errorf("key %q", parts[0])
			}
		}
	}
	if got != want {
		t.Errorf("%d index lines, want %d (one per response or revisit record)", got, want)
	}
}
