// Package extract pulls what a crawler needs out of an HTML page in one
// streaming pass over an HTML tokenizer: links with their kind, anchor text
// and rel flags; the title, description, language and canonical URL; the
// page's robots directives (meta robots and X-Robots-Tag); and its visible
// text for near-duplicate detection and indexing.
//
// The tokenizer is golang.org/x/net/html's, or, for a UTF-8 body already in
// memory (ExtractBytes, the crawler's case), this package's own scanner,
// which returns the same tokens (it follows x/net/html's state machine and
// is tested and fuzzed token by token against it) but reads the body in
// place, finding markup with a vectorized byte search instead of reading
// one byte at a time, and copies text only where entities or carriage
// returns must be rewritten.
//
// No DOM is built. A tokenizer pass does about half the work of html.Parse
// and a tree walk, and it never holds more than one token: memory is bounded
// by the limits in Config however large or deeply nested the page is.
// Malformed HTML is tokenized the way browsers do and never panics.
//
// A crawler runs no scripts, so a page is read as a browser with scripting
// disabled reads it: the content of <noscript> is markup (HTML parses it
// so when scripting is disabled), not the raw text a tokenizer makes of it
// by default. Links, meta refreshes and robots directives inside
// <noscript> count like any others; its text is left out of
// Document.Text, as before (it is mostly "enable JavaScript" boilerplate),
// though it is part of the anchor text of a link inside it.
//
// The body is converted to UTF-8 first. Its encoding is taken from a
// byte-order mark, the Content-Type charset, a <meta> charset declaration in
// the first 1024 bytes, or else by checking whether the bytes are valid
// UTF-8 (windows-1252 otherwise), the order of the WHATWG encoding sniffing
// algorithm as implemented by golang.org/x/net/html/charset (a <meta>
// naming x-user-defined means windows-1252, as the prescan prescribes).
// Invalid bytes become U+FFFD; they never stop extraction.
//
// Links are resolved against the document's base URL (the first <base>
// with an href attribute outside <template>, else the page URL) with
// urlnorm's browser-compatible resolver, so "//host/x", "\x" and friends
// mean what they mean in a browser. As in a browser, a query in a page
// whose encoding is not UTF-8 (or UTF-16) is percent-encoded in the page's
// encoding (HTML's "encoding-parse a URL"). Resolution happens after the
// pass, because a <base> element applies to links that precede it too.
package extract

import (
	"errors"
	"io"
	"net/http"
)

// Default limits.
const (
	DefaultMaxLinks      = 5000
	DefaultMaxTextBytes  = 128 << 10
	DefaultMaxAnchorText = 256
	DefaultMaxFieldBytes = 1024
	DefaultMaxAttrBytes  = 4096
	DefaultMaxTokenBytes = 8 << 20
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrInvalidPageURL reports a page URL that is not an absolute http(s)
	// URL.
	ErrInvalidPageURL = errors.New("extract: page URL is not an absolute http(s) URL")
	// ErrTokenTooLarge reports a single token (a text run, an inline
	// script, a tag with its attributes) larger than Config.MaxTokenBytes.
	// The Document returned with it holds what came before the token.
	ErrTokenTooLarge = errors.New("extract: HTML token exceeds the size limit")
)

// Kind names the element a link came from.
type Kind string

// Link kinds.
const (
	KindA           Kind = "a"            // <a href>, also SVG <a xlink:href>
	KindArea        Kind = "area"         // <area href>
	KindLink        Kind = "link"         // <link href>; see Rel
	KindImg         Kind = "img"          // <img src>, <img srcset>
	KindSource      Kind = "source"       // <source src>, <source srcset>
	KindMedia       Kind = "media"        // <video src|poster>, <audio src>, <embed src>
	KindScript      Kind = "script"       // <script src>
	KindIframe      Kind = "iframe"       // <iframe src>
	KindFrame       Kind = "frame"        // <frame src>
	KindForm        Kind = "form"         // <form action>; see Config.FollowForms
	KindMetaRefresh Kind = "meta-refresh" // <meta http-equiv="refresh" content="0; url=...">
)

// Rel is a set of link relations from a rel attribute (HTML "link types"),
// limited to those a crawler acts on.
type Rel uint16

// Link relations.
const (
	RelNofollow   Rel = 1 << iota // do not follow; do not pass ranking
	RelUGC                        // user-generated content (Google's hint)
	RelSponsored                  // paid link (Google's hint)
	RelCanonical                  // the preferred URL of this page
	RelAlternate                  // an alternate version (with Hreflang: a translation)
	RelNext                       // next page of a series
	RelPrev                       // previous page of a series ("previous" too)
	RelStylesheet                 // a style sheet
	RelIcon                       // an icon ("shortcut icon", "apple-touch-icon" too)
	RelPreload                    // preload, prefetch, modulepreload, dns-prefetch, preconnect
	RelNoopener                   // noopener or noreferrer
)

// Nofollow reports whether the relations ask crawlers not to follow the
// link: nofollow, ugc or sponsored.
func (r Rel) Nofollow() bool { return r&(RelNofollow|RelUGC|RelSponsored) != 0 }

// Link is one URL reference found in the page.
type Link struct {
	// URL is the absolute http(s) URL the reference resolves to, as
	// serialized by the URL Standard, its query percent-encoded in the
	// page's encoding as a browser does it; not normalized.
	URL string
	// Raw is the attribute value as written (entity-decoded).
	Raw string
	// Kind is the element the link came from.
	Kind Kind
	// Text is the anchor text of <a> (with the alt text of images inside
	// it) or the alt text of <area>, <img>; white space folded, bounded by
	// Config.MaxAnchorText.
	Text string
	// Rel holds the recognised relations of the rel attribute.
	Rel Rel
	// Hreflang is the hreflang attribute (for rel="alternate" translations).
	Hreflang string
	// Follow reports whether the page lets a crawler follow the link: false
	// for rel nofollow/ugc/sponsored, for every link of a page whose robots
	// directives say nofollow, and for forms unless Config.FollowForms
	// (and never for forms submitted with a method other than GET).
	// Whether to fetch images, scripts or style sheets at all is the
	// crawler's choice, by Kind.
	Follow bool
}

// Robots are the page's robots directives for this crawler, merged from
// <meta name="robots">, <meta name="AGENT"> and X-Robots-Tag headers (plain
// and "AGENT: ..." forms). The most restrictive directive wins; "none" means
// noindex and nofollow.
type Robots struct {
	Noindex, Nofollow, Noarchive, Nosnippet, NoImageIndex bool
}

// Document is what Extract found in a page.
type Document struct {
	// Base is the URL links were resolved against: the page URL, or the
	// href of the first <base> that has one (outside <template>) resolved
	// against it; an empty href means the page URL.
	Base string
	// Charset is the name of the encoding the body was decoded from.
	Charset string
	// Title is the first <title> outside SVG and <template>; Description
	// the first <meta name="description"> outside <template>; both with
	// white space folded, bounded by Config.MaxFieldBytes.
	Title, Description string
	// Language is <html lang>, else <meta http-equiv="content-language">,
	// else the Content-Language header.
	Language string
	// Canonical is the first <link rel="canonical"> outside <template>
	// resolved; empty if none.
	Canonical string
	// Text is the visible text: text outside <script>, <style>,
	// <noscript>, <template>, <textarea> and <title>, with white space runs
	// folded to one space and element boundaries other than inline ones
	// counted as white space; bounded by Config.MaxTextBytes.
	Text string
	// Links are the page's links in document order.
	Links []Link
	// Robots are the robots directives that apply to this crawler.
	Robots Robots
	// LinksTruncated and TextTruncated report that a limit cut the links or
	// the text. Skipped counts references dropped because they did not
	// resolve to an http(s) URL (mailto:, javascript:, data:, relative
	// references without a base, over-long values).
	LinksTruncated, TextTruncated bool
	Skipped                       int
}

// Config configures extraction. The zero value applies the defaults and
// obeys no agent-specific robots directives.
type Config struct {
	// UserAgent is the crawler's product token ("MyBot"). Robots directives
	// addressed to it (<meta name="mybot">, "X-Robots-Tag: mybot: noindex")
	// apply in addition to the generic ones. Compared case-insensitively.
	UserAgent string
	// FollowForms marks the actions of GET forms as followable, for a
	// crawler that requests them with GET (without the form's fields).
	// A form is a GET form when its method attribute is missing, "get" or
	// an invalid value (HTML: method is an enumerated attribute, matched
	// ASCII case-insensitively, whose missing and invalid value defaults
	// are GET), and no submit button between its start tag and </form>
	// (<button> of type submit, or missing or invalid type; <input
	// type=submit|image>) has a formmethod that is "post" or "dialog".
	// Forms with method "post" are never followed, whatever their buttons
	// say, so a POST form is never turned into GET requests; nor are
	// "dialog" forms, whose submission only closes a dialog. Buttons
	// associated with a form through their form attribute are not
	// considered.
	FollowForms bool
	// MaxLinks caps the links kept. Default DefaultMaxLinks.
	MaxLinks int
	// MaxTextBytes caps Document.Text. Default DefaultMaxTextBytes.
	MaxTextBytes int
	// MaxAnchorText caps each Link.Text. Default DefaultMaxAnchorText.
	MaxAnchorText int
	// MaxFieldBytes caps the title, description and language. Default
	// DefaultMaxFieldBytes.
	MaxFieldBytes int
	// MaxAttrBytes drops URL attributes longer than this (counted in
	// Skipped), and so a meta refresh URL longer than this; other
	// attributes are cut to it. Default DefaultMaxAttrBytes.
	MaxAttrBytes int
	// MaxTokenBytes caps the tokenizer's buffer, so one giant token cannot
	// exhaust memory. Default DefaultMaxTokenBytes.
	MaxTokenBytes int
}

func (o *Config) withDefaults() Config {
	var l Config
	if o != nil {
		l = *o
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxLinks, DefaultMaxLinks)
	def(&l.MaxTextBytes, DefaultMaxTextBytes)
	def(&l.MaxAnchorText, DefaultMaxAnchorText)
	def(&l.MaxFieldBytes, DefaultMaxFieldBytes)
	def(&l.MaxAttrBytes, DefaultMaxAttrBytes)
	def(&l.MaxTokenBytes, DefaultMaxTokenBytes)
	return l
}

// Extract reads an HTML page from r. pageURL is the URL the page was
// fetched from (after redirects); it may be empty, in which case only
// absolute links are kept. header is the response header (may be nil): its
// Content-Type charset, X-Robots-Tag and Content-Language are used.
//
// The only errors are ErrInvalidPageURL, ErrTokenTooLarge (with the partial
// Document) and errors reading r (also with the partial Document).
func (o *Config) Extract(r io.Reader, pageURL string, header http.Header) (*Document, error) {
	return o.run(r, nil, pageURL, header)
}

// ExtractBytes is Extract for a body already in memory; it avoids a copy.
func (o *Config) ExtractBytes(body []byte, pageURL string, header http.Header) (*Document, error) {
	return o.run(nil, body, pageURL, header)
}

// Extract is Config.Extract with the default options.
func Extract(r io.Reader, pageURL string, header http.Header) (*Document, error) {
	return (*Config)(nil).Extract(r, pageURL, header)
}

// ExtractBytes is Config.ExtractBytes with the default options.
func ExtractBytes(body []byte, pageURL string, header http.Header) (*Document, error) {
	return (*Config)(nil).ExtractBytes(body, pageURL, header)
}
