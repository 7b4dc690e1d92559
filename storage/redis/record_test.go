package redis

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []record{
		{},
		{url: "http://a.test/x?y=1", host: "a.test", depth: 7, priority: 0.125, meta: []byte{0, 0xff},
			attempts: 3, fingerprint: 1<<64 - 1, interval: -time.Hour},
	} {
		got, err := decodeRecord(r.encode())
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", r, err)
		}
		if got.url != r.url || got.host != r.host || got.depth != r.depth || got.priority != r.priority ||
			!bytes.Equal(got.meta, r.meta) || got.attempts != r.attempts || got.fingerprint != r.fingerprint || got.interval != r.interval {
			t.Fatalf("decode(encode(%+v)) = %+v", r, got)
		}
	}
	for _, bad := range [][]byte{nil, {9}, {recordVersion}, {recordVersion, 200}} {
		if _, err := decodeRecord(bad); !errors.Is(err, frontier.ErrCorrupt) {
			t.Errorf("decode(%x): %v, want ErrCorrupt", bad, err)
		}
	}
}

// FuzzDecodeRecord checks that any bytes decode to a record or to
// ErrCorrupt, never a panic, and that a decoded record encodes back to a
// form that decodes to the same record.
func FuzzDecodeRecord(f *testing.F) {
	f.Add((&record{url: "http://a.test/", host: "a.test", meta: []byte("m")}).encode())
	f.Add([]byte{recordVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			if !errors.Is(err, frontier.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := decodeRecord(r.encode())
		if err != nil || again.url != r.url || again.host != r.host || !bytes.Equal(again.meta, r.meta) ||
			again.depth != r.depth || again.attempts != r.attempts || again.fingerprint != r.fingerprint || again.interval != r.interval {
			t.Fatalf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}
