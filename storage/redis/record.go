package redis

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// recordVersion is the first byte of an encoded record.
const recordVersion = 1

// record is what the queue keeps of an unfinished URL, opaque to the
// scripts: the entry's fields and the URL's fetch history.
type record struct {
	url, host   string
	depth       int
	priority    float64
	meta        []byte
	attempts    int
	fingerprint uint64
	interval    time.Duration
}

// encode returns the record's binary form: a version byte, then
// length-prefixed url, host and meta, and varints and fixed-width numbers.
func (r *record) encode() []byte {
	b := make([]byte, 0, 1+len(r.url)+len(r.host)+len(r.meta)+48)
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, uint64(len(r.url)))
	b = append(b, r.url...)
	b = binary.AppendUvarint(b, uint64(len(r.host)))
	b = append(b, r.host...)
	b = binary.AppendUvarint(b, uint64(r.depth))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.priority))
	b = binary.AppendUvarint(b, uint64(len(r.meta)))
	b = append(b, r.meta...)
	b = binary.AppendUvarint(b, uint64(r.attempts))
	b = binary.BigEndian.AppendUint64(b, r.fingerprint)
	b = binary.AppendVarint(b, int64(r.interval))
	return b
}

// decodeRecord parses encode's output; anything else is frontier.ErrCorrupt.
func decodeRecord(b []byte) (record, error) {
	var r record
	bad := func(what string) (record, error) {
		return record{}, fmt.Errorf("%w: redis queue record: %s", frontier.ErrCorrupt, what)
	}
	if len(b) == 0 || b[0] != recordVersion {
		return bad("unknown version")
	}
	b = b[1:]
	str := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		s := b[k : k+int(n)]
		b = b[k+int(n):]
		return s, true
	}
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	u, ok := str()
	if !ok {
		return bad("url")
	}
	h, ok := str()
	if !ok {
		return bad("host")
	}
	r.url, r.host = string(u), string(h)
	d, ok := uv()
	if !ok || d > math.MaxInt32 {
		return bad("depth")
	}
	r.depth = int(d)
	if len(b) < 8 {
		return bad("priority")
	}
	r.priority = math.Float64frombits(binary.BigEndian.Uint64(b))
	b = b[8:]
	m, ok := str()
	if !ok {
		return bad("meta")
	}
	if len(m) > 0 {
		r.meta = append([]byte(nil), m...)
	}
	a, ok := uv()
	if !ok || a > math.MaxInt32 {
		return bad("attempts")
	}
	r.attempts = int(a)
	if len(b) < 8 {
		return bad("fingerprint")
	}
	r.fingerprint = binary.BigEndian.Uint64(b)
	b = b[8:]
	iv, k := binary.Varint(b)
	if k <= 0 {
		return bad("interval")
	}
	r.interval = time.Duration(iv)
	if len(b) != k {
		return bad("trailing bytes")
	}
	return r, nil
}
