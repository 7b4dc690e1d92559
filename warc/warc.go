// Package warc writes crawled HTTP exchanges as WARC/1.1 files (ISO 28500),
// the archival format of web archives.
//
// A Writer turns each fetched page into a response record and a request
// record that refer to each other, starts every file with a warcinfo record,
// compresses every record as its own gzip member (so a reader can seek to any
// record), computes block and payload digests (SHA-1, base32, as the web
// archiving tools expect), and rotates files when they reach a size limit.
// A response whose payload is identical to one already written by the same
// Writer is stored as a revisit record (profile identical-payload-digest)
// that refers to the first copy, and a 304 Not Modified answer as a revisit
// record of profile server-not-modified.
//
// The records of one exchange always go to the same file, together: a file
// is rotated before an exchange that would take it past the size limit. If
// writing an exchange fails, the file is cut back to where the exchange
// started, so it stays a valid WARC file, and the error is returned; a
// payload is only referred to by revisit records once its record is written.
//
// Files are named Prefix-YYYYMMDDhhmmss-NNNNN.warc.gz and carry the suffix
// ".open" (OpenSuffix) while they are written; the suffix is removed when
// the file is finished, on rotation or Close. Names are unique across
// Writers sharing a directory, in one process or several (after a restart,
// say): a Writer skips names another Writer has taken, and never replaces a
// file, finished or not. Close reports any failure to finish the last file.
//
// Records are built and encoded by github.com/nlnwa/gowarc; this package
// decides what goes into the records and writes the files.
//
// The response record holds the body as the fetcher decoded it. Because the
// bytes are no longer those of the wire, the Content-Encoding and
// Transfer-Encoding headers are removed from the recorded response and
// Content-Length is set to the decoded length, so the record is a
// self-consistent HTTP message that replay tools can serve. A response that
// has no content whatever its length (to a HEAD request, or 1xx, 204, 304)
// keeps the Content-Length it was sent, unless that described an encoded
// representation, in which case it is removed.
//
// The request record holds the request line (the method, the URL's path
// and query, HTTP/1.1) and Exchange.RequestHeader, fields sorted, with a
// Host field from the URL when the header has none; it holds what the
// caller recorded of the request, so fields the caller's HTTP client added
// by itself are missing unless the caller records them. When the server's
// address is known (Exchange.IP), the response or revisit record and the
// request record carry it as WARC-IP-Address.
//
// A server-not-modified revisit record has no WARC-Payload-Digest: its
// payload is the unmodified content (WARC 1.1 section 6.7.3), which the
// Writer has not seen.
package warc

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
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

// libraryMu serializes building records with gowarc. Building a record
// writes package-level state of the uuid generator it uses
// (uuid.EnableRandPool in gowarc's default options), so concurrent writes,
// even through different Writers, race without it. Encoding built records
// touches only the records, and is done outside it.
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
	// Prefix-YYYYMMDDhhmmss-NNNNN.warc.gz: the UTC time the file was
	// started and a serial number, counted per Writer from 1 and skipping
	// names other Writers have taken.
	Prefix string
	// MaxFileSize is the size in bytes a file is kept under: a file is
	// rotated before an exchange that would take it past the limit. A
	// single exchange larger than the limit gets a file of its own, which
	// exceeds it. Zero means DefaultMaxFileSize (1 GiB).
	MaxFileSize int64
	// Software and Operator go into each file's warcinfo record.
	Software string
	Operator string
	// DigestMemory is how many payload digests are remembered for revisit
	// records; zero means 100 000. The oldest are forgotten first.
	DigestMemory int
	// Now returns the current time; nil means time.Now. It dates file
	// names, warcinfo records and exchanges without a Date.
	Now func() time.Time
}

// Exchange is one fetch to be archived.
type Exchange struct {
	// URL is the requested URL (WARC-Target-URI).
	URL string
	// Date is when the fetch started (WARC-Date).
	Date time.Time
	// IP is the numeric address of the server the response came from
	// (WARC-IP-Address, written on the response or revisit record and on
	// the request record), if known: an IPv4 or IPv6 address without
	// brackets or port, as netip.Addr.String gives it. An IPv4-mapped
	// IPv6 address is recorded as IPv4, and an IPv6 zone is dropped.
	// Anything else is refused with an error.
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
	RecordID string
	URL      string
	Date     string
	// PayloadDigest is empty for a server-not-modified revisit (a 304).
	PayloadDigest string
}

// Result says what WriteExchange wrote.
type Result struct {
	// File is the path of the file the records went to, under the name it
	// has once finished. Until then, that is until the Writer rotates to
	// another file or Close returns, the file is named File+OpenSuffix and
	// File does not exist.
	File string
	// Offset and Length locate the response (or revisit) record in the
	// file: it is the gzip member of Length bytes at byte Offset, as a CDX
	// index records it. The request record follows it.
	Offset int64
	Length int64
	// Revisit is true when the response was written as a revisit record.
	Revisit bool
	// Ref identifies the response record, or for a revisit the record it
	// refers to.
	Ref Ref
}

// Writer writes exchanges to rotating WARC files. It is safe for concurrent
// use; exchanges are written one at a time. Close it to finish the last
// file.
type Writer struct {
	opts     Options
	records  atomic.Int64
	revisits atomic.Int64

	// mu serializes writes and Close: an exchange's records are written
	// together, a digest is remembered together with the record it refers
	// to, and no record is written after Close returns.
	mu      sync.Mutex
	closed  bool
	file    *fileWriter
	digests map[string]*list.Element // payload digest -> element of lru (Ref)
	lru     *list.List
}

// New creates the directory if needed and returns a Writer. No file is
// created until the first exchange is written.
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
	w.file = newFileWriter(opts.Dir, opts.Prefix, opts.Now, opts.MaxFileSize, w.buildWarcinfo)
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

// buildWarcinfo builds the warcinfo record that starts the file named name.
func (w *Writer) buildWarcinfo(name string) (gowarc.WarcRecord, error) {
	fields := "software: " + w.opts.Software + "\r\nformat: WARC File Format 1.1\r\n" +
		"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
	if w.opts.Operator != "" {
		fields += "operator: " + w.opts.Operator + "\r\n"
	}
	libraryMu.Lock()
	defer libraryMu.Unlock()
	rb := gowarc.NewRecordBuilder(gowarc.Warcinfo, recordOptions()...)
	rb.AddWarcHeaderTime(gowarc.WarcDate, w.opts.Now().UTC())
	rb.AddWarcHeader(gowarc.WarcFilename, name)
	rb.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationWarcFields)
	if _, err := rb.WriteString(fields); err != nil {
		return nil, err
	}
	rec, _, err := rb.Build()
	return rec, err
}

// WriteExchange writes ex as a response record (or a revisit record, see
// the package documentation) followed by a request record, in one file.
// When it returns an error, the exchange is in no file the Writer finishes.
func (w *Writer) WriteExchange(ex *Exchange) (Result, error) {
	if ex == nil || ex.URL == "" {
		return Result{}, errors.New("warc: exchange without a URL")
	}
	if ex.StatusCode < 100 || ex.StatusCode > 999 {
		return Result{}, fmt.Errorf("warc: exchange for %s has invalid status code %d", ex.URL, ex.StatusCode)
	}
	ip, err := ipField(ex.IP)
	if err != nil {
		return Result{}, fmt.Errorf("warc: exchange for %s: %w", ex.URL, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Result{}, ErrClosed
	}
	date := ex.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	date = date.UTC()

	rec, req, res, remember, err := w.buildRecords(ex, date, ip)
	if err != nil {
		return Result{}, err
	}
	// A record with a large body keeps it in a temporary file until closed.
	// Closing only releases it, so its error does not matter.
	defer rec.Close()
	defer req.Close()
	file, spans, err := w.file.writeExchange(rec, req)
	if err != nil {
		return Result{}, fmt.Errorf("warc: writing records for %s: %w", ex.URL, err)
	}
	if remember {
		w.rememberDigest(res.Ref)
	}
	res.File, res.Offset, res.Length = file, spans[0].offset, spans[0].length
	w.records.Add(int64(len(spans)))
	if res.Revisit {
		w.revisits.Add(1)
	}
	return res, nil
}

// buildRecords builds the records of ex: the response (or revisit) record
// and the request record. remember says whether res.Ref is to be remembered
// as the first copy of its payload once written.
func (w *Writer) buildRecords(ex *Exchange, date time.Time, ip string) (rec, req gowarc.WarcRecord, res Result, remember bool, err error) {
	libraryMu.Lock()
	defer libraryMu.Unlock()
	resp, err := w.buildResponse(ex, date, ip)
	if err != nil {
		return nil, nil, Result{}, false, err
	}
	payloadDigest := resp.WarcHeader().Get(gowarc.WarcPayloadDigest)
	own, err := resp.CreateRevisitRef(gowarc.ProfileIdenticalPayloadDigestV1_1)
	if err != nil {
		resp.Close()
		return nil, nil, Result{}, false, fmt.Errorf("warc: %w", err)
	}
	res.Ref = Ref{RecordID: own.TargetRecordId, URL: own.TargetUri, Date: own.TargetDate, PayloadDigest: payloadDigest}

	var revisit *gowarc.RevisitRef
	switch {
	case ex.StatusCode == http.StatusNotModified:
		revisit = &gowarc.RevisitRef{Profile: gowarc.ProfileServerNotModifiedV1_1}
	case ex.StatusCode >= 200 && ex.StatusCode < 300 && len(ex.Body) > 0 && payloadDigest != "":
		if first, seen := w.lookupDigest(payloadDigest); seen {
			revisit = &gowarc.RevisitRef{
				Profile:        gowarc.ProfileIdenticalPayloadDigestV1_1,
				TargetRecordId: first.RecordID,
				TargetUri:      first.URL,
				TargetDate:     first.Date,
			}
			res.Ref = first
		} else {
			remember = true
		}
	}
	rec = resp
	if revisit != nil {
		// The revisit record copies what it needs of the response record.
		rec, err = resp.ToRevisitRecord(revisit)
		resp.Close()
		if err != nil {
			return nil, nil, Result{}, false, fmt.Errorf("warc: revisit record for %s: %w", ex.URL, err)
		}
		if revisit.Profile == gowarc.ProfileServerNotModifiedV1_1 {
			// The payload of a server-not-modified revisit is the unmodified
			// content (WARC 1.1 section 6.7.3), which was not fetched: the
			// digest of the 304's empty body is not its digest.
			rec.WarcHeader().Delete(gowarc.WarcPayloadDigest)
			res.Ref.PayloadDigest = ""
		}
		res.Revisit = true
	}

	req, err = w.buildRequest(ex, date, ip, rec.WarcHeader().GetId(gowarc.WarcRecordID))
	if err != nil {
		rec.Close()
		return nil, nil, Result{}, false, err
	}
	return rec, req, res, remember, nil
}

// lookupDigest returns the first record written with the payload digest,
// if it is remembered.
func (w *Writer) lookupDigest(digest string) (Ref, bool) {
	el, ok := w.digests[digest]
	if !ok {
		return Ref{}, false
	}
	w.lru.MoveToFront(el)
	return el.Value.(Ref), true
}

// rememberDigest remembers ref, a response record that has been written,
// as the first copy of its payload, forgetting the least recently used
// digest beyond Options.DigestMemory.
func (w *Writer) rememberDigest(ref Ref) {
	if _, ok := w.digests[ref.PayloadDigest]; ok {
		return
	}
	w.digests[ref.PayloadDigest] = w.lru.PushFront(ref)
	if w.lru.Len() > w.opts.DigestMemory {
		oldest := w.lru.Back()
		w.lru.Remove(oldest)
		delete(w.digests, oldest.Value.(Ref).PayloadDigest)
	}
}

// ipField returns the WARC-IP-Address value for an Exchange's IP: the
// address in netip's canonical form, IPv4-mapped IPv6 as IPv4, without a
// zone (which net.ParseIP, and so gowarc's validation, rejects).
func ipField(ip string) (string, error) {
	if ip == "" {
		return "", nil
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", fmt.Errorf("IP %q is not a numeric IP address", ip)
	}
	return a.Unmap().WithZone("").String(), nil
}

func (w *Writer) buildResponse(ex *Exchange, date time.Time, ip string) (gowarc.WarcRecord, error) {
	rb := gowarc.NewRecordBuilder(gowarc.Response, recordOptions()...)
	rb.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	rb.AddWarcHeaderTime(gowarc.WarcDate, date)
	rb.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
	if ip != "" {
		rb.AddWarcHeader(gowarc.WarcIPAddress, ip)
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
	encoded := len(h.Values("Content-Encoding")) > 0
	h.Del("Content-Encoding")
	h.Del("Transfer-Encoding")
	switch {
	case !hasNoContent(ex) || len(ex.Body) > 0:
		h.Set("Content-Length", strconv.Itoa(len(ex.Body)))
	case encoded:
		// The length of the encoded representation; the archive holds
		// decoded ones.
		h.Del("Content-Length")
	}
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

// hasNoContent reports whether the response to ex has no content whatever
// its Content-Length says (RFC 9110 section 6.4.1): the answer to a HEAD
// request, or a 1xx, 204 or 304 response. Such a response's Content-Length,
// if any, is not the length of its (empty) body: a 304 or HEAD response may
// carry the length a GET would have got (section 8.6), so it is kept as
// received rather than set to 0.
func hasNoContent(ex *Exchange) bool {
	return ex.Method == http.MethodHead || ex.StatusCode < 200 ||
		ex.StatusCode == http.StatusNoContent || ex.StatusCode == http.StatusNotModified
}

func (w *Writer) buildRequest(ex *Exchange, date time.Time, ip, concurrentTo string) (gowarc.WarcRecord, error) {
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
	if ip != "" {
		// The address the request was sent to, as wget records it.
		rb.AddWarcHeader(gowarc.WarcIPAddress, ip)
	}
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
// query) and the Host header value, without validating it further: the URL
// was fetched. The host keeps its port and an IPv6 literal its brackets;
// userinfo, which is never sent in a Host header, is dropped, and so is an
// IPv6 zone (RFC 6874 section 4).
func requestTarget(rawURL string) (target, host string) {
	rest := rawURL
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	target = "/"
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest, target = rest[:i], rest[i:]
		if target[0] == '?' {
			target = "/" + target
		}
	}
	// The authority is userinfo@host:port; userinfo cannot hold an
	// unescaped '@', '/' or '?'.
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if pct, end := strings.IndexByte(rest, '%'), strings.IndexByte(rest, ']'); pct >= 0 && pct < end {
			rest = rest[:pct] + rest[end:]
		}
	}
	return target, rest
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

// Close finishes the current file: it syncs it to disk, closes it and
// renames it without OpenSuffix. It returns any error in doing so, in which
// case the file may be left with OpenSuffix. Writes after Close fail with
// ErrClosed; a second Close returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.file.finish(); err != nil {
		return fmt.Errorf("warc: closing: %w", err)
	}
	return nil
}
