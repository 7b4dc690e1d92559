package warc_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// strictRecord is one record as read by strictRead, a minimal WARC 1.1
// parser written for these tests.
type strictRecord struct {
	file   string
	offset int64 // of its gzip member
	fields map[string][]string
	block  []byte
}

func (r strictRecord) get(name string) string {
	if v := r.fields[strings.ToLower(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (r strictRecord) has(name string) bool { return len(r.fields[strings.ToLower(name)]) > 0 }

var (
	recordIDRE = regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	warcDateRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$`)
)

// strictRead reads every gzip member of every finished file in dir and
// checks that each holds exactly one well-formed WARC/1.1 record: the
// version line, fields (none repeated but WARC-Concurrent-To), a block of
// exactly Content-Length bytes, the closing CRLF CRLF and nothing more. It
// checks the mandatory fields, the record ID and date formats, that record
// IDs are unique, and recomputes every WARC-Block-Digest.
func strictRead(t *testing.T, dir string) []strictRecord {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	ids := map[string]bool{}
	var out []strictRecord
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		br := bytes.NewReader(data)
		for br.Len() > 0 {
			offset := int64(len(data) - br.Len())
			zr, err := gzip.NewReader(br)
			if err != nil {
				t.Fatalf("%s@%d: %v", name, offset, err)
			}
			zr.Multistream(false)
			member, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("%s@%d: %v", name, offset, err)
			}
			rec := parseStrict(t, name, offset, member)
			if id := rec.get("WARC-Record-ID"); ids[id] {
				t.Errorf("%s@%d: WARC-Record-ID %s repeated", name, offset, id)
			} else {
				ids[id] = true
			}
			out = append(out, rec)
		}
	}
	return out
}

func parseStrict(t *testing.T, name string, offset int64, member []byte) strictRecord {
	t.Helper()
	where := filepath.Base(name) + "@" + strconv.FormatInt(offset, 10)
	rec := strictRecord{file: filepath.Base(name), offset: offset, fields: map[string][]string{}}
	r := bufio.NewReader(bytes.NewReader(member))
	line, err := r.ReadString('\n')
	if err != nil || line != "WARC/1.1\r\n" {
		t.Fatalf("%s: version line %q, %v", where, line, err)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasSuffix(line, "\r\n") {
			t.Fatalf("%s: field line %q, %v", where, line, err)
		}
		if line == "\r\n" {
			break
		}
		k, v, ok := strings.Cut(strings.TrimSuffix(line, "\r\n"), ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			t.Fatalf("%s: malformed field %q", where, line)
		}
		k = strings.ToLower(k)
		if len(rec.fields[k]) > 0 && k != "warc-concurrent-to" && k != "warc-protocol" {
			t.Errorf("%s: field %s repeated", where, k)
		}
		rec.fields[k] = append(rec.fields[k], strings.TrimSpace(v))
	}
	n, err := strconv.Atoi(rec.get("Content-Length"))
	if err != nil || n < 0 {
		t.Fatalf("%s: Content-Length %q", where, rec.get("Content-Length"))
	}
	rec.block = make([]byte, n)
	if _, err := io.ReadFull(r, rec.block); err != nil {
		t.Fatalf("%s: block shorter than Content-Length %d: %v", where, n, err)
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != "\r\n\r\n" {
		t.Errorf("%s: %q after the block, want CRLF CRLF and the end of the gzip member", where, rest)
	}
	for _, f := range []string{"WARC-Record-ID", "Content-Length", "WARC-Date", "WARC-Type"} {
		if !rec.has(f) {
			t.Errorf("%s: no %s", where, f)
		}
	}
	if id := rec.get("WARC-Record-ID"); !recordIDRE.MatchString(id) {
		t.Errorf("%s: WARC-Record-ID %q is not <urn:uuid:...>", where, id)
	}
	for _, f := range []string{"WARC-Date", "WARC-Refers-To-Date"} {
		if rec.has(f) && !warcDateRE.MatchString(rec.get(f)) {
			t.Errorf("%s: %s %q is not a W3C-ISO8601 UTC date", where, f, rec.get(f))
		}
	}
	if u := rec.get("WARC-Target-URI"); strings.ContainsAny(u, "<> \t") {
		t.Errorf("%s: WARC-Target-URI %q", where, u)
	}
	if got, want := rec.get("WARC-Block-Digest"), sha1b32(rec.block); got != want {
		t.Errorf("%s: WARC-Block-Digest %s, block digests to %s", where, got, want)
	}
	return rec
}

// httpHead parses the head of an HTTP message in a block into its start
// line and fields, and returns the rest of the block.
func httpHead(t *testing.T, block []byte) (string, http.Header, []byte) {
	t.Helper()
	head, body := httpBody(t, block)
	lines := strings.Split(head, "\r\n")
	h := http.Header{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("malformed HTTP field %q", l)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return lines[0], h, body
}

// TestRecordsConformToWARC11 writes the kinds of exchanges the Writer
// handles, across a rotation, and checks every record with the strict
// parser: framing, IDs, dates, digests recomputed, the links between
// records, and that each recorded HTTP response describes the body stored.
func TestRecordsConformToWARC11(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, MaxFileSize: 4 << 10, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	date := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.FixedZone("CET", 3600))
	encoded := http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"br"}, "Content-Length": {"17"},
		"Transfer-Encoding": {"chunked"}}
	for i, ex := range []warc.Exchange{
		{URL: "http://a.test/", StatusCode: 200, Header: encoded, Body: []byte("<html>page a</html>"), IP: "192.0.2.1"},
		{URL: "http://a.test/big", StatusCode: 200, Body: randomBody(rand.New(rand.NewSource(2)), 5000), Truncated: true},
		{URL: "http://b.test/same", StatusCode: 200, Header: encoded, Body: []byte("<html>page a</html>"), IP: "2001:db8::1"},
		{URL: "http://a.test/gone", StatusCode: 404, Body: []byte("gone"), IP: "::ffff:192.0.2.7"},
		{URL: "http://a.test/moved", StatusCode: 301, Header: http.Header{"Location": {"/"}}, IP: "fe80::1%eth0"},
		{URL: "http://a.test/", StatusCode: 304, Header: http.Header{"Etag": {`"1"`}}, IP: "192.0.2.1"},
	} {
		ex.Date = date.Add(time.Duration(i) * time.Second)
		if _, err := w.WriteExchange(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	recs := strictRead(t, dir)
	byID := map[string]strictRecord{}
	info := map[string]string{} // file -> its warcinfo record's ID
	for _, r := range recs {
		byID[r.get("WARC-Record-ID")] = r
		if r.get("WARC-Type") == "warcinfo" {
			if info[r.file] != "" || r.offset != 0 {
				t.Errorf("%s: warcinfo at %d", r.file, r.offset)
			}
			info[r.file] = r.get("WARC-Record-ID")
			if r.get("WARC-Filename") != r.file || r.get("Content-Type") != "application/warc-fields" {
				t.Errorf("%s: warcinfo %v", r.file, r.fields)
			}
		}
	}
	if len(info) < 2 {
		t.Errorf("%d files; want a rotation", len(info))
	}
	// WARC-IP-Address (WARC 1.1 section 5.13) on the response or revisit
	// record and on its request: the address in its plain textual form
	// (an IPv4-mapped IPv6 address as IPv4, no zone), absent when unknown.
	wantIP := map[string]string{
		"http://a.test/":      "192.0.2.1",
		"http://b.test/same":  "2001:db8::1",
		"http://a.test/gone":  "192.0.2.7",
		"http://a.test/moved": "fe80::1",
	}
	var types []string
	for _, r := range recs {
		typ := r.get("WARC-Type")
		if typ != "warcinfo" {
			if got, want := r.get("WARC-IP-Address"), wantIP[r.get("WARC-Target-URI")]; got != want || r.has("WARC-IP-Address") != (want != "") {
				t.Errorf("%s %s: WARC-IP-Address %q, want %q", typ, r.get("WARC-Target-URI"), got, want)
			} else if want != "" && net.ParseIP(got) == nil {
				t.Errorf("%s %s: WARC-IP-Address %q does not parse", typ, r.get("WARC-Target-URI"), got)
			}
		}
		types = append(types, typ)
		if typ == "warcinfo" {
			continue
		}
		where := r.file + "@" + strconv.FormatInt(r.offset, 10) + " " + typ + " " + r.get("WARC-Target-URI")
		if got := r.get("WARC-Warcinfo-ID"); got != info[r.file] {
			t.Errorf("%s: WARC-Warcinfo-ID %s, the file's warcinfo is %s", where, got, info[r.file])
		}
		if d := r.get("WARC-Date"); !strings.HasSuffix(d, "Z") || !strings.HasPrefix(d, "2026-01-02T02:04:") {
			t.Errorf("%s: WARC-Date %s, want the exchange's date in UTC", where, d)
		}
		switch typ {
		case "request":
			resp, ok := byID[r.get("WARC-Concurrent-To")]
			if !ok || resp.file != r.file || resp.get("WARC-Target-URI") != r.get("WARC-Target-URI") ||
				resp.get("WARC-Date") != r.get("WARC-Date") {
				t.Errorf("%s: WARC-Concurrent-To %s does not name its response", where, r.get("WARC-Concurrent-To"))
			}
			if r.get("Content-Type") != "application/http;msgtype=request" {
				t.Errorf("%s: Content-Type %s", where, r.get("Content-Type"))
			}
		case "response":
			if r.get("Content-Type") != "application/http;msgtype=response" {
				t.Errorf("%s: Content-Type %s", where, r.get("Content-Type"))
			}
			_, h, body := httpHead(t, r.block)
			if got, want := r.get("WARC-Payload-Digest"), sha1b32(body); got != want {
				t.Errorf("%s: WARC-Payload-Digest %s, payload digests to %s", where, got, want)
			}
			if h.Get("Content-Length") != strconv.Itoa(len(body)) || h.Get("Content-Encoding") != "" ||
				h.Get("Transfer-Encoding") != "" {
				t.Errorf("%s: recorded head %v does not describe the %d byte body stored", where, h, len(body))
			}
			if truncated := strings.HasSuffix(r.get("WARC-Target-URI"), "/big"); truncated != (r.get("WARC-Truncated") == "length") {
				t.Errorf("%s: WARC-Truncated %q", where, r.get("WARC-Truncated"))
			}
		case "revisit":
			_, _, body := httpHead(t, r.block)
			if len(body) != 0 || r.get("WARC-Truncated") != "length" {
				t.Errorf("%s: revisit block holds %d bytes of payload, WARC-Truncated %q", where, len(body), r.get("WARC-Truncated"))
			}
			switch r.get("WARC-Profile") {
			case "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest":
				orig, ok := byID[r.get("WARC-Refers-To")]
				if !ok || orig.get("WARC-Type") != "response" ||
					orig.get("WARC-Payload-Digest") != r.get("WARC-Payload-Digest") ||
					orig.get("WARC-Target-URI") != r.get("WARC-Refers-To-Target-URI") ||
					orig.get("WARC-Date") != r.get("WARC-Refers-To-Date") {
					t.Errorf("%s: does not refer to its original: %v", where, r.fields)
				}
			case "http://netpreserve.org/warc/1.1/revisit/server-not-modified":
			default:
				t.Errorf("%s: WARC-Profile %q", where, r.get("WARC-Profile"))
			}
		default:
			t.Errorf("%s: unexpected record type", where)
		}
	}
	if want := "warcinfo response request"; !strings.HasPrefix(strings.Join(types, " "), want) {
		t.Errorf("record types %v", types)
	}
}

// TestNotModifiedRevisitHasNoPayloadDigest: for a revisit record of profile
// server-not-modified "the payload is defined as the original payload
// content from which a 'Last-Modified' and/or 'ETag' value was taken" (WARC
// 1.1 section 6.7.3), which the Writer has not seen. The digest of the 304's
// empty body is not its digest; indexers copy WARC-Payload-Digest into the
// CDX digest field, and pywb resolves a revisit to the earlier capture of
// the same URL with that digest, here any empty-bodied capture (a redirect,
// say).
func TestNotModifiedRevisitHasNoPayloadDigest(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/", StatusCode: 304,
		Header: http.Header{"Etag": {`"v1"`}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range strictRead(t, dir) {
		if r.get("WARC-Type") != "revisit" {
			continue
		}
		found = true
		if r.has("WARC-Payload-Digest") {
			t.Errorf("server-not-modified revisit carries WARC-Payload-Digest %s (the digest of no bytes), not that of the unmodified content",
				r.get("WARC-Payload-Digest"))
		}
	}
	if !found {
		t.Fatal("no revisit record for the 304")
	}
	if res.Ref.PayloadDigest != "" {
		t.Errorf("Result.Ref.PayloadDigest = %q for a 304", res.Ref.PayloadDigest)
	}
}

// TestNoContentResponsesKeepTheirContentLength: responses to HEAD and
// responses 1xx, 204 and 304 have no content whatever their Content-Length
// (RFC 9110 sections 6.4.1 and 8.6), so an empty body does not mean a
// length of 0. A server "MUST NOT send Content-Length" in a 1xx or 204
// response, and in a 304 or a HEAD response only the length a GET would
// have got; the recorded head must not claim 0.
func TestNoContentResponsesKeepTheirContentLength(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []warc.Exchange{
		{URL: "http://a.test/204", StatusCode: 204},
		{URL: "http://a.test/304", StatusCode: 304, Header: http.Header{"Etag": {`"v1"`}, "Content-Length": {"5120"}}},
		{URL: "http://a.test/head", Method: http.MethodHead, StatusCode: 200,
			Header: http.Header{"Content-Type": {"text/html"}, "Content-Length": {"5120"}}},
		// The length of an encoded representation is not that of the
		// decoded one the archive holds: it is dropped.
		{URL: "http://a.test/head-gz", Method: http.MethodHead, StatusCode: 200,
			Header: http.Header{"Content-Encoding": {"gzip"}, "Content-Length": {"1234"}}},
	} {
		if _, err := w.WriteExchange(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"http://a.test/204":     nil,
		"http://a.test/304":     {"5120"},
		"http://a.test/head":    {"5120"},
		"http://a.test/head-gz": nil,
	}
	got := map[string][]string{}
	for _, r := range strictRead(t, dir) {
		if typ := r.get("WARC-Type"); typ == "response" || typ == "revisit" {
			_, h, body := httpHead(t, r.block)
			got[r.get("WARC-Target-URI")] = h.Values("Content-Length")
			if typ == "response" && r.get("WARC-Payload-Digest") != sha1b32(body) {
				t.Errorf("%s: WARC-Payload-Digest %s, payload digests to %s", r.get("WARC-Target-URI"),
					r.get("WARC-Payload-Digest"), sha1b32(body))
			}
			if h.Get("Content-Encoding") != "" {
				t.Errorf("%s: Content-Encoding kept", r.get("WARC-Target-URI"))
			}
		}
	}
	for u, cl := range want {
		if strings.Join(got[u], ",") != strings.Join(cl, ",") {
			t.Errorf("%s: recorded Content-Length %q, want %q", u, got[u], cl)
		}
	}
}

// TestInvalidIPAddressRefused: WARC-IP-Address must hold a numeric address
// (WARC 1.1 section 5.13); anything else, a CR LF that would end the field
// early above all, is refused, and nothing of the exchange is written.
func TestInvalidIPAddressRefused(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range []string{"192.0.2.1\r\nWARC-Type: resource", "192.0.2.1:80", "[2001:db8::1]", "example.test", "1.2.3"} {
		if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/", StatusCode: 200, Body: []byte("x"), IP: ip}); err == nil {
			t.Errorf("IP %q accepted", ip)
		}
	}
	if _, err := w.WriteExchange(&warc.Exchange{URL: "http://a.test/ok", StatusCode: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range strictRead(t, dir) {
		if u := r.get("WARC-Target-URI"); u != "" && u != "http://a.test/ok" {
			t.Errorf("record %s for %s written", r.get("WARC-Type"), u)
		}
	}
}
