package urlnorm

// Config is a normalization profile: a set of individual transforms, each
// off in the zero value. Normalize applies the enabled ones in a fixed order
// (parse, host, port, path, query, fragment).
//
// Some steps are part of parsing and always happen, whatever the options:
// leading and trailing C0 controls and spaces are trimmed and tabs and
// newlines removed (as the URL Standard does), the scheme is lower-cased, a
// backslash in an http(s) path is a slash, the port must be a decimal
// number no greater than 65535 (leading zeros are dropped), and a bracketed
// host must be a valid IPv6 address.
//
// The predefined profiles are functions returning a fresh value of this
// type, so tailoring one cannot change another caller's profile (or the
// keys Normalize gives):
//
//	opts := urlnorm.Crawler()
//	opts.DropParams = append(opts.DropParams, "ref")
type Config struct {
	// MaxLength is the longest URL, in bytes, accepted as input or produced
	// as output; longer ones yield ErrTooLong. Zero means DefaultMaxLength;
	// a negative value means no limit.
	MaxLength int

	// AddDefaultScheme prefixes "http://" to a URL without a scheme, such
	// as "example.com/a" or "//example.com/a". A string like "host.tld:8080/x"
	// or "localhost:8080" counts as scheme-less (a host and port).
	AddDefaultScheme bool
	// OtherSchemes accepts hierarchical URLs ("scheme://authority/...") of
	// schemes other than http and https and applies the generic RFC 3986
	// steps to them. URLs without an authority (mailto:, javascript:) are
	// always rejected with ErrUnsupportedScheme.
	OtherSchemes bool
	// ForceHTTP rewrites https to http (after any default port was removed).
	ForceHTTP bool

	// RemoveUserinfo drops "user:password@" from the authority.
	RemoveUserinfo bool
	// LowercaseHost lower-cases the ASCII letters of the host.
	LowercaseHost bool
	// DecodeHostEscapes percent-decodes the host ("example%2Ecom"); a
	// decoded host that is not UTF-8, or contains a character no host may
	// contain, is rejected.
	DecodeHostEscapes bool
	// IDNToPunycode converts an internationalized host to its ASCII
	// (punycode) form with UTS #46 processing as browsers do (nontransitional,
	// hyphens unchecked), and validates "xn--" labels.
	IDNToPunycode bool
	// CanonicalIPv4 rewrites a host that is an IPv4 address in any form
	// inet_aton and browsers accept (octal "0102.0146.07.0223", hex
	// "0x42660793", dword "1113982867", fewer than four parts) as four
	// decimal octets. Trailing dots of the host are kept.
	CanonicalIPv4 bool
	// CanonicalIPv6 rewrites a bracketed IPv6 host in the RFC 5952 text
	// form (lower case, longest zero run compressed, IPv4-mapped addresses
	// in dotted form).
	CanonicalIPv6 bool
	// RemoveHostTrailingDot drops trailing dots of the host ("example.com.").
	RemoveHostTrailingDot bool
	// RemoveUnnecessaryHostDots drops leading and trailing dots of the host
	// and collapses runs of dots to one.
	RemoveUnnecessaryHostDots bool
	// RemoveWWW drops a leading "www." label of the host; AddWWW adds one
	// when missing (not to IP addresses). Both can merge distinct sites.
	RemoveWWW, AddWWW bool

	// RemoveDefaultPort drops the scheme's default port (80 for http, 443
	// for https).
	RemoveDefaultPort bool
	// RemoveEmptyPort drops a ':' not followed by a port ("example.com:/").
	RemoveEmptyPort bool
	// RemovePort drops any port.
	RemovePort bool

	// UppercaseEscapes writes the hex digits of percent-escapes in upper
	// case (RFC 3986 §6.2.2.1) in the userinfo and path (and the query and
	// fragment when QueryEscapes is set).
	UppercaseEscapes bool
	// DecodeUnreservedEscapes decodes percent-escapes of unreserved
	// characters (ALPHA, DIGIT, '-', '.', '_', '~'; RFC 3986 §6.2.2.2) in
	// the userinfo and path (and the query and fragment when QueryEscapes
	// is set). Other escapes, such as "%2F", keep their meaning and stay.
	DecodeUnreservedEscapes bool
	// QueryEscapes extends UppercaseEscapes and DecodeUnreservedEscapes to
	// the query and fragment.
	QueryEscapes bool
	// EncodeInvalidChars percent-encodes (as UTF-8, upper-case hex) the
	// octets that may not appear in a URI: controls, space, non-ASCII, and
	// `"<>[\]^`+"`"+`{|}` (and '#' in a fragment, '@' in the userinfo).
	EncodeInvalidChars bool
	// EncodeQueryApostrophe percent-encodes "'" in the query as "%27", as
	// browsers send it for http and https URLs (the URL Standard's
	// special-query percent-encode set; Resolve does the same), so that a
	// URL spelled with "'" in a sitemap and the same URL resolved from a
	// link get one key. RFC 3986 lets "'" stand unencoded, and a server may
	// in principle tell the two apart, but no browser ever sends the
	// unencoded form.
	EncodeQueryApostrophe bool
	// EscapeStrayPercent writes a '%' that does not start a valid escape
	// as "%25".
	EscapeStrayPercent bool
	// RepeatedUnescape selects Safe Browsing escaping: the fragment is split
	// off, the URL percent-decoded repeatedly until no escape is left, and
	// then exactly the octets <= 0x20, >= 0x7F, '#' and '%' re-escaped.
	// UppercaseEscapes, DecodeUnreservedEscapes, EncodeInvalidChars and
	// EscapeStrayPercent are then redundant.
	RepeatedUnescape bool

	// EmptyPathToSlash writes an empty path as "/".
	EmptyPathToSlash bool
	// RemoveDotSegments resolves "." and ".." path segments (RFC 3986
	// §5.2.4).
	RemoveDotSegments bool
	// RemoveDuplicateSlashes collapses runs of '/' in the path. With
	// RemoveDotSegments this happens after dot segments are resolved, so
	// that ".." removes an empty segment as RFC 3986 §5.2.4 and browsers
	// do ("/a//../b" becomes "/a/b", not "/b"); with RepeatedUnescape it
	// happens first, as in the Safe Browsing reference implementation.
	RemoveDuplicateSlashes bool
	// LowercasePath lower-cases the ASCII letters of the path. Paths are
	// case-sensitive: this can merge distinct pages.
	LowercasePath bool
	// RemoveTrailingSlash drops a '/' ending a non-root path. "/a/" and
	// "/a" can be distinct pages.
	RemoveTrailingSlash bool
	// AddTrailingSlash appends '/' to a path that does not end in one; it
	// is ignored when RemoveTrailingSlash is set.
	AddTrailingSlash bool
	// RemoveDirectoryIndex drops a last path segment named "index" or
	// "default" with an extension of one to four letters, digits or '_'
	// ("index.html", "default.aspx"; ASCII case-insensitive). The index
	// file is usually, not always, what the directory serves.
	RemoveDirectoryIndex bool

	// RemoveEmptyQuery drops a '?' with nothing after it.
	RemoveEmptyQuery bool
	// SortQuery sorts the query's '&'-separated parameters by name, then
	// value (comparing their normalized bytes); equal ones keep their order.
	SortQuery bool
	// RemoveEmptyParams drops empty parameters ("a=1&&b=2") and parameters
	// with an empty name ("=1").
	RemoveEmptyParams bool
	// RemoveEmptyParamValue drops the '=' of a parameter with an empty
	// value ("b=" becomes "b").
	RemoveEmptyParamValue bool
	// DropParams lists query parameter names to remove, compared ASCII
	// case-insensitively with the parameter's normalized name; an entry
	// ending in '*' matches every name with that prefix ("utm_*"). The
	// same names are also removed as path parameters of a segment
	// (";jsessionid=..."). See DefaultDropParams.
	DropParams []string

	// RemoveFragment drops the fragment.
	RemoveFragment bool
}

// DefaultDropParams returns the query parameters the Crawler profile drops:
// analytics and ad-click tracking parameters, and session identifiers that
// servers put into URLs. None of them selects content; all of them make one
// page appear under many URLs. It returns a new slice on every call.
//
// The list: utm_* (Google Analytics campaign tags), gclid, gclsrc, dclid,
// gbraid, wbraid (Google Ads), fbclid (Facebook), msclkid (Microsoft Ads),
// yclid (Yandex), twclid (Twitter), ttclid (TikTok), igshid (Instagram),
// li_fat_id (LinkedIn), mc_cid, mc_eid (Mailchimp), _hsenc, _hsmi
// (HubSpot), mkt_tok (Marketo), _ga, _gl (Google cross-domain linking),
// jsessionid (Java servlets), phpsessid (PHP), aspsessionid* (classic ASP),
// cfid, cftoken (ColdFusion), sid, sessionid, session_id, oscsid
// (osCommerce), zenid (Zen Cart).
func DefaultDropParams() []string {
	return []string{
		"utm_*", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid",
		"msclkid", "yclid", "twclid", "ttclid", "igshid", "li_fat_id",
		"mc_cid", "mc_eid", "_hsenc", "_hsmi", "mkt_tok", "_ga", "_gl",
		"jsessionid", "phpsessid", "aspsessionid*", "cfid", "cftoken",
		"sid", "sessionid", "session_id", "oscsid", "zenid",
	}
}

// The predefined profiles. Each corresponds to a profile of the shared
// conformance suite (urlnorm.json). They are functions, not variables, so
// that no importer can change what Normalize (or another importer's copy)
// does: each call returns a value of its own, DropParams included.

// Safe applies only semantics-preserving steps (RFC 3986 §6.2.2 and
// §6.2.3): lower-case scheme and host, upper-case escapes, decode
// escaped unreserved characters, remove dot segments, drop the default
// and an empty port, "/" for an empty path. It keeps the fragment, an
// empty query, path case and trailing slashes. Besides, as browsers do,
// it converts IDN hosts to punycode, decodes escapes in the host and
// percent-encodes characters that may not appear in a URI. It accepts
// hierarchical URLs of any scheme.
func Safe() Config { return safeProfile }

// safeProfile is the profile Safe returns. Never modified.
var safeProfile = Config{
	OtherSchemes:            true,
	LowercaseHost:           true,
	DecodeHostEscapes:       true,
	IDNToPunycode:           true,
	RemoveDefaultPort:       true,
	RemoveEmptyPort:         true,
	UppercaseEscapes:        true,
	DecodeUnreservedEscapes: true,
	QueryEscapes:            true,
	EncodeInvalidChars:      true,
	EmptyPathToSlash:        true,
	RemoveDotSegments:       true,
}

// Crawler is the default profile (the behaviour of crawler-commons'
// BasicURLNormalizer plus dropping tracking and session parameters):
// Safe for http and https, plus adding a missing "http://", dropping
// userinfo, the host's trailing dot, the fragment and an empty query,
// canonical IP address hosts, escaping stray '%', collapsing duplicate
// slashes, sorting query parameters, removing empty ones and empty
// values, and dropping DefaultDropParams. It never changes the case of
// the path, trailing slashes or index files.
func Crawler() Config {
	o := crawlerProfile
	o.DropParams = DefaultDropParams()
	return o
}

// crawlerProfile is the profile Crawler returns and Normalize uses. It is
// never modified nor handed out (its DropParams would be shared).
var crawlerProfile = Config{
	AddDefaultScheme:        true,
	RemoveUserinfo:          true,
	LowercaseHost:           true,
	DecodeHostEscapes:       true,
	IDNToPunycode:           true,
	CanonicalIPv4:           true,
	CanonicalIPv6:           true,
	RemoveHostTrailingDot:   true,
	RemoveDefaultPort:       true,
	RemoveEmptyPort:         true,
	UppercaseEscapes:        true,
	DecodeUnreservedEscapes: true,
	QueryEscapes:            true,
	EncodeInvalidChars:      true,
	EncodeQueryApostrophe:   true,
	EscapeStrayPercent:      true,
	EmptyPathToSlash:        true,
	RemoveDotSegments:       true,
	RemoveDuplicateSlashes:  true,
	RemoveEmptyQuery:        true,
	SortQuery:               true,
	RemoveEmptyParams:       true,
	RemoveEmptyParamValue:   true,
	DropParams:              DefaultDropParams(),
	RemoveFragment:          true,
}

// Aggressive is Crawler plus lower-casing the path and removing
// trailing slashes and directory index files ("index.html"). It folds
// more spellings together, at a price: paths are case-sensitive, and
// "/a", "/a/" and "/a/index.html" can be distinct pages, so this
// profile can merge pages that differ. Use it for deduplication only
// where that is acceptable.
func Aggressive() Config {
	o := Crawler()
	o.LowercasePath, o.RemoveTrailingSlash, o.RemoveDirectoryIndex = true, true, true
	return o
}

// SafeBrowsing is the canonicalization of Google Safe Browsing ("URLs
// and Hashing"), for matching URLs against Safe Browsing style lists:
// strip tabs, CR and LF; drop the fragment; unescape repeatedly and
// re-escape octets <= 0x20, >= 0x7F, '#' and '%'; canonical IPv4 host;
// collapse dots in the host; drop port and userinfo; resolve dot
// segments and collapse slashes in the path (not in the query); add
// "http://" when missing; keep an empty query.
func SafeBrowsing() Config { return safeBrowsingProfile }

// safeBrowsingProfile is the profile SafeBrowsing returns. Never modified.
var safeBrowsingProfile = Config{
	AddDefaultScheme:          true,
	RepeatedUnescape:          true,
	RemoveUserinfo:            true,
	LowercaseHost:             true,
	CanonicalIPv4:             true,
	RemoveUnnecessaryHostDots: true,
	RemovePort:                true,
	EmptyPathToSlash:          true,
	RemoveDotSegments:         true,
	RemoveDuplicateSlashes:    true,
	RemoveFragment:            true,
}
