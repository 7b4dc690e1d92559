package warc_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// TestWriteMetadata writes a capture and a metadata record about it, and
// reads both back with an independent reader.
func TestWriteMetadata(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	w, err := warc.New(warc.Config{Dir: dir, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/p", Date: now, StatusCode: 200,
		Header: http.Header{"Content-Usage": {"train-ai=n"}}, Body: []byte("hello")})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"usage":{"train-ai":"disallowed"}}`)
	md, err := w.WriteMetadata(&warc.Metadata{URL: "http://a.test/p", Date: now, ConcurrentTo: res.Ref.RecordID,
		ContentType: "application/json", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if md.Ref.RecordID == "" || md.Ref.RecordID == res.Ref.RecordID || md.File != res.File {
		t.Errorf("metadata result %+v, exchange %+v", md, res)
	}
	if _, err := w.WriteMetadata(&warc.Metadata{URL: "http://a.test/p"}); err == nil {
		t.Error("metadata without a Content-Type written")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteMetadata(&warc.Metadata{URL: "http://a.test/p", ContentType: "text/plain"}); !errors.Is(err, warc.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	var found bool
	for _, r := range readAll(t, dir) {
		if r.header["warc-type"] != "metadata" {
			continue
		}
		found = true
		if got := r.header["warc-concurrent-to"]; got != "<"+res.Ref.RecordID+">" {
			t.Errorf("WARC-Concurrent-To %q, response %q", got, res.Ref.RecordID)
		}
		if r.header["warc-target-uri"] != "http://a.test/p" || r.header["content-type"] != "application/json" {
			t.Errorf("header %v", r.header)
		}
		if r.header["warc-date"] != "2026-03-01T12:00:00Z" {
			t.Errorf("WARC-Date %q", r.header["warc-date"])
		}
		if string(r.content) != string(body) {
			t.Errorf("content %q", r.content)
		}
	}
	if !found {
		t.Fatal("no metadata record")
	}
	if n, _ := w.Stats(); n != 3 {
		t.Errorf("%d records, want 3 (response, request, metadata)", n)
	}
}
