// Package urlnorm parses, resolves and normalizes http and https URLs, and
// derives the keys a crawler files them under.
//
// Every URL a crawler meets passes through this package first, so it is
// written to be both exact and fast:
//
//   - Resolve and ResolveString resolve a link against its page's URL the way
//     browsers do (the WHATWG URL Standard), which differs from RFC 3986 §5
//     in places: backslashes count as slashes, leading and trailing C0
//     controls and spaces are trimmed, tabs and newlines are removed, a
//     reference like "///host/x" names a host, and an empty fragment is kept.
//
//   - Normalize maps the many spellings of one URL to a single string, under
//     a profile chosen by the caller. A profile is an Config value, a struct
//     of individual transforms; four are predefined, each a function
//     returning a value of its own: Safe (RFC 3986 §6.2.2–6.2.3 only),
//     Crawler (the default), Aggressive (opt-in; it can merge distinct
//     pages) and SafeBrowsing (Google Safe Browsing canonicalization, for
//     matching URLs against blocklists).
//
//   - Host, HostOf and RegistrableDomain give the politeness and grouping
//     keys of a URL; Key and HostKey give stable 64-bit hashes (XXH64 with
//     seed 0) for deduplication and partitioning.
//
// Invalid input yields an error that wraps ErrInvalid and says what was
// wrong. URLs of schemes other than http and https (mailto:, javascript:,
// data:, ...) yield ErrUnsupportedScheme, so a caller can drop such links
// cheaply. URLs longer than Config.MaxLength (default 8 KiB) yield
// ErrTooLong, which also matches ErrInvalid.
//
// The package keeps no state between calls; every function is safe for
// concurrent use. Do not modify an Config value while it is in use.
package urlnorm

import (
	"errors"
	"fmt"
)

// DefaultMaxLength is the longest URL, in bytes, that Normalize and Resolve
// accept when no other limit is configured. Browsers and servers commonly
// refuse URLs well below 16 KiB; 8 KiB keeps every URL a crawler stores
// bounded without losing real pages.
const DefaultMaxLength = 8 << 10

var (
	// ErrInvalid is matched (errors.Is) by every error about a malformed
	// URL: an invalid host, port or percent-encoding, a missing host, and
	// an over-long URL.
	ErrInvalid = errors.New("urlnorm: invalid URL")

	// ErrUnsupportedScheme is matched by the error for a URL whose scheme
	// is not one this package normalizes (http and https, plus other
	// hierarchical schemes when Config.OtherSchemes is set). It does not
	// match ErrInvalid: "mailto:a@example.com" is a valid URL, just not one
	// a web crawler fetches.
	ErrUnsupportedScheme = errors.New("urlnorm: unsupported scheme")

	// ErrTooLong is matched by the error for a URL longer than the
	// configured maximum. It also matches ErrInvalid.
	ErrTooLong = fmt.Errorf("urlnorm: URL too long: %w", ErrInvalid)
)

// Error describes why a URL was rejected. It unwraps to ErrInvalid,
// ErrTooLong or ErrUnsupportedScheme.
type Error struct {
	// Input is the rejected URL, shortened to at most 256 bytes.
	Input string
	// Reason says what was wrong, e.g. "invalid port".
	Reason string
	// Err is the sentinel the error matches.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("urlnorm: %s: %q", e.Reason, e.Input)
}

// Unwrap returns the sentinel error, so errors.Is(err, ErrInvalid) works.
func (e *Error) Unwrap() error { return e.Err }

// maxErrorInput bounds the copy of the input kept in an Error.
const maxErrorInput = 256

func newError(sentinel error, input, reason string) error {
	if len(input) > maxErrorInput {
		input = input[:maxErrorInput] + "..."
	}
	return &Error{Input: input, Reason: reason, Err: sentinel}
}

func invalid(input, reason string) error { return newError(ErrInvalid, input, reason) }

// Normalize normalizes rawURL with the Crawler profile: it returns what
// Crawler().Normalize(rawURL) returns, without copying the profile. No
// package state an importer can change is read, so the keys it gives are
// the same in every program.
func Normalize(rawURL string) (string, error) {
	return crawlerProfile.Normalize(rawURL)
}
