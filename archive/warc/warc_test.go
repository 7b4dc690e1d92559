package warc_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	iawarc "github.com/internetarchive/gowarc"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// readRecord is one record as read back by an independent WARC reader.
type readRecord struct {
	file    string
	header  map[string]string
	content []byte
}

// readAll reads every record of every file in dir with the Internet
// Archive's reader, which shares no code with the writer.
func readAll(t *testing.T, dir string) []readRecord {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []readRecord
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := iawarc.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for {
			rec, err := r.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: reading record: %v", name, err)
			}
			content, err := io.ReadAll(rec.Content)
			if err != nil {
				t.Fatal(err)
			}
			h := map[string]string{}
			for k, v := range rec.Header {
				h[strings.ToLower(k)] = v
			}
			out = append(out, readRecord{file: filepath.Base(name), header: h, content: content})
			rec.Content.Close()
		}
		r.Close()
		f.Close()
	}
	return out
}

func sha1b32(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// httpBody splits an HTTP message into its head and body.
func httpBody(t *testing.T, msg []byte) (string, []byte) {
	t.Helper()
	i := bytes.Index(msg, []byte("\r\n\r\n"))
	if i < 0 {
		t.Fatalf("no end of HTTP head in %q", msg)
	}
	return string(msg[:i]), msg[i+4:]
}

func fixedNow() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func TestWriteAndReadBackIndependently(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, Operator: "test operator", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	page := []byte("<html><body><p>first page</p></body></html>")
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hdr := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Content-Encoding": {"gzip"}}
	reqHdr := http.Header{"User-Agent": {"testbot/1.0 (+http://example.test/bot)"}}

	first, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/page?x=1", Date: date, IP: "127.0.0.1",
		RequestHeader: reqHdr, StatusCode: 200, Header: hdr, Body: page})
	if err != nil {
		t.Fatal(err)
	}
	if first.Revisit {
		t.Fatal("first copy of a payload written as a revisit")
	}
	dup, err := w.WriteExchange(&warc.Exchange{URL: "http://b.test/copy", Date: date.Add(time.Second),
		RequestHeader: reqHdr, StatusCode: 200, Header: hdr, Body: page})
	if err != nil {
		t.Fatal(err)
	}
	if !dup.Revisit || dup.Ref.RecordID != first.Ref.RecordID {
		t.Fatalf("identical payload: got %+v, want a revisit of %s", dup, first.Ref.RecordID)
	}
	nm, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/page?x=1", Date: date.Add(2 * time.Second),
		RequestHeader: reqHdr, StatusCode: 304, Header: http.Header{"Etag": {`"v1"`}}})
	if err != nil {
		t.Fatal(err)
	}
	if !nm.Revisit {
		t.Fatal("304 not written as a revisit")
	}
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/missing", Date: date, StatusCode: 404,
		Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("not found")}); err != nil {
		t.Fatal(err)
	}
	if records, revisits := w.Stats(); records != 8 || revisits != 2 {
		t.Errorf("Stats() = %d records, %d revisits; want 8, 2", records, revisits)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	recs := readAll(t, dir)
	if len(recs) != 9 {
		t.Fatalf("read %d records, want 9 (warcinfo + 4 × (response|revisit, request))", len(recs))
	}
	if got := recs[0].header["warc-type"]; got != "warcinfo" {
		t.Fatalf("first record is %q, want warcinfo", got)
	}
	if !bytes.Contains(recs[0].content, []byte("operator: test operator")) {
		t.Errorf("warcinfo lacks the operator: %q", recs[0].content)
	}
	ids := map[string]readRecord{}
	for _, r := range recs {
		if r.header["warc-block-digest"] != sha1b32(r.content) {
			t.Errorf("%s %s: block digest %s does not match the block (%s)", r.header["warc-type"],
				r.header["warc-target-uri"], r.header["warc-block-digest"], sha1b32(r.content))
		}
		ids[r.header["warc-record-id"]] = r
	}

	resp := recs[1]
	if resp.header["warc-type"] != "response" || resp.header["warc-target-uri"] != "http://a.test/page?x=1" {
		t.Fatalf("record 1 = %v, want the response for http://a.test/page?x=1", resp.header)
	}
	if resp.header["warc-ip-address"] != "127.0.0.1" {
		t.Errorf("WARC-IP-Address = %q", resp.header["warc-ip-address"])
	}
	if resp.header["warc-date"] != "2026-01-02T03:04:05Z" {
		t.Errorf("WARC-Date = %q", resp.header["warc-date"])
	}
	head, body := httpBody(t, resp.content)
	if !bytes.Equal(body, page) {
		t.Errorf("response body = %q, want %q", body, page)
	}
	if resp.header["warc-payload-digest"] != sha1b32(page) {
		t.Errorf("payload digest %s, want %s", resp.header["warc-payload-digest"], sha1b32(page))
	}
	if strings.Contains(head, "Content-Encoding") || !strings.Contains(head, fmt.Sprintf("Content-Length: %d", len(page))) {
		t.Errorf("recorded head does not describe the decoded body:\n%s", head)
	}
	if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("status line: %q", head)
	}

	req := recs[2]
	if req.header["warc-type"] != "request" || req.header["warc-concurrent-to"] != resp.header["warc-record-id"] {
		t.Errorf("request record does not point at its response: %v", req.header)
	}
	if !bytes.HasPrefix(req.content, []byte("GET /page?x=1 HTTP/1.1\r\n")) || !bytes.Contains(req.content, []byte("Host: a.test\r\n")) ||
		!bytes.Contains(req.content, []byte("User-Agent: testbot/1.0")) {
		t.Errorf("request block: %q", req.content)
	}

	rev := recs[3]
	if rev.header["warc-type"] != "revisit" || rev.header["warc-target-uri"] != "http://b.test/copy" {
		t.Fatalf("record 3 = %v, want the revisit for http://b.test/copy", rev.header)
	}
	if !strings.HasSuffix(rev.header["warc-profile"], "/revisit/identical-payload-digest") ||
		rev.header["warc-refers-to"] != resp.header["warc-record-id"] ||
		rev.header["warc-refers-to-target-uri"] != "http://a.test/page?x=1" {
		t.Errorf("revisit does not refer to the first copy: %v", rev.header)
	}
	if _, body := httpBody(t, rev.content); len(body) != 0 {
		t.Errorf("revisit record repeats the payload (%d bytes)", len(body))
	}
	if nmrec := recs[5]; nmrec.header["warc-type"] != "revisit" ||
		!strings.HasSuffix(nmrec.header["warc-profile"], "/revisit/server-not-modified") {
		t.Errorf("304 record: %v", nmrec.header)
	}
	if notFound := recs[7]; notFound.header["warc-type"] != "response" {
		t.Errorf("404 record: %v", notFound.header)
	} else if _, b := httpBody(t, notFound.content); string(b) != "not found" {
		t.Errorf("404 body %q", b)
	}

	// Every record is its own gzip member, so readers can seek to records.
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if n := gzipMembers(t, files[0]); n != 9 {
		t.Errorf("%d gzip members, want one per record (9)", n)
	}
	if !strings.HasPrefix(filepath.Base(files[0]), "crawlkit-20260304050607-00001.warc") {
		t.Errorf("file name %s", filepath.Base(files[0]))
	}
}

func gzipMembers(t *testing.T, name string) int {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
		n++
		if err := zr.Reset(br); errors.Is(err, io.EOF) {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

func TestRotationBySize(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, MaxFileSize: 8 << 10, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	const n = 12
	bodies := map[string][]byte{}
	for i := 0; i < n; i++ {
		body := make([]byte, 3000)
		for j := range body {
			body[j] = byte('a' + rng.Intn(26)) // incompressible enough to fill files
		}
		u := fmt.Sprintf("http://rot.test/p%d", i)
		bodies[u] = body
		if _, err := w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) < 3 {
		t.Fatalf("%d files for %d × 3 KB with an 8 KiB limit; want rotation", len(files), n)
	}
	recs := readAll(t, dir)
	perFile := map[string]int{}
	responses := 0
	for i, r := range recs {
		if i == 0 || recs[i-1].file != r.file {
			if r.header["warc-type"] != "warcinfo" {
				t.Errorf("file %s does not start with warcinfo", r.file)
			}
		}
		perFile[r.file]++
		if r.header["warc-type"] == "response" {
			responses++
			_, body := httpBody(t, r.content)
			if !bytes.Equal(body, bodies[r.header["warc-target-uri"]]) {
				t.Errorf("%s: body differs after read-back", r.header["warc-target-uri"])
			}
		}
	}
	if responses != n {
		t.Errorf("read %d responses back, want %d", responses, n)
	}
}

func TestBadInputAndClosedWriter(t *testing.T) {
	if _, err := warc.New(warc.Config{}); err == nil {
		t.Error("New without Dir succeeded")
	}
	if _, err := warc.New(warc.Config{Dir: t.TempDir(), Prefix: "a/b"}); err == nil {
		t.Error("New with a path in Prefix succeeded")
	}
	w, err := warc.New(warc.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(&warc.Exchange{StatusCode: 200}); err == nil {
		t.Error("exchange without URL accepted")
	}
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://x.test/", StatusCode: 0}); err == nil {
		t.Error("exchange without status accepted")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://x.test/", StatusCode: 200}); !errors.Is(err, warc.ErrClosed) {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestDigestMemoryIsBounded(t *testing.T) {
	w, err := warc.New(warc.Config{Dir: t.TempDir(), DigestMemory: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(u, body string) warc.Result {
		t.Helper()
		res, err := w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	write("http://m.test/1", "one")
	write("http://m.test/2", "two")
	write("http://m.test/3", "three") // forgets "one"
	if res := write("http://m.test/1b", "one"); res.Revisit {
		t.Error("a forgotten digest still produced a revisit")
	}
	if res := write("http://m.test/3b", "three"); !res.Revisit {
		t.Error("a remembered digest did not produce a revisit")
	}
}

func ExampleWriter() {
	dir, err := os.MkdirTemp("", "warc-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	w, err := warc.New(warc.Config{Dir: dir, Software: "examplebot/1.0"})
	if err != nil {
		panic(err)
	}
	body := []byte("<html><title>hello</title></html>")
	for _, u := range []string{"http://a.test/", "http://a.test/copy"} {
		res, err := w.WriteExchange(&warc.Exchange{
			URL:        u,
			StatusCode: 200,
			Header:     http.Header{"Content-Type": {"text/html"}},
			Body:       body,
		})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s revisit=%v\n", u, res.Revisit)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	records, revisits := w.Stats()
	fmt.Println(records, "records,", revisits, "revisit")
	// Output:
	// http://a.test/ revisit=false
	// http://a.test/copy revisit=true
	// 4 records, 1 revisit
}

// TestConcurrentWriters writes from many goroutines through two Writers at
// once; run with -race it proves the record encoder's shared state is
// guarded.
func TestConcurrentWriters(t *testing.T) {
	var writers []*warc.Writer
	for i := 0; i < 2; i++ {
		w, err := warc.New(warc.Config{Dir: t.TempDir(), Prefix: fmt.Sprintf("w%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		writers = append(writers, w)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				w := writers[(g+i)%2]
				body := []byte(fmt.Sprintf("goroutine %d page %d", g, i))
				if _, err := w.WriteExchange(&warc.Exchange{URL: fmt.Sprintf("http://c.test/%d/%d", g, i), StatusCode: 200, Body: body}); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var total int64
	for _, w := range writers {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		records, _ := w.Stats()
		total += records
	}
	if total != 8*8*2 {
		t.Errorf("%d records written, want %d", total, 8*8*2)
	}
}

// randomBody returns n lowercase letters, which compress to about 60%.
func randomBody(rng *rand.Rand, n int) []byte {
	body := make([]byte, n)
	for i := range body {
		body[i] = byte('a' + rng.Intn(26))
	}
	return body
}

// TestWritersSharingADirectory runs Writers one after the other and at the
// same time in one directory, with a clock that stands still, so every
// Writer generates the same names: none may replace another's file.
func TestWritersSharingADirectory(t *testing.T) {
	dir := t.TempDir()
	// A file left unfinished by a crashed process.
	stale := filepath.Join(dir, "crawlkit-20260304050607-00002.warc.gz.open")
	if err := os.WriteFile(stale, []byte("crashed"), 0o644); err != nil {
		t.Fatal(err)
	}
	newWriter := func() *warc.Writer {
		t.Helper()
		w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	write := func(w *warc.Writer, u string) {
		t.Helper()
		if _, err := w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: []byte("body of " + u)}); err != nil {
			t.Fatal(err)
		}
	}
	closeWriter := func(w *warc.Writer) {
		t.Helper()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// One after the other, as across a restart.
	w1 := newWriter()
	write(w1, "http://a.test/1")
	closeWriter(w1)
	w2 := newWriter()
	write(w2, "http://a.test/2")
	closeWriter(w2)
	n := 0
	for _, r := range readAll(t, dir) {
		if r.header["warc-type"] == "response" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d responses on disk after two Writers each wrote one", n)
	}
	// Both open at once.
	w3, w4 := newWriter(), newWriter()
	write(w3, "http://a.test/3")
	write(w4, "http://a.test/4")
	closeWriter(w4)
	closeWriter(w3)

	got := map[string]string{} // target URI -> file
	for _, r := range readAll(t, dir) {
		if r.header["warc-type"] == "response" {
			u := r.header["warc-target-uri"]
			if _, body := httpBody(t, r.content); string(body) != "body of "+u {
				t.Errorf("%s: body %q", u, body)
			}
			if f, dup := got[u]; dup {
				t.Errorf("%s in both %s and %s", u, f, r.file)
			}
			got[u] = r.file
		}
	}
	if len(got) != 4 {
		t.Errorf("responses on disk: %v; want all 4 of 4 Writers", got)
	}
	if b, err := os.ReadFile(stale); err != nil || string(b) != "crashed" {
		t.Errorf("unfinished file of another process: %q, %v", b, err)
	}
	open, _ := filepath.Glob(filepath.Join(dir, "*.open"))
	if len(open) != 1 {
		t.Errorf("files left open: %v", open)
	}
}

// TestFailedWriteIsNotARevisitTarget makes writing the first copy of a
// payload fail: the next copy must be written in full, not as a revisit of
// a record that does not exist.
func TestFailedWriteIsNotARevisitTarget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	// Replace the directory by a file, so no file can be created in it.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	body := []byte("<html>same payload</html>")
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/1", StatusCode: 200, Body: body}); err == nil {
		t.Fatal("writing into a directory that is a file succeeded")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/2", StatusCode: 200, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revisit {
		t.Errorf("written as a revisit of %s, which was never written", res.Ref.URL)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var responses int
	for _, r := range readAll(t, dir) {
		if r.header["warc-type"] == "response" {
			responses++
			if _, b := httpBody(t, r.content); !bytes.Equal(b, body) {
				t.Errorf("response body %q", b)
			}
		}
	}
	if responses != 1 {
		t.Errorf("%d response records, want 1 holding the payload", responses)
	}
}

// TestCloseReportsFailure removes the directory of the open file, so Close
// cannot give the file its final name.
func TestCloseReportsFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w, err := warc.New(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/", StatusCode: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close returned nil although the file could not be finished")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestExchangeNeverSplitAcrossFiles writes exchanges of varied sizes with a
// small size limit: a request must be in the file of its response, and a
// file may exceed the limit only if it holds a single exchange.
func TestExchangeNeverSplitAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	const limit = 8 << 10
	w, err := warc.New(warc.Config{Dir: dir, MaxFileSize: limit, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	bodies := map[string][]byte{}
	for i := 0; i < 120; i++ {
		n := 500 + rng.Intn(3000)
		if i == 100 {
			n = 2 << 20 // kept in a temporary file by the record builder
		}
		u := fmt.Sprintf("http://rot.test/p%d", i)
		bodies[u] = randomBody(rng, n)
		if _, err := w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: bodies[u]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	recs := readAll(t, dir)
	respFile := map[string]string{}
	exchanges := map[string]int{}
	for i, r := range recs {
		if i == 0 || recs[i-1].file != r.file {
			if r.header["warc-type"] != "warcinfo" || r.header["warc-filename"] != r.file {
				t.Errorf("%s starts with %s record for %q, want its warcinfo", r.file, r.header["warc-type"], r.header["warc-filename"])
			}
		}
		if r.header["warc-block-digest"] != sha1b32(r.content) {
			t.Errorf("%s %s: block digest does not match", r.header["warc-type"], r.header["warc-target-uri"])
		}
		switch r.header["warc-type"] {
		case "response":
			respFile[r.header["warc-record-id"]] = r.file
			exchanges[r.file]++
			if _, b := httpBody(t, r.content); !bytes.Equal(b, bodies[r.header["warc-target-uri"]]) {
				t.Errorf("%s: body differs after read-back", r.header["warc-target-uri"])
			}
		case "request":
			if rf := respFile[r.header["warc-concurrent-to"]]; rf != r.file {
				t.Errorf("request for %s in %s, its response in %q", r.header["warc-target-uri"], r.file, rf)
			}
		}
	}
	if len(respFile) != len(bodies) {
		t.Errorf("read %d responses, want %d", len(respFile), len(bodies))
	}
	for name, n := range exchanges {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > limit && n > 1 {
			t.Errorf("%s: %d bytes with %d exchanges, over the %d byte limit", name, fi.Size(), n, limit)
		}
	}
	if len(exchanges) < 20 {
		t.Errorf("%d files; want rotation", len(exchanges))
	}
}

// TestRequestHostWithoutUserinfo checks the Host header of the recorded
// request drops the URL's userinfo.
func TestRequestHostWithoutUserinfo(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://user:secret@h.test/p", "http://user:secret@[2001:db8::1]:8080/p"} {
		if _, err := w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, r := range readAll(t, dir) {
		if r.header["warc-type"] == "request" {
			head, _ := httpBody(t, r.content)
			for _, line := range strings.Split(head, "\r\n") {
				if h, ok := strings.CutPrefix(line, "Host: "); ok {
					hosts = append(hosts, h)
				}
			}
		}
	}
	if want := []string{"h.test", "[2001:db8::1]:8080"}; fmt.Sprint(hosts) != fmt.Sprint(want) {
		t.Errorf("Host headers %q, want %q", hosts, want)
	}
}

// TestNoTemporaryFilesLeft writes bodies large enough for the record
// builder to keep them in temporary files, which must be removed.
func TestNoTemporaryFilesLeft(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	w, err := warc.New(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	body := randomBody(rng, 2<<20)
	for _, u := range []string{"http://a.test/big", "http://a.test/copy"} {
		if _, err := w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d temporary files left, e.g. %s", len(left), left[0].Name())
	}
}
