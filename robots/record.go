package robots

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// ErrBadRecord is returned by Record.UnmarshalBinary for data that is not a
// record written by MarshalBinary.
var ErrBadRecord = errors.New("robots: malformed record")

// recordVersion is the first byte of the binary form; it changes when the
// layout does.
const recordVersion = 1

// MarshalBinary encodes the record for a persistent Store. The layout is a
// version byte followed by the fields in declaration order: integers as
// varints, byte strings as a length varint and the bytes, times as a flag
// byte (0 for the zero time) followed by Unix seconds and nanoseconds
// (UTC; the location is not kept).
func (r Record) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 64+len(r.Body)+len(r.GoodBody)+len(r.URL)+len(r.Err))
	b = append(b, recordVersion)
	b = binary.AppendVarint(b, int64(r.Status))
	b = appendBytes(b, r.Body)
	b = appendBytes(b, []byte(r.URL))
	b = appendBytes(b, []byte(r.Err))
	b = appendTime(b, r.FetchedAt)
	b = appendTime(b, r.Expires)
	b = binary.AppendVarint(b, int64(r.Failures))
	b = appendTime(b, r.UnreachableSince)
	b = binary.AppendVarint(b, int64(r.GoodStatus))
	b = appendBytes(b, r.GoodBody)
	b = appendTime(b, r.GoodAt)
	return b, nil
}

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// UnmarshalBinary decodes data written by MarshalBinary. Errors wrap
// ErrBadRecord. The record's byte slices are copies, not views of data.
func (r *Record) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	if v := d.byte(); v != recordVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrBadRecord, v, recordVersion)
	}
	var out Record
	out.Status = d.int()
	out.Body = d.bytes()
	out.URL = string(d.bytes())
	out.Err = string(d.bytes())
	out.FetchedAt = d.time()
	out.Expires = d.time()
	out.Failures = d.int()
	out.UnreachableSince = d.time()
	out.GoodStatus = d.int()
	out.GoodBody = d.bytes()
	out.GoodAt = d.time()
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%w: %d trailing octets", ErrBadRecord, len(d.b))
	}
	*r = out
	return nil
}

// decoder reads the binary record form; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated or invalid %s", ErrBadRecord, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("header")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int {
	v := d.varint("integer")
	if v < -1<<31 || v > 1<<31-1 {
		d.fail("integer")
		return 0
	}
	return int(v)
}

func (d *decoder) bytes() []byte {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)-k) {
		d.fail("byte string")
		return nil
	}
	d.b = d.b[k:]
	if n == 0 {
		return nil
	}
	out := make([]byte, n)
	copy(out, d.b[:n])
	d.b = d.b[n:]
	return out
}

func (d *decoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
	default:
		d.fail("time")
		return time.Time{}
	}
	sec := d.varint("time")
	ns, k := binary.Uvarint(d.b)
	if k <= 0 || ns >= 1e9 {
		d.fail("time")
		return time.Time{}
	}
	d.b = d.b[k:]
	return time.Unix(sec, int64(ns)).UTC()
}
