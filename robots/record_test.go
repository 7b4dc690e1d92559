package robots_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/robots"
)

func TestRecordRoundTrip(t *testing.T) {
	recs := []robots.Record{
		{},
		{Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"), URL: "https://example.com/robots.txt",
			FetchedAt: t0, Expires: t0.Add(24 * time.Hour), GoodStatus: 200, GoodBody: []byte("x"), GoodAt: t0},
		{Status: 503, Err: "HTTP status 503", FetchedAt: t0.Add(time.Nanosecond), Expires: t0.Add(time.Minute),
			Failures: 7, UnreachableSince: time.Unix(-5, 999999999).UTC(), GoodStatus: 404, GoodAt: t0},
	}
	for i, r := range recs {
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got robots.Record
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("record %d: round trip gave\n%+v\nwant\n%+v", i, got, r)
		}
		// Every proper prefix is rejected, never misread.
		for n := 0; n < len(b); n++ {
			var x robots.Record
			if err := x.UnmarshalBinary(b[:n]); !errors.Is(err, robots.ErrBadRecord) {
				t.Fatalf("record %d cut at %d: err = %v, want ErrBadRecord", i, n, err)
			}
		}
	}
	var x robots.Record
	if err := x.UnmarshalBinary([]byte{9}); !errors.Is(err, robots.ErrBadRecord) {
		t.Errorf("unknown version: %v", err)
	}
}

// FuzzRecord checks that decoding arbitrary data never panics and that
// whatever decodes re-encodes to data that decodes to the same record.
func FuzzRecord(f *testing.F) {
	r := robots.Record{Status: 200, Body: []byte("User-agent: *\n"), FetchedAt: t0, Expires: t0.Add(time.Hour)}
	b, _ := r.MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r robots.Record
		if err := r.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, robots.ErrBadRecord) {
				t.Fatalf("error %v does not wrap ErrBadRecord", err)
			}
			return
		}
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var r2 robots.Record
		if err := r2.UnmarshalBinary(b); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		b2, _ := r2.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatalf("encoding not stable")
		}
	})
}
