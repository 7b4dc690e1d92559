package warc_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	iawarc "github.com/internetarchive/gowarc"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// faults makes the operations of the files a Writer creates fail while the
// corresponding error is set.
type faults struct {
	write, truncate, sync error
}

type faultyFile struct {
	warc.File
	faults *faults
}

// WriteAt writes half of p before failing, as a full disk does.
func (f faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if f.faults.write != nil {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, f.faults.write
	}
	return f.File.WriteAt(p, off)
}

func (f faultyFile) Truncate(size int64) error {
	if f.faults.truncate != nil {
		return f.faults.truncate
	}
	return f.File.Truncate(size)
}

func (f faultyFile) Sync() error {
	if f.faults.sync != nil {
		return f.faults.sync
	}
	return f.File.Sync()
}

func faultyWriter(t *testing.T, opts warc.Config) (*warc.Writer, *faults) {
	t.Helper()
	w, err := warc.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	fs := &faults{}
	warc.WrapFiles(w, func(f warc.File) warc.File { return faultyFile{File: f, faults: fs} })
	return w, fs
}

// TestWriteFailureLeavesValidFile fails writes halfway through an
// exchange, as a full disk does: the error is returned, the file is cut back
// to a valid WARC file, and the payload is not taken as written.
func TestWriteFailureLeavesValidFile(t *testing.T) {
	dir := t.TempDir()
	w, fs := faultyWriter(t, warc.Config{Dir: dir, Now: fixedNow})
	rng := rand.New(rand.NewSource(1))
	large := string(randomBody(rng, 4000))
	write := func(u, body string) (warc.Result, error) {
		return w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: []byte(body)})
	}
	if _, err := write("http://a.test/1", "first"); err != nil {
		t.Fatal(err)
	}
	fs.write = syscall.ENOSPC
	if _, err := write("http://a.test/2", large); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	fs.write = nil
	res, err := write("http://a.test/3", large)
	if err != nil {
		t.Fatal(err)
	}
	if res.Revisit {
		t.Errorf("written as a revisit of %s, whose write failed", res.Ref.URL)
	}
	// The file ends with the failed exchange when it is closed.
	fs.write = syscall.ENOSPC
	if _, err := write("http://a.test/4", string(randomBody(rng, 4000))); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	fs.write = nil
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if records, _ := w.Stats(); records != 4 {
		t.Errorf("Stats() = %d records, want 4", records)
	}

	var got []string
	for _, r := range readAll(t, dir) {
		got = append(got, r.header["warc-type"]+" "+r.header["warc-target-uri"])
		if r.header["warc-type"] == "response" && r.header["warc-target-uri"] == "http://a.test/3" {
			if _, b := httpBody(t, r.content); string(b) != large {
				t.Errorf("http://a.test/3: body differs after read-back")
			}
		}
	}
	want := []string{"warcinfo ", "response http://a.test/1", "request http://a.test/1",
		"response http://a.test/3", "request http://a.test/3"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if n := gzipMembers(t, files[0]); n != 5 {
		t.Errorf("%d gzip members, want 5", n)
	}
}

// TestTruncateFailureAbandonsFile fails a write and the truncation after
// it: the file is left unfinished and the next exchange starts a new one.
func TestTruncateFailureAbandonsFile(t *testing.T) {
	dir := t.TempDir()
	w, fs := faultyWriter(t, warc.Config{Dir: dir, Now: fixedNow})
	write := func(u string) (warc.Result, error) {
		return w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: []byte(u)})
	}
	first, err := write("http://a.test/1")
	if err != nil {
		t.Fatal(err)
	}
	fs.write, fs.truncate = syscall.EIO, syscall.EIO
	if _, err := write("http://a.test/2"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("failed write: %v, want EIO", err)
	}
	fs.write, fs.truncate = nil, nil
	next, err := write("http://a.test/3")
	if err != nil {
		t.Fatal(err)
	}
	if next.File == first.File {
		t.Errorf("exchange after an unrepairable file went to the same file %s", next.File)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first.File + warc.OpenSuffix); err != nil {
		t.Errorf("damaged file not left unfinished: %v", err)
	}
	recs := readAll(t, dir)
	if len(recs) != 3 || recs[1].header["warc-target-uri"] != "http://a.test/3" {
		t.Errorf("finished files hold %d records, want warcinfo, response and request of http://a.test/3", len(recs))
	}
}

// TestFailedStartLeavesNoFile fails writing the warcinfo record of a new
// file: the file is removed, and the next exchange starts one.
func TestFailedStartLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	w, fs := faultyWriter(t, warc.Config{Dir: dir, Now: fixedNow})
	fs.write = syscall.ENOSPC
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/1", StatusCode: 200, Body: []byte("x")}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left, e.g. %s", len(left), left[0].Name())
	}
	fs.write = nil
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/2", StatusCode: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if recs := readAll(t, dir); len(recs) != 3 || recs[0].header["warc-type"] != "warcinfo" {
		t.Errorf("read %d records, want warcinfo, response and request", len(recs))
	}
}

// TestCloseReportsSyncFailure fails syncing the file at Close.
func TestCloseReportsSyncFailure(t *testing.T) {
	dir := t.TempDir()
	w, fs := faultyWriter(t, warc.Config{Dir: dir})
	res, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/", StatusCode: 200, Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	fs.sync = syscall.EIO
	if err := w.Close(); !errors.Is(err, syscall.EIO) {
		t.Errorf("Close: %v, want EIO", err)
	}
	if _, err := os.Stat(res.File + warc.OpenSuffix); err != nil {
		t.Errorf("file that may not be on disk was finished: %v", err)
	}
}

// TestResultLocatesRecord checks Result.File names the file once finished
// and Offset and Length delimit the response or revisit record in it.
func TestResultLocatesRecord(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	var results []warc.Result
	for _, u := range []string{"http://a.test/1", "http://a.test/2", "http://a.test/copy-of-1"} {
		body := "body " + u
		if u == "http://a.test/copy-of-1" {
			body = "body http://a.test/1"
		}
		res, err := w.WriteExchange(&warc.Exchange{URL: u, StatusCode: 200, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	file := results[0].File
	if _, err := os.Stat(file + warc.OpenSuffix); err != nil {
		t.Errorf("open file: %v", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Result.File exists before the file is finished: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if res.File != file {
			t.Errorf("result %d in %s, want %s", i, res.File, file)
		}
		if res.Offset <= 0 || res.Length <= 0 || res.Offset+res.Length > int64(len(data)) {
			t.Fatalf("result %d: offset %d, length %d in a file of %d bytes", i, res.Offset, res.Length, len(data))
		}
		member := data[res.Offset : res.Offset+res.Length]
		// Exactly one gzip member ...
		br := bytes.NewReader(member) // an io.ByteReader: gzip reads no further than the member
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		if br.Len() != 0 {
			t.Errorf("result %d: %d bytes after the gzip member", i, br.Len())
		}
		// ... holding the record.
		r, err := iawarc.NewReader(bytes.NewReader(member))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.ReadRecord()
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		typ, uri := rec.Header.Get("WARC-Type"), rec.Header.Get("WARC-Target-URI")
		if res.Revisit {
			if typ != "revisit" || uri != "http://a.test/copy-of-1" || rec.Header.Get("WARC-Refers-To") != "<"+res.Ref.RecordID+">" {
				t.Errorf("result %d locates %s %s referring to %s", i, typ, uri, rec.Header.Get("WARC-Refers-To"))
			}
		} else if typ != "response" || rec.Header.Get("WARC-Record-ID") != "<"+res.Ref.RecordID+">" {
			t.Errorf("result %d locates %s %s %s, want response %s", i, typ, uri, rec.Header.Get("WARC-Record-ID"), res.Ref.RecordID)
		}
		rec.Content.Close()
		r.Close()
	}
	if !results[2].Revisit {
		t.Error("third exchange is not a revisit")
	}
}
