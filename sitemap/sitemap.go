// Package sitemap reads the URL lists that sites publish for crawlers: XML
// sitemaps and sitemap indexes (sitemaps.org protocol 0.9), plain-text
// sitemaps, RSS 2.0, RSS 1.0 and Atom 1.0 feeds, each optionally gzip
// compressed.
//
// Parsing streams: a [Parser] reads one document and hands each entry to a
// callback as soon as it is complete, so a 50 MiB sitemap is never held in
// memory. [Parser.Collect] is the convenience that gathers the entries into a
// slice. The format is detected from the content (gzip by its magic bytes,
// XML by its root element, anything else as text), because servers often
// label sitemaps with the wrong Content-Type or file name.
//
// A gzip stream is read to the end of its last member, even past the XML
// root element, so that a truncated or corrupt stream (length or CRC-32
// mismatch) is reported as ErrMalformed; bytes after the last member that
// do not start another member are ignored, as gzip(1) does. An XML
// document's encoding is taken from its byte-order mark when it has one
// (XML 1.0 Appendix F), even if its encoding declaration names another:
// the declaration is then ignored, as libxml2 does; otherwise from the
// declaration, and UTF-8 by default.
//
// The sitemaps.org "Sitemap file location" rule is enforced: a sitemap may
// only list URLs with its own scheme, host and port whose path lies under the
// sitemap's directory, and a sitemap index may only list sitemaps on its own
// site. A sitemap named in a Sitemap: line of some host's robots.txt may also
// list any URL of that host (cross-submission); the caller says so with
// [Source.RobotsOrigin], because this package does not read robots.txt files.
//
// Hostile documents get bounded resources: the byte limit applies to the
// decompressed stream (so a gzip bomb stops at the cap), the number of
// entries per file is capped, element nesting is bounded, a single XML token
// (a start tag with its attributes, a text node, a comment) may not exceed
// 1 MiB, and neither
// external entities, DTD-declared entities nor XInclude are ever expanded.
// A [Walker] follows sitemap indexes with a depth bound, a per-host and a
// per-walk budget of sitemaps, a per-document deadline and cycle detection,
// fetching through a caller-supplied function or *http.Client.
package sitemap

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// Protocol limits from sitemaps.org: a sitemap file may hold at most 50,000
// URLs and be at most 50 MiB (52,428,800 bytes) uncompressed, and a URL must
// be shorter than 2,048 characters.
const (
	DefaultMaxBytes     = 50 << 20
	DefaultMaxURLs      = 50000
	DefaultMaxURLLength = 2048
	// DefaultMaxNesting bounds XML element nesting. Real sitemaps and feeds
	// nest fewer than ten levels deep.
	DefaultMaxNesting = 64
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrUnknownFormat reports a document that is none of the supported
	// formats (for example an HTML page served at /sitemap.xml), or is empty.
	ErrUnknownFormat = errors.New("sitemap: unknown format")
	// ErrMalformed reports a document that is not well-formed (broken XML,
	// entity references that are not the five predefined ones, nesting beyond
	// the limit, an XML token such as a start tag with its attributes longer
	// than 1 MiB, a gzip stream that is truncated or fails its checksum).
	// The error also wraps the underlying parser error.
	ErrMalformed = errors.New("sitemap: malformed document")
	// ErrTooLarge reports a document whose decompressed size exceeds
	// Parser.MaxBytes. Entries before the cap have been delivered.
	ErrTooLarge = errors.New("sitemap: document exceeds the byte limit")
	// ErrTooManyURLs reports a document listing more entries than
	// Parser.MaxURLs. The first MaxURLs entries have been delivered.
	ErrTooManyURLs = errors.New("sitemap: document exceeds the URL limit")
	// ErrInvalidSource reports a Source whose URL is not an absolute http(s)
	// URL.
	ErrInvalidSource = errors.New("sitemap: invalid sitemap URL")
)

// Kind tells a page from a child sitemap.
type Kind uint8

const (
	// KindPage is a page URL (urlset <url>, a text line, a feed item).
	KindPage Kind = iota
	// KindSitemap is a child sitemap listed by a sitemap index.
	KindSitemap
)

// String returns "page" or "sitemap".
func (k Kind) String() string {
	if k == KindSitemap {
		return "sitemap"
	}
	return "page"
}

// Format is the detected format of a document.
type Format uint8

// The formats a Parser recognises.
const (
	FormatUnknown Format = iota
	FormatURLSet         // XML <urlset>
	FormatIndex          // XML <sitemapindex>
	FormatText           // one URL per line
	FormatRSS            // RSS 0.9x / 2.0 <rss>
	FormatRSS1           // RSS 1.0 <rdf:RDF>
	FormatAtom           // Atom 1.0 <feed>
)

var formatNames = [...]string{"unknown", "urlset", "sitemapindex", "text", "rss", "rss1", "atom"}

// String returns the format's name: "urlset", "sitemapindex", "text",
// "rss", "rss1", "atom" or "unknown".
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ChangeFreq is a urlset <changefreq> value, lower-cased; empty when absent
// or not one of the protocol's seven values.
type ChangeFreq string

// The <changefreq> values defined by sitemaps.org.
const (
	Always  ChangeFreq = "always"
	Hourly  ChangeFreq = "hourly"
	Daily   ChangeFreq = "daily"
	Weekly  ChangeFreq = "weekly"
	Monthly ChangeFreq = "monthly"
	Yearly  ChangeFreq = "yearly"
	Never   ChangeFreq = "never"
)

// DefaultPriority is the priority sitemaps.org assigns to a URL whose
// <priority> is absent.
const DefaultPriority = 0.5

// Entry is one URL listed by a document.
type Entry struct {
	// URL is the listed URL after XML entity and CDATA decoding and the
	// trimming of surrounding white space (Unicode's, unicode.IsSpace: a
	// no-break or ideographic space too, not only ASCII). It is absolute, http or https, and within the
	// document's scope; it is not normalised. Sitemaps must list absolute
	// URLs, but feeds may use relative links (RFC 4287 §4.2.7.1): an RSS
	// <link> or an Atom href is resolved against the xml:base in effect,
	// or else the document's URL. An RSS <guid> is used only when absolute.
	URL string
	// Kind says whether URL is a page or a child sitemap.
	Kind Kind
	// LastMod is the last modification time in UTC (urlset and index
	// <lastmod>, RSS <pubDate>, RSS 1.0 <dc:date>, Atom <updated> or
	// <published>); the zero Time when absent or not a valid date. A
	// fractional second is kept, to the nanosecond (further digits are
	// truncated): compare values with Equal, and format them with
	// time.RFC3339Nano to keep it.
	LastMod time.Time
	// ChangeFreq is the urlset <changefreq>; empty when absent or invalid.
	ChangeFreq ChangeFreq
	// Priority is the urlset <priority> in [0, 1]; DefaultPriority when
	// absent or invalid.
	Priority float64
}

// Source names the document being parsed: where it came from, which decides
// which URLs it may list.
type Source struct {
	// URL is the sitemap's own absolute http(s) URL (after redirects).
	URL string
	// RobotsOrigin, when not empty, is the origin ("https://example.com",
	// "http://example.com:8080") of a robots.txt file whose Sitemap: line
	// named this sitemap. sitemaps.org cross-submission: the sitemap may then
	// list any URL on that origin, wherever the sitemap itself lives, and a
	// sitemap index may list sitemaps there.
	RobotsOrigin string
}

// Info summarises one parsed document.
type Info struct {
	Format Format
	// Compressed reports that the document was gzip compressed.
	Compressed bool
	// Bytes is the number of decompressed bytes read.
	Bytes int64
	// Pages and Sitemaps count the delivered entries of each kind.
	Pages, Sitemaps int
	// OutOfScope counts URLs dropped by the location rule.
	OutOfScope int
	// Invalid counts URLs dropped because they were empty, not absolute
	// http(s) URLs, or longer than Parser.MaxURLLength.
	Invalid int
}

// Parser parses sitemap documents. The zero value is ready to use and applies
// the protocol's limits; a Parser is safe for concurrent use as long as its
// fields are not changed.
//
// Besides the limits below, a single XML token (a start tag with all its
// attributes, a text node, a comment, a directive) may not exceed 1 MiB, or
// MaxBytes when that is smaller: the XML decoder holds a token whole, at many
// times its size, before returning it. Longer tokens give ErrMalformed.
type Parser struct {
	// MaxBytes caps the decompressed size of a document (and, with a little
	// slack for the gzip framing, its compressed size). Default
	// DefaultMaxBytes.
	MaxBytes int64
	// MaxURLs caps the entries delivered from one document. Default
	// DefaultMaxURLs.
	MaxURLs int
	// MaxURLLength drops longer URLs (counted in Info.Invalid). Default
	// DefaultMaxURLLength.
	MaxURLLength int
	// MaxNesting caps XML element nesting. Default DefaultMaxNesting.
	MaxNesting int
}

func (p *Parser) limits() Parser {
	l := Parser{}
	if p != nil {
		l = *p
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxURLs <= 0 {
		l.MaxURLs = DefaultMaxURLs
	}
	if l.MaxURLLength <= 0 {
		l.MaxURLLength = DefaultMaxURLLength
	}
	if l.MaxNesting <= 0 {
		l.MaxNesting = DefaultMaxNesting
	}
	return l
}

// Parse reads one document from r and calls fn for every entry in document
// order, as soon as the entry is complete. It stops at the first error
// returned by fn and returns it unwrapped. Other errors wrap one of the
// package's sentinel errors; entries delivered before such an error were
// well-formed, and the caller decides whether to keep them.
func (p *Parser) Parse(r io.Reader, src Source, fn func(Entry) error) (Info, error) {
	lim := p.limits()
	sc, err := newScope(src)
	if err != nil {
		return Info{}, err
	}
	base, _ := url.Parse(strings.TrimSpace(src.URL)) // valid: newScope parsed it
	d := &doc{lim: lim, scope: sc, base: base, fn: fn}
	err = d.run(r)
	return d.info, err
}

// Collect is Parse gathering the entries into a slice. On error it returns
// the entries delivered before the error together with the error.
func (p *Parser) Collect(r io.Reader, src Source) ([]Entry, Info, error) {
	var out []Entry
	info, err := p.Parse(r, src, func(e Entry) error {
		out = append(out, e)
		return nil
	})
	return out, info, err
}

// Parse is Parser.Parse with the default limits.
func Parse(r io.Reader, src Source, fn func(Entry) error) (Info, error) {
	return (*Parser)(nil).Parse(r, src, fn)
}

// Collect is Parser.Collect with the default limits.
func Collect(r io.Reader, src Source) ([]Entry, Info, error) {
	return (*Parser)(nil).Collect(r, src)
}
