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
// The package builds and encodes the records itself. Each digest is
// computed once, over bytes already in memory; the records of an exchange
// are built and compressed in the caller's goroutine, outside the Writer's
// lock, at gzip level 1 by default (Config.CompressionLevel), so that
// archiving keeps up with a crawl; only the revisit decision and the write
// to the file are serialized.
//
// The response record holds the HTTP response as it was received, when
// the caller has it (Exchange.WireBody, from fetch.Wire): the status line
// with its reason phrase, the header fields as sent (sorted), and the body
// with its content codings intact (WARC 1.1 section 6.3.2), de-chunked, as
// WARC 1.1 allows and warcio does. The transfer coding the body came with
// is named in X-Crawler-Transfer-Encoding instead of Transfer-Encoding and
// Content-Length is set to the length of the body recorded (the length
// the server sent, if different because the body was cut at a size limit,
// is kept in X-Crawler-Content-Length), the names Common Crawl uses, so the
// record is a self-consistent HTTP message that replay tools can serve.
// WARC-Payload-Digest is the digest of that body, as transferred, and
// WARC-Block-Digest that of the whole block. A content-encoded body is
// stored in its gzip member rather than compressed a second time. The
// connection's protocols are recorded as WARC-Protocol fields ("h2",
// "http/1.1", "tls/1.3") and its cipher suite as WARC-Cipher-Suite, the
// fields of the IIPC proposal for them.
//
// Without a wire body the record holds Exchange.Body as the fetcher
// decoded it. Because those bytes are no longer those of the wire, the
// Content-Encoding and Transfer-Encoding headers are removed from the
// recorded response and Content-Length is set to the decoded length. A
// response that has no content whatever its length (to a HEAD request, or
// 1xx, 204, 304) keeps the Content-Length it was sent, unless that
// described an encoded representation of a decoded body, in which case it
// is removed.
//
// With Config.Index a CDXJ index of each file is written beside it when
// the file is finished (NAME.cdxj for NAME.warc.gz): one line per response
// or revisit record, sorted, with the SURT key, the 14-digit timestamp and
// the url, mime, status, digest, length, offset and filename fields that
// pywb, OpenWayback and warcio's cdx-index write. PackWACZ packages the
// files and their indexes as a WACZ for replay.
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
	"crypto/tls"
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

	"github.com/klauspost/compress/gzip"
)

// DefaultMaxFileSize is the size at which a WARC file is closed and the next
// one started, as in most crawlers' defaults.
const DefaultMaxFileSize = 1 << 30

// defaultDigestMemory bounds how many payload digests the Writer remembers to
// turn identical payloads into revisit records.
const defaultDigestMemory = 100_000

// ErrClosed is returned by writes to a closed Writer.
var ErrClosed = errors.New("warc: writer is closed")

// Config configures a Writer. Dir is required; every other zero value is a
// usable default.
type Config struct {
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
	// CompressionLevel is the gzip level of the records, 1 (fastest) to 9
	// (smallest), or gzip.HuffmanOnly (-2: about a quarter less CPU than
	// level 1, twice the size); zero means 1. Archive pages compress about as well at
	// level 1 as at the default 6, at a fraction of the CPU (see
	// BENCHMARKS.md); the records of content-encoded bodies hardly
	// compress at any level.
	CompressionLevel int
	// Index writes a CDXJ index of each file beside it (see the package
	// documentation).
	Index bool
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
	// HTTP/1.1. Reason is the status line's reason phrase as received;
	// empty means the standard one for StatusCode.
	StatusCode int
	Proto      string
	Reason     string
	Header     http.Header
	// TransferEncoding lists the transfer codings the response came with
	// and that were removed from the body (net/http's
	// Response.TransferEncoding, which it takes out of Header).
	TransferEncoding []string
	// TLS is the connection's TLS session, nil for plain HTTP: it gives
	// the WARC-Protocol and WARC-Cipher-Suite fields.
	TLS *tls.ConnectionState
	// WireBody, if not nil, is the body as received: de-chunked, its
	// content codings intact (fetch.Wire.Body). The record then holds it
	// with the header as sent, and Body is not used.
	WireBody []byte
	// Body is the response body, decoded, recorded when WireBody is nil.
	Body []byte
	// Truncated is set when the recorded body was cut at a size limit; it
	// becomes the record's WARC-Truncated reason ("length").
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
	opts     Config
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
func New(opts Config) (*Writer, error) {
	if opts.Dir == "" {
		return nil, errors.New("warc: Config.Dir is required")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: creating %s: %w", opts.Dir, err)
	}
	if opts.Prefix == "" {
		opts.Prefix = "crawlkit"
	}
	if strings.ContainsAny(opts.Prefix, `/\`) {
		return nil, fmt.Errorf("warc: Config.Prefix %q must not contain a path separator", opts.Prefix)
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
	if opts.CompressionLevel == 0 {
		opts.CompressionLevel = gzip.BestSpeed
	}
	if (opts.CompressionLevel < gzip.BestSpeed || opts.CompressionLevel > gzip.BestCompression) && opts.CompressionLevel != gzip.HuffmanOnly {
		return nil, fmt.Errorf("warc: Config.CompressionLevel %d is not a gzip level (1 to 9, or -2)", opts.CompressionLevel)
	}
	w.opts = opts
	w.file = newFileWriter(opts.Dir, opts.Prefix, opts.Now, opts.MaxFileSize, opts.CompressionLevel, w.buildWarcinfo)
	w.file.index = opts.Index
	return w, nil
}

// buildWarcinfo builds the warcinfo record that starts the file named name
// (WARC 1.1 section 6.2).
func (w *Writer) buildWarcinfo(name string) *record {
	fields := "software: " + w.opts.Software + "\r\nformat: WARC File Format 1.1\r\n" +
		"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
	if w.opts.Operator != "" {
		fields += "operator: " + w.opts.Operator + "\r\n"
	}
	rec := newRecord("warcinfo")
	rec.add("WARC-Date", warcDate(w.opts.Now()))
	rec.add("WARC-Filename", name)
	rec.add("Content-Type", "application/warc-fields")
	rec.head = []byte(fields)
	rec.addBlockDigest()
	return rec
}

// WriteExchange writes ex as a response record (or a revisit record, see
// the package documentation) followed by a request record, in one file.
// When it returns an error, the exchange is in no file the Writer finishes.
//
// The records are built, digested and compressed in the caller's
// goroutine; only the revisit decision and the write to the file are
// serialized, so concurrent callers compress in parallel.
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
	date := ex.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	resp, payloadDigest := buildResponse(ex, warcDate(date), ip)

	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return Result{}, ErrClosed
	}
	rec, res, remember := w.revisitOrResponse(ex, resp, payloadDigest)
	infoID := w.file.infoID
	w.mu.Unlock()

	req := buildRequest(ex, warcDate(date), ip, rec)
	recs := []*record{rec, req}
	enc := encoders.Get().(*encoder)
	defer putEncoder(enc)
	if err := enc.encode(recs, infoID, w.opts.CompressionLevel); err != nil {
		return Result{}, fmt.Errorf("warc: encoding records for %s: %w", ex.URL, err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Result{}, ErrClosed
	}
	var entry *cdxEntry
	if w.opts.Index {
		entry = newCDXEntry(ex, rec, date, res.Revisit)
	}
	file, spans, err := w.file.writeExchange(recs, enc, entry)
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

// revisitOrResponse decides whether resp, the response record of ex, is
// written as it is or as a revisit record, and returns the record to write.
// remember says whether res.Ref is to be remembered as the first copy of
// its payload once written. w.mu is held.
func (w *Writer) revisitOrResponse(ex *Exchange, resp *record, payloadDigest string) (rec *record, res Result, remember bool) {
	res.Ref = Ref{RecordID: resp.id, URL: ex.URL, Date: resp.get("WARC-Date"), PayloadDigest: payloadDigest}
	switch {
	case ex.StatusCode == http.StatusNotModified:
		// The payload of a server-not-modified revisit is the unmodified
		// content (WARC 1.1 section 6.7.3), which was not fetched: the
		// digest of the 304's empty body is not its digest.
		res.Ref.PayloadDigest = ""
		res.Revisit = true
		return toRevisit(resp, profileServerNotModified, Ref{}), res, false
	case ex.StatusCode >= 200 && ex.StatusCode < 300 && len(resp.payload) > 0:
		if first, seen := w.lookupDigest(payloadDigest); seen {
			res.Ref, res.Revisit = first, true
			return toRevisit(resp, profileIdenticalPayloadDigest, first), res, false
		}
		return resp, res, true
	}
	return resp, res, false
}

// The revisit profiles of WARC 1.1 section 6.7.
const (
	profileIdenticalPayloadDigest = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
	profileServerNotModified      = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
)

// toRevisit turns resp into a revisit record of profile (WARC 1.1 section
// 6.7), referring to first for identical-payload-digest. Its block is the
// response's HTTP head alone, so it is marked WARC-Truncated: length, as
// Heritrix and gowarc do; it keeps the response's record ID.
func toRevisit(resp *record, profile string, first Ref) *record {
	rec := &record{typ: "revisit", id: resp.id, head: resp.head}
	for i := 0; i+1 < len(resp.fields); i += 2 {
		switch resp.fields[i] {
		case "WARC-Block-Digest", "WARC-Truncated", "WARC-Payload-Digest":
		default:
			rec.add(resp.fields[i], resp.fields[i+1])
		}
	}
	rec.add("WARC-Profile", profile)
	if profile == profileIdenticalPayloadDigest {
		rec.add("WARC-Refers-To", "<"+first.RecordID+">")
		rec.add("WARC-Refers-To-Target-URI", first.URL)
		rec.add("WARC-Refers-To-Date", first.Date)
		rec.add("WARC-Payload-Digest", first.PayloadDigest)
	}
	rec.add("WARC-Truncated", "length")
	rec.addBlockDigest()
	return rec
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
// digest beyond Config.DigestMemory.
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

// buildResponse builds the response record of ex and returns it with its
// payload digest.
func buildResponse(ex *Exchange, date, ip string) (*record, string) {
	rec := newRecord("response")
	rec.add("WARC-Target-URI", ex.URL)
	rec.add("WARC-Date", date)
	rec.add("Content-Type", "application/http;msgtype=response")
	if ip != "" {
		rec.add("WARC-IP-Address", ip)
	}
	addProtocol(rec, ex)
	if ex.Truncated {
		rec.add("WARC-Truncated", "length")
	}
	body := ex.Body
	if ex.WireBody != nil {
		body = ex.WireBody
	}
	rec.head = responseHead(ex, body)
	rec.payload = body
	rec.stored = ex.WireBody != nil && len(body) > 0 && contentEncoded(ex.Header)
	// The payload is the entity body as transferred (WARC 1.1 section
	// 6.3.2): content codings intact when the wire body is recorded.
	payloadDigest := digest(body)
	rec.add("WARC-Payload-Digest", payloadDigest)
	rec.addBlockDigest()
	return rec, payloadDigest
}

// responseHead returns the HTTP head recorded for ex, whose recorded body
// is body: the status line and the header fields, sorted, as the package
// documentation describes.
func responseHead(ex *Exchange, body []byte) []byte {
	proto := ex.Proto
	if proto == "" || !strings.HasPrefix(proto, "HTTP/") {
		proto = "HTTP/1.1"
	}
	reason := ex.Reason
	if reason == "" || strings.ContainsAny(reason, "\r\n") {
		reason = http.StatusText(ex.StatusCode)
	}
	var head bytes.Buffer
	head.Grow(512)
	head.WriteString(proto)
	head.WriteByte(' ')
	head.WriteString(strconv.Itoa(ex.StatusCode))
	head.WriteByte(' ')
	head.WriteString(reason)
	head.WriteString("\r\n")
	h := ex.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	sent := h.Get("Content-Length")
	// Transfer codings are removed from a recorded body (the fetcher
	// de-chunks it); the header that named them is kept under Common
	// Crawl's name, so the record still says how the body came.
	te := append(h.Values("Transfer-Encoding"), ex.TransferEncoding...)
	h.Del("Transfer-Encoding")
	if len(te) > 0 {
		h["X-Crawler-Transfer-Encoding"] = te
	}
	if ex.WireBody == nil {
		// A decoded body: its content codings are removed too.
		encoded := len(h.Values("Content-Encoding")) > 0
		h.Del("Content-Encoding")
		switch {
		case !hasNoContent(ex) || len(body) > 0:
			h.Set("Content-Length", strconv.Itoa(len(body)))
		case encoded:
			// The length of the encoded representation; the archive
			// holds decoded ones.
			h.Del("Content-Length")
		}
	} else if !hasNoContent(ex) || len(body) > 0 {
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if sent != "" && sent != strconv.Itoa(len(body)) {
			// A body cut at the size limit: the length the server sent
			// is kept as Common Crawl keeps it.
			h.Set("X-Crawler-Content-Length", sent)
		}
	}
	writeHeader(&head, h)
	head.WriteString("\r\n")
	return head.Bytes()
}

// contentEncoded reports whether h names a content coding other than
// identity (RFC 9110 section 8.4): the body is compressed already.
func contentEncoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// addProtocol adds WARC-Protocol fields, the application protocol (its
// ALPN identifier) and the TLS version, and WARC-Cipher-Suite, with the
// values of the IIPC proposal adopted for WARC 1.1's successor (iipc/
// warc-specifications issue 42) and written by Browsertrix: "h2",
// "http/1.1", "tls/1.3", "TLS_AES_128_GCM_SHA256".
func addProtocol(rec *record, ex *Exchange) {
	if p := protocolName(ex.Proto); p != "" {
		rec.add("WARC-Protocol", p)
	}
	if ex.TLS == nil {
		return
	}
	if v := tlsVersionName(ex.TLS.Version); v != "" {
		rec.add("WARC-Protocol", v)
	}
	if ex.TLS.CipherSuite != 0 {
		rec.add("WARC-Cipher-Suite", tls.CipherSuiteName(ex.TLS.CipherSuite))
	}
}

// protocolName maps net/http's Proto to its ALPN protocol identifier
// (RFC 7301, IANA registry), or "" when unknown.
func protocolName(proto string) string {
	switch proto {
	case "HTTP/1.0":
		return "http/1.0"
	case "HTTP/1.1":
		return "http/1.1"
	case "HTTP/2.0", "HTTP/2":
		return "h2"
	case "HTTP/3.0", "HTTP/3":
		return "h3"
	}
	return ""
}

// tlsVersionName spells a TLS version as WARC-Protocol does: "tls/1.3".
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "tls/1.0"
	case tls.VersionTLS11:
		return "tls/1.1"
	case tls.VersionTLS12:
		return "tls/1.2"
	case tls.VersionTLS13:
		return "tls/1.3"
	}
	return ""
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

// buildRequest builds the request record of ex, concurrent to rec.
func buildRequest(ex *Exchange, date, ip string, rec *record) *record {
	method := ex.Method
	if method == "" {
		method = http.MethodGet
	}
	target, host := requestTarget(ex.URL)
	var block bytes.Buffer
	block.Grow(512)
	block.WriteString(method)
	block.WriteByte(' ')
	block.WriteString(target)
	block.WriteString(" HTTP/1.1\r\n")
	h := ex.RequestHeader.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Host") == "" && host != "" {
		h.Set("Host", host)
	}
	writeHeader(&block, h)
	block.WriteString("\r\n")

	req := newRecord("request")
	req.add("WARC-Target-URI", ex.URL)
	req.add("WARC-Date", date)
	req.add("Content-Type", "application/http;msgtype=request")
	if ip != "" {
		// The address the request was sent to, as wget records it.
		req.add("WARC-IP-Address", ip)
	}
	addProtocol(req, ex)
	req.add("WARC-Concurrent-To", "<"+rec.id+">")
	req.head = block.Bytes()
	req.addBlockDigest()
	return req
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
			if strings.ContainsAny(v, "\r\n") {
				v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
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
