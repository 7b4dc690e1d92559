package warc_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// TestPackWACZ packs a Writer's files as a WACZ and checks the package as
// WACZ 1.1.1 describes it: the WARC files stored under archive/, the
// merged index, the pages, and a datapackage.json whose sizes and SHA-256
// hashes are those of the files, itself hashed in datapackage-digest.json.
func TestPackWACZ(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, MaxFileSize: 1 << 10, Now: fixedNow, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	html := http.Header{"Content-Type": {"text/html"}}
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, ex := range []warc.Exchange{
		{URL: "http://a.test/", StatusCode: 200, Header: html, Body: []byte("<p>home</p>")},
		{URL: "http://a.test/style.css", StatusCode: 200, Header: http.Header{"Content-Type": {"text/css"}}, Body: []byte("p{}")},
		{URL: "http://a.test/gone", StatusCode: 404, Header: html, Body: []byte("<p>gone</p>")},
		{URL: "http://b.test/", StatusCode: 200, Header: html, Body: []byte("<p>b</p>")},
	} {
		ex.Date = date.Add(time.Duration(i) * time.Second)
		if _, err := w.WriteExchange(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "crawl.wacz")
	if err := warc.PackWACZ(dir, out); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string][]byte{}
	warcs := 0
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = data
		if strings.HasPrefix(f.Name, "archive/") {
			warcs++
			if f.Method != zip.Store {
				t.Errorf("%s compressed again (method %d)", f.Name, f.Method)
			}
		}
	}
	if local, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz")); warcs != len(local) || warcs < 2 {
		t.Errorf("%d WARC files in the package, %d written", warcs, len(local))
	}
	var pkg struct {
		Profile     string
		WACZVersion string `json:"wacz_version"`
		Resources   []struct {
			Name, Path, Hash string
			Bytes            int64
		}
	}
	if err := json.Unmarshal(files["datapackage.json"], &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.WACZVersion != "1.1.1" || len(pkg.Resources) != warcs+2 {
		t.Errorf("datapackage.json: %s", files["datapackage.json"])
	}
	for _, r := range pkg.Resources {
		sum := sha256.Sum256(files[r.Path])
		if r.Hash != "sha256:"+hex.EncodeToString(sum[:]) || r.Bytes != int64(len(files[r.Path])) {
			t.Errorf("%s: listed as %s, %d bytes; is %x, %d bytes", r.Path, r.Hash, r.Bytes, sum, len(files[r.Path]))
		}
	}
	var digest struct{ Path, Hash string }
	json.Unmarshal(files["datapackage-digest.json"], &digest)
	if sum := sha256.Sum256(files["datapackage.json"]); digest.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("datapackage-digest.json: %s", files["datapackage-digest.json"])
	}
	index := strings.Split(strings.TrimSpace(string(files["indexes/index.cdx"])), "\n")
	if len(index) != 4 || !strings.HasPrefix(index[0], "test,a)/ 20260102030405 ") {
		t.Errorf("index.cdx:\n%s", files["indexes/index.cdx"])
	}
	want := `{"format":"json-pages-1.0","id":"pages","title":"All Pages"}
{"url":"http://a.test/","ts":"2026-01-02T03:04:05Z"}
{"url":"http://b.test/","ts":"2026-01-02T03:04:08Z"}
`
	if got := string(files["pages/pages.jsonl"]); got != want {
		t.Errorf("pages.jsonl:\n%s\nwant\n%s", got, want)
	}
	var first struct{ Filename string }
	json.Unmarshal([]byte(strings.SplitN(index[0], " ", 3)[2]), &first)
	if !bytes.HasPrefix(files["archive/"+first.Filename], []byte{0x1f, 0x8b}) {
		t.Errorf("the index's file name does not name a WARC file in archive/: %s", index[0])
	}
}

// A crawl's files, indexed as they are written, packaged for replay.
func ExamplePackWACZ() {
	dir, _ := os.MkdirTemp("", "warc")
	defer os.RemoveAll(dir)
	w, _ := warc.New(warc.Config{Dir: dir, Index: true,
		Now: func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }})
	w.WriteExchange(&warc.Exchange{URL: "https://example.com/", StatusCode: 200,
		Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<p>hello</p>")})
	w.Close()

	out := filepath.Join(dir, "crawl.wacz")
	if err := warc.PackWACZ(dir, out); err != nil {
		fmt.Println(err)
		return
	}
	zr, _ := zip.OpenReader(out)
	defer zr.Close()
	for _, f := range zr.File {
		fmt.Println(f.Name)
	}
	// Output:
	// archive/crawlkit-20260304050607-00001.warc.gz
	// indexes/index.cdx
	// pages/pages.jsonl
	// datapackage.json
	// datapackage-digest.json
}
