package warc

import (
	"errors"
	"fmt"
	"time"

	"github.com/nlnwa/gowarc"
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
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Result{}, ErrClosed
	}
	date := md.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	rec, err := buildMetadata(md, date.UTC())
	if err != nil {
		return Result{}, err
	}
	defer rec.Close()
	file, spans, err := w.file.writeExchange(rec)
	if err != nil {
		return Result{}, fmt.Errorf("warc: writing metadata for %s: %w", md.URL, err)
	}
	w.records.Add(1)
	id := rec.WarcHeader().GetId(gowarc.WarcRecordID)
	return Result{File: file, Offset: spans[0].offset, Length: spans[0].length,
		Ref: Ref{RecordID: id, URL: md.URL, Date: date.UTC().Format(time.RFC3339)}}, nil
}

func buildMetadata(md *Metadata, date time.Time) (gowarc.WarcRecord, error) {
	libraryMu.Lock()
	defer libraryMu.Unlock()
	rb := gowarc.NewRecordBuilder(gowarc.Metadata, recordOptions()...)
	rb.AddWarcHeader(gowarc.WarcTargetURI, md.URL)
	rb.AddWarcHeaderTime(gowarc.WarcDate, date)
	rb.AddWarcHeader(gowarc.ContentType, md.ContentType)
	if md.ConcurrentTo != "" {
		rb.AddWarcHeader(gowarc.WarcConcurrentTo, "<"+md.ConcurrentTo+">")
	}
	if md.RefersTo != "" {
		rb.AddWarcHeader(gowarc.WarcRefersTo, "<"+md.RefersTo+">")
	}
	if _, err := rb.Write(md.Body); err != nil {
		return nil, fmt.Errorf("warc: metadata record for %s: %w", md.URL, err)
	}
	rec, _, err := rb.Build()
	if err != nil {
		return nil, fmt.Errorf("warc: metadata record for %s: %w", md.URL, err)
	}
	return rec, nil
}
