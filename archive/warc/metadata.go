package warc

import (
	"errors"
	"fmt"
	"time"
)

// Metadata is a metadata record (WARC 1.1 §6.6): what the crawler learned
// about a capture, beside the capture's own records.
type Metadata struct {
	// URL is the capture's URL (WARC-Target-URI).
	URL string
	// Date is the capture's date (WARC-Date); zero means now.
	Date time.Time
	// ConcurrentTo is the WARC-Record-ID of the record of the same capture
	// event the metadata describes (WARC-Concurrent-To, §5.7), such as a
	// response's Result.Ref.RecordID; RefersTo, instead or as well, that
	// of an earlier record it describes (WARC-Refers-To, §5.11), such as
	// the response a revisit repeats.
	ConcurrentTo, RefersTo string
	// ContentType is the block's media type; Body the block.
	ContentType string
	Body        []byte
}

// WriteMetadata writes md as one metadata record. It may go to another file
// than the records it refers to, if the file rotated in between.
func (w *Writer) WriteMetadata(md *Metadata) (Result, error) {
	if md == nil || md.URL == "" {
		return Result{}, errors.New("warc: metadata without a URL")
	}
	if md.ContentType == "" {
		return Result{}, fmt.Errorf("warc: metadata for %s without a Content-Type", md.URL)
	}
	date := md.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	rec := newRecord("metadata")
	rec.add("WARC-Target-URI", md.URL)
	rec.add("WARC-Date", warcDate(date))
	rec.add("Content-Type", md.ContentType)
	if md.ConcurrentTo != "" {
		rec.add("WARC-Concurrent-To", "<"+md.ConcurrentTo+">")
	}
	if md.RefersTo != "" {
		rec.add("WARC-Refers-To", "<"+md.RefersTo+">")
	}
	rec.payload = md.Body
	rec.addBlockDigest()

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Result{}, ErrClosed
	}
	file, spans, err := w.file.writeExchange([]*record{rec}, nil, nil)
	if err != nil {
		return Result{}, fmt.Errorf("warc: writing metadata for %s: %w", md.URL, err)
	}
	w.records.Add(1)
	return Result{File: file, Offset: spans[0].offset, Length: spans[0].length,
		Ref: Ref{RecordID: rec.id, URL: md.URL, Date: rec.get("WARC-Date")}}, nil
}
