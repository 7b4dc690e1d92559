package bloom

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func snapshotOf(t testing.TB, s *Set) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, expected := range []uint64{2000, 140_000} { // 1 and 2 shards
		s := mustNew(t, Config{Expected: expected, FalsePositiveRate: 0.01})
		// Past capacity, so the snapshot holds grown stages.
		n := 2 * expected
		for i := uint64(0); i < n; i++ {
			s.TestAndAddKey(i)
		}
		snap := snapshotOf(t, s)
		r, err := Load(bytes.NewReader(snap), Config{})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := s.Stats(), r.Stats(); a.Bits != b.Bits || a.Count != b.Count || a.Stages != b.Stages {
			t.Fatalf("stats differ after reload: %+v vs %+v", a, b)
		}
		for i := uint64(0); i < n+50_000; i += 3 {
			a, _ := s.ContainsKey(i)
			b, _ := r.ContainsKey(i)
			if a != b {
				t.Fatalf("key %d: original %v, reloaded %v", i, a, b)
			}
		}
		if again := snapshotOf(t, r); !bytes.Equal(again, snap) {
			t.Fatal("snapshot of the reloaded set differs from the original snapshot")
		}
		// The reloaded set keeps working, including growth.
		for i := n; i < n+expected; i++ {
			r.TestAndAddKey(i)
		}
		if ok, _ := r.ContainsKey(n + expected - 1); !ok {
			t.Fatal("key added after reload not contained")
		}
	}
}

func TestSnapshotCorruption(t *testing.T) {
	s := mustNew(t, Config{Expected: 500})
	for i := uint64(0); i < 1200; i++ {
		s.TestAndAddKey(i)
	}
	snap := snapshotOf(t, s)
	for i := 0; i < len(snap); i++ {
		masks := []byte{0x01}
		if i < 64 {
			masks = append(masks, 0x80, 0xff)
		}
		for _, mask := range masks {
			bad := bytes.Clone(snap)
			bad[i] ^= mask
			if _, err := Load(bytes.NewReader(bad), Config{}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flipping byte %d (mask %#x): err = %v, want ErrCorrupt", i, mask, err)
			}
		}
	}
	for n := 0; n < len(snap); n++ {
		if _, err := Load(bytes.NewReader(snap[:n]), Config{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: err = %v, want ErrCorrupt", n, err)
		}
	}
}

func TestSnapshotHostileHeader(t *testing.T) {
	// A header claiming the largest allowed set (2^40 keys, about 1.3 TB
	// of filter), followed by nothing: Load must fail on the missing data
	// without allocating the claimed size.
	hdr := snapshotOf(t, mustNew(t, Config{Expected: 1000}))[:32]
	hdr[12] = 0 // expected = 2^40, little-endian at offset 12
	hdr[13] = 0
	hdr[17] = 1
	hdr[28] = 0 // shards = 4096, at offset 28
	hdr[29] = 0x10
	_, err := Load(bytes.NewReader(hdr), Config{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "shard 0") {
		t.Fatalf("err = %v, want ErrCorrupt about shard 0 (past the header)", err)
	}
}

func FuzzLoad(f *testing.F) {
	s, _ := New(Config{Expected: 100})
	for i := uint64(0); i < 300; i++ {
		s.TestAndAddKey(i)
	}
	var buf bytes.Buffer
	s.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(snapshotMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Load(bytes.NewReader(data), Config{})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		// Whatever loads must be usable and re-serialize identically.
		r.TestAndAddKey(12345)
		r.ContainsKey(54321)
		var out bytes.Buffer
		if _, err := r.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
	})
}
