package pebble

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	cpebble "github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// Each test builds its damaged directory from a store it has just written:
// either closed cleanly (Close records the clean close), or a crash image
// (a copy of the directory taken while the DB is open after synced writes,
// which is what kill -9 leaves, since every write reached the files).

const damageKeys = 1000 // seen keys written per store; 1000 records span two WAL blocks

// writeSeen adds keys [from, to) to db's seen set, one synced record each.
func writeSeen(t *testing.T, db *DB, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := db.SeenStore().Add(uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// cleanStore writes damageKeys keys into a new directory and closes it.
// With flush, the first half is flushed into a table (.sst) and the MANIFEST
// records the flush.
func cleanStore(t *testing.T, flush bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	writeSeen(t, db, 0, damageKeys/2)
	if flush {
		if err := db.pdb.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	writeSeen(t, db, damageKeys/2, damageKeys)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// crashImage writes damageKeys keys (flushing the first half if flush) and
// returns a copy of the directory taken while the DB was still open.
func crashImage(t *testing.T, flush bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	writeSeen(t, db, 0, damageKeys/2)
	if flush {
		if err := db.pdb.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	writeSeen(t, db, damageKeys/2, damageKeys)
	img := filepath.Join(t.TempDir(), "image")
	if err := os.CopyFS(img, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return img
}

// newestFile returns the path of the last file in dir matching pattern.
func newestFile(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no %s in %s: %v", pattern, dir, err)
	}
	slices.Sort(m)
	return m[len(m)-1]
}

// dataWAL returns the newest WAL of dir that holds records.
func dataWAL(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	slices.Sort(m)
	for i := len(m) - 1; i >= 0; i-- {
		if fi, err := os.Stat(m[i]); err == nil && fi.Size() > recBlockSize {
			return m[i]
		}
	}
	t.Fatalf("no WAL with records in %s", dir)
	return ""
}

// chunkStarts returns the offsets of the valid chunks of the WAL at path.
func chunkStarts(t *testing.T, path string) []int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	num, ok := fileNum(filepath.Base(path), "", walSuffix)
	if !ok {
		t.Fatalf("not a WAL: %s", path)
	}
	var starts []int64
	for block := 0; block < len(data); block += recBlockSize {
		b := data[block:min(block+recBlockSize, len(data))]
		for p := 0; ; {
			n := chunkAt(b, p, uint32(num), true)
			if n == 0 {
				break
			}
			starts = append(starts, int64(block+p))
			p += n
		}
	}
	return starts
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[off] ^= 0x5a
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// pebbleGoroutines counts the goroutines running Pebble code.
func pebbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/cockroachdb/pebble") {
			count++
		}
	}
	return count
}

// pebbleGoroutinesDown returns the number of Pebble's goroutines once it
// is down to want, or what it still is after 10 s: a goroutine that a
// closed store stopped may take a moment to end on a loaded machine, and
// only one that never ends is a leak.
func pebbleGoroutinesDown(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		n := pebbleGoroutines()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(wait)
	}
}

// openDamaged opens dir, which must fail with ErrDamaged naming file ("" if
// the error need not name one), without panicking and leaving no goroutine
// of Pebble's behind.
func openDamaged(t *testing.T, dir, file string) *DamageError {
	t.Helper()
	before := pebbleGoroutines()
	db, err := Open(dir, Config{})
	if err == nil {
		db.Close()
		t.Fatal("Open of a damaged directory succeeded")
	}
	if after := pebbleGoroutinesDown(before); after > before {
		t.Errorf("failed Open left %d Pebble goroutines running (%d before)", after, before)
	}
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("Open: %v, want ErrDamaged", err)
	}
	var de *DamageError
	if !errors.As(err, &de) {
		t.Fatalf("Open: %T, want *DamageError", err)
	}
	if file != "" && de.File != file {
		t.Errorf("DamageError.File %q, want %q (%v)", de.File, file, err)
	}
	if !strings.Contains(err.Error(), "Config.Salvage") || !strings.Contains(err.Error(), "fresh directory") {
		t.Errorf("error gives no salvage hint: %v", err)
	}
	return de
}

// seenKeys returns how many of keys [0, damageKeys) db holds, and whether
// they are exactly a prefix.
func seenKeys(t *testing.T, db *DB) (n int, prefix bool) {
	t.Helper()
	prefix = true
	for i := range damageKeys {
		ok, err := db.SeenStore().Contains(uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if n != i {
				prefix = false
			}
			n++
		}
	}
	return n, prefix
}

func TestOpenTornWALTailRecovers(t *testing.T) {
	for _, c := range []struct {
		name string
		tear func(t *testing.T, wal string, last int64)
	}{
		{"last record cut", func(t *testing.T, wal string, last int64) { truncate(t, wal, last+5) }},
		{"last record garbled", func(t *testing.T, wal string, last int64) { flipByte(t, wal, last+12) }},
		{"zeroes after the cut", func(t *testing.T, wal string, last int64) {
			f, err := os.OpenFile(wal, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(last); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(make([]byte, 3*recBlockSize), last); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := crashImage(t, false)
			wal := dataWAL(t, img)
			starts := chunkStarts(t, wal)
			c.tear(t, wal, starts[len(starts)-1])

			db, err := Open(img, Config{})
			if err != nil {
				t.Fatalf("Open after a torn tail: %v", err)
			}
			defer db.Close()
			if n, prefix := seenKeys(t, db); n != damageKeys-1 || !prefix {
				t.Fatalf("recovered %d keys (prefix %v), want all %d but the torn last", n, prefix, damageKeys-1)
			}
			writeSeen(t, db, damageKeys, damageKeys+1) // and the DB is writable
		})
	}
}

func TestOpenWALCutAfterCleanClose(t *testing.T) {
	dir := cleanStore(t, false)
	wal := dataWAL(t, dir)
	starts := chunkStarts(t, wal)
	// At a record boundary in the middle: the file looks like a torn tail,
	// and only the clean-close record shows that records were lost.
	truncate(t, wal, starts[len(starts)/2])
	openDamaged(t, dir, filepath.Base(wal))
}

func TestOpenWALCutInMiddleAfterCrash(t *testing.T) {
	img := crashImage(t, false)
	wal := dataWAL(t, img)
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	// Bytes lost from the middle of earlier records, later ones intact.
	cut := len(data) / 3
	data = append(data[:cut:cut], data[cut+100:]...)
	if err := os.WriteFile(wal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	openDamaged(t, img, filepath.Base(wal))
}

func TestOpenWALFlippedBytes(t *testing.T) {
	t.Run("crash image, middle", func(t *testing.T) {
		img := crashImage(t, false)
		wal := dataWAL(t, img)
		flipByte(t, wal, size(t, wal)/3)
		de := openDamaged(t, img, filepath.Base(wal))
		if !strings.Contains(de.Problem, "followed by valid records") {
			t.Errorf("problem %q", de.Problem)
		}
	})
	t.Run("clean close, last record", func(t *testing.T) {
		dir := cleanStore(t, false)
		wal := dataWAL(t, dir)
		starts := chunkStarts(t, wal)
		flipByte(t, wal, starts[len(starts)-1]+12)
		openDamaged(t, dir, filepath.Base(wal))
	})
}

func TestOpenMissingCURRENT(t *testing.T) {
	for _, crash := range []bool{false, true} {
		dir := crashImage(t, true)
		if !crash {
			dir = cleanStore(t, true)
		}
		if err := os.Remove(filepath.Join(dir, "CURRENT")); err != nil {
			t.Fatal(err)
		}
		openDamaged(t, dir, "CURRENT")
	}
}

func TestOpenTruncatedMANIFEST(t *testing.T) {
	t.Run("clean close", func(t *testing.T) {
		dir := cleanStore(t, true)
		m := newestFile(t, dir, "MANIFEST-*")
		truncate(t, m, size(t, m)/2)
		openDamaged(t, dir, filepath.Base(m))
	})
	t.Run("crash image, first record damaged", func(t *testing.T) {
		img := crashImage(t, true)
		m := newestFile(t, img, "MANIFEST-*")
		flipByte(t, m, recLegacyHeader+2)
		openDamaged(t, img, filepath.Base(m))
	})
	t.Run("CURRENT names a missing MANIFEST", func(t *testing.T) {
		dir := cleanStore(t, true)
		m := newestFile(t, dir, "MANIFEST-*")
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
		openDamaged(t, dir, filepath.Base(m))
	})
}

// TestOpenMissingTable also guards openPebble's reading of Pebble's error
// text, which a Pebble upgrade may change.
func TestOpenMissingTable(t *testing.T) {
	for _, crash := range []bool{false, true} {
		dir := crashImage(t, true)
		if !crash {
			dir = cleanStore(t, true)
		}
		if err := os.Remove(newestFile(t, dir, "*.sst")); err != nil {
			t.Fatal(err)
		}
		if de := openDamaged(t, dir, ""); de.Err == nil {
			t.Errorf("DamageError without Pebble's error: %v", de)
		}
	}
}

func TestFormatVersion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	v, closer, err := db.pdb.Get(formatVersionKey)
	if err != nil {
		t.Fatalf("first Open recorded no format version: %v", err)
	}
	if string(v) != "1" {
		t.Errorf("format version %q, want 1", v)
	}
	closer.Close()
	// A directory written before the version was recorded is version 1.
	if err := db.pdb.Delete(formatVersionKey, cpebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(dir, Config{}); err != nil {
		t.Fatalf("Open of a directory without a version: %v", err)
	}
	if err := db.pdb.Set(formatVersionKey, []byte("2"), cpebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()

	before := pebbleGoroutines()
	_, err = Open(dir, Config{})
	if after := pebbleGoroutinesDown(before); after > before {
		t.Errorf("failed Open left %d Pebble goroutines running (%d before)", after, before)
	}
	var ve *VersionError
	if !errors.Is(err, ErrFormatVersion) || !errors.As(err, &ve) || ve.Found != "2" || ve.Want != FormatVersion {
		t.Fatalf("Open of version 2: %v, want a VersionError found 2", err)
	}
	if errors.Is(err, ErrDamaged) {
		t.Errorf("a version mismatch matches ErrDamaged: %v", err)
	}
}

// TestSalvage opens a directory whose WAL is damaged in the middle with
// Config.Salvage: the records before the damage are readable, nothing can
// be written, and the directory is left as it was.
func TestSalvage(t *testing.T) {
	img := crashImage(t, false)
	wal := dataWAL(t, img)
	starts := chunkStarts(t, wal)
	flipByte(t, wal, starts[len(starts)/2]+12)
	openDamaged(t, img, filepath.Base(wal))
	listing := func() map[string]int64 {
		m := map[string]int64{}
		es, _ := os.ReadDir(img)
		for _, e := range es {
			m[e.Name()] = size(t, filepath.Join(img, e.Name()))
		}
		return m
	}
	was := listing()

	db, err := Open(img, Config{Salvage: true})
	if err != nil {
		t.Fatalf("Salvage: %v", err)
	}
	n, prefix := seenKeys(t, db)
	if n == 0 || n >= damageKeys || !prefix {
		t.Errorf("salvaged %d keys (prefix %v), want the ones before the damage", n, prefix)
	}
	if err := db.SeenStore().Add(damageKeys); err == nil {
		t.Error("Add succeeded on a salvage DB")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if now := listing(); !mapsEqual(now, was) {
		t.Errorf("Salvage changed the directory: %v, was %v", now, was)
	}
	openDamaged(t, img, filepath.Base(wal))
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCleanCloseRecordGoesStale: a program that opens the directory
// without knowing of the clean-close record (Pebble itself here) leaves it
// stale, and a stale record must not make Open see damage.
func TestCleanCloseRecordGoesStale(t *testing.T) {
	dir := cleanStore(t, false)
	pdb, err := cpebble.Open(dir, &cpebble.Options{FS: vfs.Default, Logger: pebbleLogger{slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pdb.Set([]byte{prefixMeta, 'x'}, nil, cpebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := pdb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, cleanCloseName)); err != nil {
		t.Fatalf("no stale record to test with: %v", err)
	}
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatalf("Open with a stale clean-close record: %v", err)
	}
	defer db.Close()
	if n, _ := seenKeys(t, db); n != damageKeys {
		t.Errorf("%d keys, want %d", n, damageKeys)
	}
}

// TestScanLogShortReads checks scanLog on an intact WAL it reads a byte
// at a time.
func TestScanLogShortReads(t *testing.T) {
	img := crashImage(t, false)
	wal := dataWAL(t, img)
	num, _ := fileNum(filepath.Base(wal), "", walSuffix)
	f, err := os.Open(wal)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := scanLog(iotest.OneByteReader(f), uint32(num), true)
	if err != nil {
		t.Fatal(err)
	}
	if s.after != -1 || s.end != size(t, wal) {
		t.Errorf("scan of an intact WAL: end %d after %d, want end %d after -1", s.end, s.after, size(t, wal))
	}
}
