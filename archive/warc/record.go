package warc

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"time"
)

// record is one WARC record (WARC 1.1 section 4): named fields in the
// order they are written, and a block, head followed by payload. The Writer
// builds records itself rather than through a library, so that each digest
// is computed once, over bytes already in memory, and the block goes to the
// gzip member without being copied.
type record struct {
	typ     string
	id      string   // WARC-Record-ID without its angle brackets: urn:uuid:...
	fields  []string // name, value, name, value, ... after WARC-Type, WARC-Record-ID
	head    []byte   // the start of the block: an HTTP message's head, or all of it
	payload []byte   // the rest of the block
	// stored says the payload is compressed already (a content-encoded
	// body): its gzip member stores the record rather than compress it
	// again, which would cost CPU and gain nothing.
	stored bool
}

func newRecord(typ string) *record {
	return &record{typ: typ, id: newRecordID()}
}

func (r *record) add(name, value string) { r.fields = append(r.fields, name, value) }

// get returns the value of the first field named name, or "".
func (r *record) get(name string) string {
	for i := 0; i+1 < len(r.fields); i += 2 {
		if r.fields[i] == name {
			return r.fields[i+1]
		}
	}
	return ""
}

// del removes the fields named name.
func (r *record) del(name string) {
	out := r.fields[:0]
	for i := 0; i+1 < len(r.fields); i += 2 {
		if r.fields[i] != name {
			out = append(out, r.fields[i], r.fields[i+1])
		}
	}
	r.fields = out
}

// addBlockDigest adds WARC-Block-Digest (WARC 1.1 section 5.8), the digest
// of the whole block.
func (r *record) addBlockDigest() {
	r.add("WARC-Block-Digest", digest(r.head, r.payload))
}

// size is the length of the block, the record's Content-Length.
func (r *record) size() int { return len(r.head) + len(r.payload) }

// encode writes the record to w: the version line, the fields, the
// WARC-Warcinfo-ID of the file's warcinfo record (if infoID is set) and
// Content-Length, then the block and the two CRLFs that end a record
// (WARC 1.1 section 4). scratch holds the header while it is built.
func (r *record) encode(w io.Writer, infoID string, scratch *bytes.Buffer) error {
	scratch.Reset()
	scratch.WriteString("WARC/1.1\r\nWARC-Type: ")
	scratch.WriteString(r.typ)
	scratch.WriteString("\r\nWARC-Record-ID: <")
	scratch.WriteString(r.id)
	scratch.WriteString(">\r\n")
	for i := 0; i+1 < len(r.fields); i += 2 {
		writeField(scratch, r.fields[i], r.fields[i+1])
	}
	if infoID != "" && r.typ != "warcinfo" {
		writeField(scratch, "WARC-Warcinfo-ID", "<"+infoID+">")
	}
	writeField(scratch, "Content-Length", strconv.Itoa(r.size()))
	scratch.WriteString("\r\n")
	if _, err := w.Write(scratch.Bytes()); err != nil {
		return err
	}
	if _, err := w.Write(r.head); err != nil {
		return err
	}
	if _, err := w.Write(r.payload); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\r\n\r\n")
	return err
}

// writeField writes one named field. A value cannot hold CR or LF (WARC
// 1.1 section 4, no continuation lines are written), which would break the
// record's framing; they become spaces.
func writeField(b *bytes.Buffer, name, value string) {
	if strings.ContainsAny(value, "\r\n") {
		value = strings.NewReplacer("\r", " ", "\n", " ").Replace(value)
	}
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteString("\r\n")
}

// digest returns the SHA-1 digest of the concatenated parts in the labelled
// base32 form web archives use ("sha1:" and 32 characters; WARC 1.1
// section 5.8 leaves the algorithm and encoding open, and CDX indexes,
// deduplication and replay tools expect this one).
func digest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	var sum [sha1.Size]byte
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(sum[:0]))
}

// newRecordID returns a new WARC-Record-ID (WARC 1.1 section 5.2): a random
// (version 4) UUID URN, written in angle brackets.
func newRecordID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return "urn:uuid:" + string(b[:])
}

// warcDate formats t as a WARC-Date (WARC 1.1 section 5.4): UTC, to the
// second, as most tools write and all read it.
func warcDate(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
