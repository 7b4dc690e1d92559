package warc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cdxEntry is what a CDXJ index line says of a response or revisit record
// before the record is written: where it went is added by line.
type cdxEntry struct {
	key, timestamp string
	url, mime      string
	status         int
	digest         string // the payload digest without its "sha1:" label
}

// newCDXEntry describes rec, the response or revisit record of ex, dated
// date.
func newCDXEntry(ex *Exchange, rec *record, date time.Time, revisit bool) *cdxEntry {
	e := &cdxEntry{
		key:       surt(ex.URL),
		timestamp: date.UTC().Format("20060102150405"),
		url:       ex.URL,
		status:    ex.StatusCode,
	}
	if revisit {
		e.mime = "warc/revisit"
	} else if ct := ex.Header.Get("Content-Type"); ct != "" {
		e.mime, _, _ = strings.Cut(ct, ";")
		e.mime = strings.TrimSpace(e.mime)
	}
	if d := rec.get("WARC-Payload-Digest"); d != "" {
		_, e.digest, _ = strings.Cut(d, ":")
	}
	return e
}

// cdxjFields are a CDXJ line's JSON fields, in the order pywb and warcio
// write them; length, offset and status are strings there.
type cdxjFields struct {
	URL      string `json:"url"`
	Mime     string `json:"mime,omitempty"`
	Status   string `json:"status,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// line returns the CDXJ line (without its newline) of the record at sp in
// the file named filename: the SURT key, the 14-digit timestamp and a JSON
// object, the format pywb, OpenWayback and warcio's cdx-index share.
func (e *cdxEntry) line(sp span, filename string) string {
	var b bytes.Buffer
	b.WriteString(e.key)
	b.WriteByte(' ')
	b.WriteString(e.timestamp)
	b.WriteByte(' ')
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	enc.Encode(cdxjFields{
		URL: e.url, Mime: e.mime, Status: strconv.Itoa(e.status), Digest: e.digest,
		Length: strconv.FormatInt(sp.length, 10), Offset: strconv.FormatInt(sp.offset, 10), Filename: filename,
	})
	return strings.TrimSuffix(b.String(), "\n")
}

// indexPath is where the CDXJ index of the WARC file at path goes:
// NAME.warc.gz is indexed in NAME.cdxj.
func indexPath(path string) string {
	return strings.TrimSuffix(path, ".warc.gz") + ".cdxj"
}

// writeIndex writes lines, sorted bytewise as CDXJ readers expect (the
// order of `LC_ALL=C sort`), to path, through a temporary file so that path
// is either missing or complete.
func writeIndex(path string, lines []string) error {
	slices.Sort(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	tmp := path + OpenSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing index: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing index %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing index: %w", err)
	}
	return nil
}

// surt returns the SURT form (Sort-friendly URI Reordering Transform) of an
// http or https URL as CDX indexes key it, the way pywb and warcio do:
// lower case, scheme and a leading "www." (or "www2." ...) dropped, host
// labels reversed and joined by commas, a non-default port after a colon,
// ")" and the path, and the query's parameters sorted. "http://www.Example.com/a?b=1&a=2"
// becomes "com,example)/a?a=2&b=1". Other URLs are returned as they are.
func surt(raw string) string {
	lower := strings.ToLower(raw)
	rest, ok := strings.CutPrefix(lower, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(lower, "https://"); !ok {
			return raw
		}
	}
	if strings.HasPrefix(rest, "www") {
		i := 3
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i < len(rest) && rest[i] == '.' {
			lower = lower[:len(lower)-len(rest)] + rest[i+1:]
		}
	}
	u, err := url.Parse(lower)
	if err != nil || u.Host == "" {
		return raw
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	labels := strings.Split(host, ".")
	slices.Reverse(labels)
	var b strings.Builder
	b.WriteString(strings.Join(labels, ","))
	if port := u.Port(); port != "" && !(u.Scheme == "http" && port == "80") && !(u.Scheme == "https" && port == "443") {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteByte(')')
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		slices.Sort(params)
		b.WriteByte('?')
		b.WriteString(strings.Join(params, "&"))
	}
	return b.String()
}
