package crawlkit

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/usage"
)

// JSONLSink writes one JSON object per fetched page (JSON Lines), the
// output a search index, a dataset or jq reads without a WARC reader. Files
// rotate at a size and may be gzip-compressed; each file is complete and
// valid on its own once closed.
type JSONLSink struct {
	opts JSONLConfig

	mu     sync.Mutex
	seq    int
	f      *os.File
	gz     *gzip.Writer
	buf    *bufio.Writer
	size   int64 // bytes written to the current file, before compression
	closed bool
}

// JSONLConfig configures a JSONLSink.
type JSONLConfig struct {
	// Dir receives the files, named Prefix-NNNNN.jsonl (".jsonl.gz" with
	// Gzip); it is created if needed. Numbering continues after the
	// files already there, so a resumed crawl does not overwrite them.
	Dir    string
	Prefix string // default "pages"
	// MaxBytes starts a new file once the current one holds this many
	// bytes (before compression; default 1 GiB).
	MaxBytes int64
	Gzip     bool
	// Headers lists the response header fields to record (by canonical
	// name); none by default.
	Headers []string
	// Text records the page's visible text; Links its links. Both are
	// off by default: they make records many times larger.
	Text, Links bool
	// Markdown records the page's main content as Markdown and its token
	// estimate (Page.Markdown). Off by default: it runs main-content
	// extraction, about ten times the CPU of the crawl's own pass.
	Markdown bool
	// Structured records the page's structured data (Page.Structured:
	// JSON-LD blocks, microdata, Open Graph and Twitter properties), for
	// the HTML pages that carry some; off by default.
	Structured bool
	// Usage records the page's usage preferences (Page.Usage), when it
	// has any.
	Usage bool
}

// PageRecord is one line of a JSONLSink's output.
type PageRecord struct {
	URL         string            `json:"url"`
	FinalURL    string            `json:"final_url,omitempty"`
	Status      int               `json:"status"`
	ContentType string            `json:"content_type,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Depth       int               `json:"depth"`
	Fetched     time.Time         `json:"fetched"`
	// DurationMS is the fetch's duration, first byte of the request to
	// last byte of the body.
	DurationMS  float64      `json:"duration_ms"`
	Bytes       int          `json:"bytes"`
	Truncated   bool         `json:"truncated,omitempty"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	Language    string       `json:"language,omitempty"`
	Canonical   string       `json:"canonical,omitempty"`
	Fingerprint string       `json:"fingerprint,omitempty"` // 16 hex digits
	DuplicateOf string       `json:"duplicate_of,omitempty"`
	Noindex     bool         `json:"noindex,omitempty"`
	Text        string       `json:"text,omitempty"`
	Links       []LinkRecord `json:"links,omitempty"`
	Markdown    string       `json:"markdown,omitempty"`
	Tokens      int          `json:"tokens,omitempty"`
	// Structured is the page's structured.Data as JSON
	// (JSONLConfig.Structured).
	Structured json.RawMessage `json:"structured,omitempty"`
	// Usage is Page.Usage, with JSONLConfig.Usage.
	Usage *usage.Signals `json:"usage,omitempty"`
}

// LinkRecord is one link of a PageRecord.
type LinkRecord struct {
	URL      string `json:"url"`
	Text     string `json:"text,omitempty"`
	Followed bool   `json:"followed"`
	Rejected string `json:"rejected,omitempty"`
}

// NewJSONLSink opens the first file in opts.Dir.
func NewJSONLSink(opts JSONLConfig) (*JSONLSink, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("%w: JSONLConfig.Dir is empty", ErrConfig)
	}
	if opts.MaxBytes < 0 {
		return nil, fmt.Errorf("%w: JSONLConfig.MaxBytes %d is negative", ErrConfig, opts.MaxBytes)
	}
	if opts.Prefix == "" {
		opts.Prefix = "pages"
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = 1 << 30
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("crawlkit: JSONL sink: %w", err)
	}
	s := &JSONLSink{opts: opts}
	existing, err := filepath.Glob(filepath.Join(opts.Dir, opts.Prefix+"-*.jsonl*"))
	if err != nil {
		return nil, fmt.Errorf("crawlkit: JSONL sink: %w", err)
	}
	for _, name := range existing {
		var n int
		if _, err := fmt.Sscanf(filepath.Base(name), opts.Prefix+"-%05d.jsonl", &n); err == nil && n > s.seq {
			s.seq = n
		}
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// Record returns p as the sink records it.
func (s *JSONLSink) Record(p *Page) *PageRecord { return s.opts.Record(p) }

// Record returns p as a JSONLSink with these options records it, for
// writers of the same records elsewhere (the distributed results stream)
// without a file of their own.
func (o JSONLConfig) Record(p *Page) *PageRecord {
	r := &PageRecord{
		URL: p.URL, Status: p.StatusCode, ContentType: p.ContentType, Depth: p.Depth,
		Fetched: p.Fetched.UTC(), DurationMS: float64(p.Timing.Total) / float64(time.Millisecond),
		Bytes: len(p.Body), Truncated: p.Truncated, Title: p.Title, Description: p.Description,
		Language: p.Language, Canonical: p.Canonical, DuplicateOf: p.DuplicateOf, Noindex: p.Noindex,
	}
	if p.FinalURL != p.URL {
		r.FinalURL = p.FinalURL
	}
	if p.Fingerprint != 0 {
		r.Fingerprint = fmt.Sprintf("%016x", p.Fingerprint)
	}
	for _, h := range o.Headers {
		if v := p.Header.Get(h); v != "" {
			if r.Headers == nil {
				r.Headers = map[string]string{}
			}
			r.Headers[h] = v
		}
	}
	if o.Text {
		r.Text = p.Text
	}
	if o.Markdown {
		if d, err := p.Markdown(); err == nil {
			r.Markdown, r.Tokens = d.Markdown, d.Tokens
		}
	}
	if o.Usage && !p.Usage.IsZero() {
		u := p.Usage
		r.Usage = &u
	}
	if o.Links {
		r.Links = make([]LinkRecord, 0, len(p.Links))
		for _, l := range p.Links {
			if l.URL == "" {
				continue
			}
			r.Links = append(r.Links, LinkRecord{URL: l.URL, Text: l.Text, Followed: l.Followed, Rejected: l.Rejected})
		}
	}
	if o.Structured {
		if d, err := p.Structured(); err == nil && !d.Empty() {
			r.Structured, _ = json.Marshal(d)
		}
	}
	return r
}

// Write appends p's record, starting a new file first when the current
// one is full.
func (s *JSONLSink) Write(_ context.Context, p *Page) error {
	line, err := json.Marshal(s.Record(p))
	if err != nil {
		return fmt.Errorf("crawlkit: JSONL sink: %w", err)
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("crawlkit: JSONL sink: write after Close")
	}
	if s.size > 0 && s.size+int64(len(line)) > s.opts.MaxBytes {
		if err := s.finish(); err != nil {
			return err
		}
		if err := s.open(); err != nil {
			return err
		}
	}
	if _, err := s.buf.Write(line); err != nil {
		return fmt.Errorf("crawlkit: JSONL sink: %w", err)
	}
	s.size += int64(len(line))
	return nil
}

// Close flushes and syncs the current file.
func (s *JSONLSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.finish()
}

// open starts the next file.
func (s *JSONLSink) open() error {
	s.seq++
	name := fmt.Sprintf("%s-%05d.jsonl", s.opts.Prefix, s.seq)
	if s.opts.Gzip {
		name += ".gz"
	}
	f, err := os.OpenFile(filepath.Join(s.opts.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("crawlkit: JSONL sink: %w", err)
	}
	s.f = f
	var w io.Writer = f
	s.gz = nil
	if s.opts.Gzip {
		s.gz = gzip.NewWriter(f)
		w = s.gz
	}
	s.size = 0
	s.buf = bufio.NewWriterSize(w, 64<<10)
	return nil
}

// finish flushes, syncs and closes the current file.
func (s *JSONLSink) finish() error {
	err := s.buf.Flush()
	if s.gz != nil {
		err = errors.Join(err, s.gz.Close())
	}
	err = errors.Join(err, s.f.Sync(), s.f.Close())
	if err != nil {
		return fmt.Errorf("crawlkit: JSONL sink: %w", err)
	}
	return nil
}
