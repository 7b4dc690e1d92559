package main

import (
	"errors"
	"fmt"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// urlnormCase is one case of urlnorm.json (the schema is described in the README of the conformance data directory).
type urlnormCase struct {
	ID         string   `json:"id"`
	Source     string   `json:"source"`
	Category   string   `json:"category"`
	Note       string   `json:"note"`
	Input      string   `json:"input"`
	Expected   *string  `json:"expected"`
	Profile    string   `json:"profile"`
	Transforms []string `json:"transforms"`
}

func init() {
	register("urlnorm", runURLNorm)
}

func runURLNorm(data []byte) ([]result, error) {
	cases, err := decodeCases[urlnormCase](data)
	if err != nil {
		return nil, err
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		results = append(results, runURLNormCase(c))
	}
	return results, nil
}

func runURLNormCase(c urlnormCase) result {
	opts, err := urlnormProfile(c.Profile, c.Transforms)
	if err != nil {
		return result{id: c.ID, detail: err.Error()}
	}
	got, err := opts.Normalize(c.Input)
	switch {
	case c.Expected == nil && err != nil:
		if !errors.Is(err, urlnorm.ErrInvalid) {
			return result{id: c.ID, detail: fmt.Sprintf("expected an ErrInvalid rejection, got %v", quote(err))}
		}
		return result{id: c.ID, ok: true}
	case c.Expected == nil:
		return result{id: c.ID, detail: fmt.Sprintf("expected rejection, got %s", quote(got))}
	case err != nil:
		return result{id: c.ID, detail: fmt.Sprintf("expected %s, got %s", quote(c.Expected), quote(err))}
	case got != *c.Expected:
		return result{id: c.ID, detail: fmt.Sprintf("expected %s, got %s", quote(c.Expected), quote(got))}
	}
	return result{id: c.ID, ok: true}
}

// urlnormProfile maps a suite profile to the urlnorm options under test.
// For explicit-transforms cases it builds an Options value with exactly
// the listed transforms.
func urlnormProfile(profile string, transforms []string) (*urlnorm.Config, error) {
	switch profile {
	case "rfc3986-safe":
		o := urlnorm.Safe()
		return &o, nil
	case "crawler-basic":
		o := urlnorm.Crawler()
		return &o, nil
	case "crawler-aggressive":
		o := urlnorm.Aggressive()
		return &o, nil
	case "safebrowsing":
		o := urlnorm.SafeBrowsing()
		return &o, nil
	case "explicit-transforms":
		var o urlnorm.Config
		for _, t := range transforms {
			set, ok := urlnormTransforms[t]
			if !ok {
				return nil, fmt.Errorf("unknown transform %q", t)
			}
			set(&o)
		}
		return &o, nil
	}
	return nil, fmt.Errorf("unknown profile %q", profile)
}

// urlnormTransforms maps the suite's transform vocabulary to Options
// fields. Steps that urlnorm always performs while parsing (lower-casing
// the scheme, trimming white space, removing tabs and newlines, validating
// IPv6 hosts, rejecting invalid URLs) and "identity" map to nothing.
var urlnormTransforms = map[string]func(*urlnorm.Config){
	"add-default-scheme":           func(o *urlnorm.Config) { o.AddDefaultScheme = true },
	"add-trailing-slash":           func(o *urlnorm.Config) { o.AddTrailingSlash = true },
	"add-www":                      func(o *urlnorm.Config) { o.AddWWW = true },
	"decode-dword-host":            func(o *urlnorm.Config) { o.CanonicalIPv4 = true },
	"decode-hex-host":              func(o *urlnorm.Config) { o.CanonicalIPv4 = true },
	"decode-octal-host":            func(o *urlnorm.Config) { o.CanonicalIPv4 = true },
	"decode-host-escapes":          func(o *urlnorm.Config) { o.DecodeHostEscapes = true },
	"decode-unreserved-escapes":    func(o *urlnorm.Config) { o.DecodeUnreservedEscapes = true },
	"empty-path-to-slash":          func(o *urlnorm.Config) { o.EmptyPathToSlash = true },
	"encode-invalid-chars":         func(o *urlnorm.Config) { o.EncodeInvalidChars = true },
	"escape-stray-percent":         func(o *urlnorm.Config) { o.EscapeStrayPercent = true },
	"force-http":                   func(o *urlnorm.Config) { o.ForceHTTP = true },
	"identity":                     func(*urlnorm.Config) {},
	"idn-to-punycode":              func(o *urlnorm.Config) { o.IDNToPunycode = true },
	"ipv6-host":                    func(*urlnorm.Config) {},
	"keep-empty-query":             func(*urlnorm.Config) {},
	"lowercase-host":               func(o *urlnorm.Config) { o.LowercaseHost = true },
	"lowercase-path":               func(o *urlnorm.Config) { o.LowercasePath = true },
	"lowercase-scheme":             func(*urlnorm.Config) {},
	"reject-invalid":               func(*urlnorm.Config) {},
	"remove-default-port":          func(o *urlnorm.Config) { o.RemoveDefaultPort = true },
	"remove-directory-index":       func(o *urlnorm.Config) { o.RemoveDirectoryIndex = true },
	"remove-dot-segments":          func(o *urlnorm.Config) { o.RemoveDotSegments = true },
	"remove-duplicate-slashes":     func(o *urlnorm.Config) { o.RemoveDuplicateSlashes = true },
	"remove-empty-param-value":     func(o *urlnorm.Config) { o.RemoveEmptyParamValue = true },
	"remove-empty-params":          func(o *urlnorm.Config) { o.RemoveEmptyParams = true },
	"remove-empty-port":            func(o *urlnorm.Config) { o.RemoveEmptyPort = true },
	"remove-empty-query":           func(o *urlnorm.Config) { o.RemoveEmptyQuery = true },
	"remove-fragment":              func(o *urlnorm.Config) { o.RemoveFragment = true },
	"remove-host-trailing-dot":     func(o *urlnorm.Config) { o.RemoveHostTrailingDot = true },
	"remove-port":                  func(o *urlnorm.Config) { o.RemovePort = true },
	"remove-trailing-slash":        func(o *urlnorm.Config) { o.RemoveTrailingSlash = true },
	"remove-unnecessary-host-dots": func(o *urlnorm.Config) { o.RemoveUnnecessaryHostDots = true },
	"remove-userinfo":              func(o *urlnorm.Config) { o.RemoveUserinfo = true },
	"remove-www":                   func(o *urlnorm.Config) { o.RemoveWWW = true },
	"repeated-unescape":            func(o *urlnorm.Config) { o.RepeatedUnescape = true },
	"sort-query":                   func(o *urlnorm.Config) { o.SortQuery = true },
	"strip-tab-cr-lf":              func(*urlnorm.Config) {},
	"trim-whitespace":              func(*urlnorm.Config) {},
	"uppercase-escapes":            func(o *urlnorm.Config) { o.UppercaseEscapes = true },
}
