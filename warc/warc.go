// Package warc writes crawled HTTP exchanges as WARC/1.1 files (ISO 28500),
// the archival format of web archives.
//
// A Writer turns each fetched page into a request record and a response
// record that refer to each other, starts every file with a warcinfo record,
// compresses every record as its own gzip member (so a reader can seek to any
// record), computes block and payload digests (SHA-1, base32, as the web
// archiving tools expect), and rotates files when they reach a size limit.
// A response whose payload is identical to one already written by the same
// Writer is stored as a revisit record (profile identical-payload-digest)
// that refers to the first copy, and a 304 Not Modified answer as a revisit
// record of profile server-not-modified.
//
// Record encoding is done by github.com/nlnwa/gowarc; this package decides
// what goes into the records.
//
// The response record holds the body as the fetcher decoded it. Because the
// bytes are no longer those of the wire, the Content-Encoding and
// Transfer-Encoding headers are removed from the recorded response and
// Content-Length is set to the decoded length, so the record is a
// self-consistent HTTP message that replay tools can serve.
package warc

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nlnwa/gowarc"
)

// DefaultMaxFileSize is the size at which a WARC file is closed and the next
// one started, as in most crawlers' defaults.
const DefaultMaxFileSize = 1 << 30

// defaultDigestMemory bounds how many payload digests the Writer remembers to
// turn identical payloads into revisit records.
const defaultDigestMemory = 100_000

// libraryMu serializes every use of the record encoder. Building a record
// writes package-level state of the uuid generator it uses
// (uuid.EnableRandPool in gowarc's default options), and the file writer
// builds warcinfo records on its own goroutine when it starts a file, so
// concurrent writes, even through different Writers, race without it.
// Writing is sequential per file anyway.
var libraryMu sync.Mutex

// ErrClosed is returned by writes to a closed Writer.
var ErrClosed = errors.New("warc: writer is closed")

// Options configures a Writer. Dir is required; every other zero value is a
// usable default.
type Options struct {
	// Dir is the directory the files are written to. It is created if
	// missing.
	Dir string
	// Prefix starts every file name; the default is "crawlkit". Names are
	// Prefix-YYYYMMDDhhmmss-NNNNN.warc.gz.
	Prefix string
	// MaxFileSize is the size in bytes after which a file is rotated.
	// Zero means DefaultMaxFileSize (1 GiB).
	MaxFileSize int64
	// Software and Operator go into each file's warcinfo record.
	Software string
	Operator string
	// DigestMemory is how many payload digests are remembered for revisit
	// records; zero means 100 000. The oldest are forgotten first.
	DigestMemory int
	// Now returns the current time; nil means time.Now. It dates file names.
	Now func() time.Time
}

// Exchange is one fetch to be archived.
type Exchange struct {
	// URL is the requested URL (WARC-Target-URI).
	URL string
	// Date is when the fetch started (WARC-Date).
	Date time.Time
	// IP is the server address the response came from, if known.
	IP string
	// Method and RequestHeader describe the request; Method defaults to GET.
	Method        string
	RequestHeader http.Header
	// StatusCode, Proto and Header describe the response; Proto defaults to
	// HTTP/1.1.
	StatusCode int
	Proto      string
	Header     http.Header
	// Body is the response body, decoded.
	Body []byte
	// Truncated is set when the body was cut at a size limit; it becomes
	// the record's WARC-Truncated reason ("length").
	Truncated bool
}

// Ref identifies a response record already written, as a revisit record
// refers to it.
type Ref struct {
	RecordID      string
	URL           string
	Date          string
	PayloadDigest string
}

// Result says what WriteExchange wrote.
type Result struct {
	// File is the name of the file the response (or revisit) record went to.
	File string
	// Revisit is true when the response was written as a revisit record.
	Revisit bool
	// Ref identifies the response record, or for a revisit the record it
	// refers to.
	Ref Ref
}

// Writer writes exchanges to rotating WARC files. It is safe for concurrent
// use. Close it to flush and finish the last file.
type Writer struct {
	fw       *gowarc.WarcFileWriter
	opts     Options
	records  atomic.Int64
	revisits atomic.Int64

	// closeMu is held shared by every write and exclusively by Close, so
	// no record is written after Close returns.
	closeMu sync.RWMutex
	closed  bool

	digestMu sync.Mutex
	digests  map[string]*list.Element // payload digest -> element of lru (Ref)
	lru      *list.List
}

// New creates the directory if needed and returns a Writer. No file is
// created until the first record is written.
func New(opts Options) (*Writer, error) {
	if opts.Dir == "" {
		return nil, errors.New("warc: Options.Dir is required")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: creating %s: %w", opts.Dir, err)
	}
	if opts.Prefix == "" {
		opts.Prefix = "crawlkit"
	}
	if strings.ContainsAny(opts.Prefix, `/\`) {
		return nil, fmt.Errorf("warc: Options.Prefix %q must not contain a path separator", opts.Prefix)
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.DigestMemory <= 0 {
		opts.DigestMemory = defaultDigestMemory
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Software == "" {
		opts.Software = "crawlkit"
	}
	w := &Writer{opts: opts, digests: make(map[string]*list.Element), lru: list.New()}
	info := func(rb gowarc.WarcRecordBuilder) error {
		fields := "software: " + opts.Software + "\r\nformat: WARC File Format 1.1\r\n" +
			"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
		if opts.Operator != "" {
			fields += "operator: " + opts.Operator + "\r\n"
		}
		_, err := rb.WriteString(fields)
		return err
	}
	libraryMu.Lock()
	defer libraryMu.Unlock()
	w.fw = gowarc.NewWarcFileWriter(
		gowarc.WithCompression(true),
		gowarc.WithMaxFileSize(opts.MaxFileSize),
		gowarc.WithFileNameGenerator(&nameGenerator{dir: opts.Dir, prefix: opts.Prefix, now: opts.Now}),
		gowarc.WithWarcInfoFunc(info),
		gowarc.WithMaxConcurrentWriters(1),
		gowarc.WithRecordOptions(recordOptions()...),
	)
	return w, nil
}

func recordOptions() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithAddMissingRecordId(true),
		gowarc.WithAddMissingContentLength(true),
		gowarc.WithAddMissingDigest(true),
		gowarc.WithDefaultDigestAlgorithm("sha1"),
	}
}

// nameGenerator names files Prefix-timestamp-serial.warc; the file writer
// adds ".gz". It does not look up the host name or address, so naming a file
// touches no network.
type nameGenerator struct {
	dir    string
	prefix string
	now    func() time.Time
	serial atomic.Int64
}

func (g *nameGenerator) NewWarcfileName() (string, string) {
	n := g.serial.Add(1)
	ts := g.now().UTC().Format("20060102150405")
	return g.dir, fmt.Sprintf("%s-%s-%05d.warc", g.prefix, ts, n)
}

// WriteExchange writes ex as a request record and a response record (or a
// revisit record, see the package documentation).
func (w *Writer) WriteExchange(ex *Exchange) (Result, error) {
	if ex == nil || ex.URL == "" {
		return Result{}, errors.New("warc: exchange without a URL")
	}
	if ex.StatusCode < 100 || ex.StatusCode > 999 {
		return Result{}, fmt.Errorf("warc: exchange for %s has invalid status code %d", ex.URL, ex.StatusCode)
	}
	w.closeMu.RLock()
	defer w.closeMu.RUnlock()
	if w.closed {
		return Result{}, ErrClosed
	}
	date := ex.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	date = date.UTC()

	libraryMu.Lock()
	defer libraryMu.Unlock()
	resp, err := w.buildResponse(ex, date)
	if err != nil {
		return Result{}, err
	}
	payloadDigest := resp.WarcHeader().Get(gowarc.WarcPayloadDigest)
	own, err := resp.CreateRevisitRef(gowarc.ProfileIdenticalPayloadDigestV1_1)
	if err != nil {
		return Result{}, fmt.Errorf("warc: %w", err)
	}
	ref := Ref{RecordID: own.TargetRecordId, URL: own.TargetUri, Date: own.TargetDate, PayloadDigest: payloadDigest}

	record := resp
	res := Result{Ref: ref}
	switch {
	case ex.StatusCode == http.StatusNotModified:
		record, err = resp.ToRevisitRecord(&gowarc.RevisitRef{Profile: gowarc.ProfileServerNotModifiedV1_1})
		res.Revisit = true
	case ex.StatusCode >= 200 && ex.StatusCode < 300 && len(ex.Body) > 0:
		if first, seen := w.rememberDigest(ref); seen {
			record, err = resp.ToRevisitRecord(&gowarc.RevisitRef{
				Profile:        gowarc.ProfileIdenticalPayloadDigestV1_1,
				TargetRecordId: first.RecordID,
				TargetUri:      first.URL,
				TargetDate:     first.Date,
			})
			res.Revisit = true
			res.Ref = first
		}
	}
	if err != nil {
		return Result{}, fmt.Errorf("warc: revisit record for %s: %w", ex.URL, err)
	}

	req, err := w.buildRequest(ex, date, record.WarcHeader().GetId(gowarc.WarcRecordID))
	if err != nil {
		return Result{}, err
	}
	// Request and response go in one call so they land in the same file.
	responses := w.fw.Write(record, req)
	for _, r := range responses {
		if r.Err != nil {
			return Result{}, fmt.Errorf("warc: writing records for %s: %w", ex.URL, r.Err)
		}
	}
	if len(responses) > 0 {
		res.File = filepath.Join(w.opts.Dir, responses[0].FileName)
	}
	w.records.Add(int64(len(responses)))
	if res.Revisit {
		w.revisits.Add(1)
	}
	return res, nil
}

// rememberDigest records ref's payload digest and reports the first record
// seen with the same digest, if any.
func (w *Writer) rememberDigest(ref Ref) (Ref, bool) {
	if ref.PayloadDigest == "" {
		return Ref{}, false
	}
	w.digestMu.Lock()
	defer w.digestMu.Unlock()
	if el, ok := w.digests[ref.PayloadDigest]; ok {
		w.lru.MoveToFront(el)
		return el.Value.(Ref), true
	}
	w.digests[ref.PayloadDigest] = w.lru.PushFront(ref)
	if w.lru.Len() > w.opts.DigestMemory {
		oldest := w.lru.Back()
		w.lru.Remove(oldest)
		delete(w.digests, oldest.Value.(Ref).PayloadDigest)
	}
	return Ref{}, false
}

func (w *Writer) buildResponse(ex *Exchange, date time.Time) (gowarc.WarcRecord, error) {
	rb := gowarc.NewRecordBuilder(gowarc.Response, recordOptions()...)
	rb.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	rb.AddWarcHeaderTime(gowarc.WarcDate, date)
	rb.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
	if ex.IP != "" {
		rb.AddWarcHeader(gowarc.WarcIPAddress, ex.IP)
	}
	if ex.Truncated {
		rb.AddWarcHeader(gowarc.WarcTruncated, "length")
	}
	proto := ex.Proto
	if proto == "" || !strings.HasPrefix(proto, "HTTP/") {
		proto = "HTTP/1.1"
	}
	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %d %s\r\n", proto, ex.StatusCode, http.StatusText(ex.StatusCode))
	h := ex.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Del("Content-Encoding")
	h.Del("Transfer-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(ex.Body)))
	writeHeader(&head, h)
	head.WriteString("\r\n")
	if _, err := rb.Write(head.Bytes()); err != nil {
		return nil, fmt.Errorf("warc: response record for %s: %w", ex.URL, err)
	}
	if _, err := rb.Write(ex.Body); err != nil {
		return nil, fmt.Errorf("warc: response record for %s: %w", ex.URL, err)
	}
	rec, _, err := rb.Build()
	if err != nil {
		return nil, fmt.Errorf("warc: response record for %s: %w", ex.URL, err)
	}
	return rec, nil
}

func (w *Writer) buildRequest(ex *Exchange, date time.Time, concurrentTo string) (gowarc.WarcRecord, error) {
	method := ex.Method
	if method == "" {
		method = http.MethodGet
	}
	target, host := requestTarget(ex.URL)
	var block bytes.Buffer
	fmt.Fprintf(&block, "%s %s HTTP/1.1\r\n", method, target)
	h := ex.RequestHeader.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Host") == "" && host != "" {
		h.Set("Host", host)
	}
	writeHeader(&block, h)
	block.WriteString("\r\n")

	rb := gowarc.NewRecordBuilder(gowarc.Request, recordOptions()...)
	rb.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	rb.AddWarcHeaderTime(gowarc.WarcDate, date)
	rb.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=request")
	if concurrentTo != "" {
		rb.AddWarcHeader(gowarc.WarcConcurrentTo, "<"+concurrentTo+">")
	}
	if _, err := rb.Write(block.Bytes()); err != nil {
		return nil, fmt.Errorf("warc: request record for %s: %w", ex.URL, err)
	}
	rec, _, err := rb.Build()
	if err != nil {
		return nil, fmt.Errorf("warc: request record for %s: %w", ex.URL, err)
	}
	return rec, nil
}

// requestTarget splits an absolute URL into the request-target (path and
// query) and the host, without validating it further: the URL was fetched.
func requestTarget(rawURL string) (target, host string) {
	rest := rawURL
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	slash := strings.IndexAny(rest, "/?")
	if slash < 0 {
		return "/", rest
	}
	host, target = rest[:slash], rest[slash:]
	if target[0] == '?' {
		target = "/" + target
	}
	return target, host
}

// writeHeader writes h in sorted order so records are reproducible.
func writeHeader(b *bytes.Buffer, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			// Header values from the wire cannot hold CR or LF; values set
			// by callers might, and would break the record's framing.
			v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
			fmt.Fprintf(b, "%s: %s\r\n", k, v)
		}
	}
}

// Stats reports how many records have been written and how many responses
// were written as revisits.
func (w *Writer) Stats() (records, revisits int64) {
	return w.records.Load(), w.revisits.Load()
}

// Close finishes the current file. Writes after Close fail with ErrClosed.
func (w *Writer) Close() error {
	w.closeMu.Lock()
	defer w.closeMu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	libraryMu.Lock()
	defer libraryMu.Unlock()
	if err := w.fw.Close(); err != nil {
		return fmt.Errorf("warc: closing: %w", err)
	}
	return nil
}
