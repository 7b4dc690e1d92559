package pebble

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrDamaged is matched (errors.Is) by the error of an Open that found the
// directory damaged beyond what a crash leaves behind. The error is a
// *DamageError naming the file and the damage.
var ErrDamaged = errors.New("pebble: data directory is damaged")

// ErrFormatVersion is matched (errors.Is) by the error of an Open on a
// directory written in another crawlkit format version. The error is a
// *VersionError.
var ErrFormatVersion = errors.New("pebble: data directory has another format version")

// salvageHint ends every DamageError: a crawl stopped by one should tell
// its operator what to do next, not only what is wrong.
const salvageHint = "refusing to open it, to keep what it holds; to salvage, " +
	"copy the directory and open the copy with Config.Salvage, or start a fresh " +
	"directory (see Salvage in the storage/pebble package doc)"

// DamageError reports a damaged directory. It matches ErrDamaged.
type DamageError struct {
	Dir     string
	File    string // the damaged or missing file, relative to Dir; "" if unknown
	Problem string
	Err     error // the error Pebble reported, if Pebble found the damage
}

func (e *DamageError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pebble: data directory %s is damaged: ", e.Dir)
	if e.File != "" {
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	b.WriteString(e.Problem)
	if e.Err != nil {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	b.WriteString("; " + salvageHint)
	return b.String()
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamageError) Is(target error) bool { return target == ErrDamaged }

func (e *DamageError) Unwrap() error { return e.Err }

// VersionError reports a directory written in another crawlkit format
// version. It matches ErrFormatVersion.
type VersionError struct {
	Dir   string
	Found string // the version recorded in the directory
	Want  int    // FormatVersion
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("pebble: data directory %s has crawlkit format version %q, this build reads version %d; "+
		"open it with the crawlkit release that wrote it, or start a fresh directory", e.Dir, e.Found, e.Want)
}

// Is makes errors.Is(err, ErrFormatVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrFormatVersion }

// The record format of Pebble's write-ahead logs and MANIFEST
// (github.com/cockroachdb/pebble/record, LevelDB's log format): 32 KiB
// blocks of chunks that never straddle a block, each chunk a header
// (CRC32-C masked, length, type, and in recyclable chunks the log number)
// and a payload. These values are Pebble's wire format.
const (
	recBlockSize        = 32 << 10
	recLegacyHeader     = 7  // checksum(4) length(2) type(1)
	recRecyclableHeader = 11 // ... lognum(4)
	recFirstLegacy      = 1  // full, first, middle, last: 1-4
	recFirstRecyclable  = 5  // the same kinds, recyclable: 5-8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recChecksum is Pebble's masked CRC32-C of a chunk's type byte onwards.
func recChecksum(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// chunkAt reports the size of the valid chunk at b[p:], or 0 if there is
// none. A WAL's chunks must be recyclable ones carrying its log number
// (the chunks of an older log a recycled file still holds carry another);
// a MANIFEST's are legacy ones.
func chunkAt(b []byte, p int, logNum uint32, wal bool) int {
	if len(b)-p < recLegacyHeader {
		return 0
	}
	h := b[p:]
	typ := h[6]
	hdr := recLegacyHeader
	switch {
	case wal && typ >= recFirstRecyclable && typ < recFirstRecyclable+4:
		hdr = recRecyclableHeader
		if len(h) < hdr || binary.LittleEndian.Uint32(h[7:11]) != logNum {
			return 0
		}
	case !wal && typ >= recFirstLegacy && typ < recFirstLegacy+4:
	default:
		return 0
	}
	n := hdr + int(binary.LittleEndian.Uint16(h[4:6]))
	if n > len(h) || binary.LittleEndian.Uint32(h[0:4]) != recChecksum(h[6:n]) {
		return 0
	}
	return n
}

// endOfChunks returns the offset in block b of the first byte that is
// neither a valid chunk nor the zero padding a writer leaves at the end of
// a block too short for a header, or -1 if the whole block is valid.
func endOfChunks(b []byte, logNum uint32, wal bool) int {
	p := 0
	for {
		rest := len(b) - p
		if rest == 0 || (rest < recRecyclableHeader && allZero(b[p:])) {
			return -1
		}
		n := chunkAt(b, p, logNum, wal)
		if n == 0 {
			return p
		}
		p += n
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// logScan is what scanLog learned about one record log.
type logScan struct {
	end   int64 // offset where the valid chunks end; the size if they never do
	after int64 // offset of a valid chunk past end, or -1: damage in the middle
}

// scanLog reads the record log r (a WAL with number logNum, or a
// MANIFEST) and finds where its valid chunks end, and whether any valid
// chunk follows that point. Pebble stops replaying at the first invalid
// chunk and drops the rest silently; that is right for a torn tail (kill
// -9 leaves the last record partly written, and nothing after it) but
// loses every later record when the damage is in the middle, which a valid
// chunk after it gives away. A chunk right after the damage is found by
// trying every offset of the damaged block, a later one at the start of a
// later block, where a chunk always begins.
func scanLog(r io.Reader, logNum uint32, wal bool) (logScan, error) {
	s := logScan{end: -1, after: -1}
	buf := make([]byte, recBlockSize)
	var off int64
	for {
		n, err := io.ReadFull(r, buf)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return s, err
		}
		b := buf[:n]
		if s.end < 0 {
			if p := endOfChunks(b, logNum, wal); p >= 0 {
				s.end = off + int64(p)
				for q := p + 1; q < len(b); q++ {
					if chunkAt(b, q, logNum, wal) > 0 {
						s.after = off + int64(q)
						return s, nil
					}
				}
			}
		} else if n > 0 && chunkAt(b, 0, logNum, wal) > 0 {
			s.after = off
			return s, nil
		}
		off += int64(n)
		if n < recBlockSize {
			break
		}
	}
	if s.end < 0 {
		s.end = off
	}
	return s, nil
}

// Names of the files of a Pebble directory this package reads before
// Pebble opens it.
const (
	currentName    = "CURRENT"
	manifestPrefix = "MANIFEST-"
	walSuffix      = ".log"
	tableSuffix    = ".sst"
	// cleanCloseName is crawlkit's record of a clean Close (see
	// writeCleanClose). Pebble ignores files it does not know.
	cleanCloseName = "CRAWLKIT-CLEAN-CLOSE"
	cleanCloseHead = "crawlkit pebble clean close 1"
)

// dirFiles is what checkDir needs of a directory listing.
type dirFiles struct {
	current  bool
	manifest string   // named by CURRENT
	wals     []string // *.log, ascending (Pebble's names are zero-padded)
	tables   int      // *.sst
}

func listDir(dir string) (dirFiles, error) {
	var f dirFiles
	es, err := os.ReadDir(dir)
	if err != nil {
		return f, err
	}
	for _, e := range es {
		name := e.Name()
		switch {
		case name == currentName:
			f.current = true
		case strings.HasSuffix(name, walSuffix):
			f.wals = append(f.wals, name)
		case strings.HasSuffix(name, tableSuffix):
			f.tables++
		}
	}
	return f, nil
}

// checkDir looks for damage Pebble would not report, or would report by
// panicking, before Pebble opens dir. full adds the checks Salvage skips:
// those of the WAL and MANIFEST contents. It returns a *DamageError for
// damage, another error if dir cannot be read.
func checkDir(dir string, full bool) error {
	f, err := listDir(dir)
	if err != nil {
		return fmt.Errorf("pebble: reading %s: %w", dir, err)
	}
	damaged := func(file, problem string) error {
		return &DamageError{Dir: dir, File: file, Problem: problem}
	}
	if !f.current {
		// Pebble writes CURRENT before it creates the first WAL, so a
		// WAL or table without CURRENT is a directory that lost it; Pebble
		// would take it for a new one and panic replaying the old WALs.
		if len(f.wals) > 0 || f.tables > 0 {
			return damaged(currentName, "missing, but the directory holds Pebble data")
		}
		return nil
	}
	cur, err := os.ReadFile(filepath.Join(dir, currentName))
	if err != nil {
		return fmt.Errorf("pebble: reading %s: %w", dir, err)
	}
	f.manifest = strings.TrimSuffix(string(cur), "\n")
	if _, ok := fileNum(f.manifest, manifestPrefix, ""); !ok {
		return damaged(currentName, fmt.Sprintf("does not name a MANIFEST (holds %q)", cur))
	}
	if !full {
		return nil
	}
	if err := checkCleanClose(dir, f); err != nil {
		return err
	}
	if err := checkLog(dir, f.manifest, 0, false); err != nil {
		return err
	}
	for _, w := range f.wals {
		num, ok := fileNum(w, "", walSuffix)
		if !ok {
			continue
		}
		if err := checkLog(dir, w, uint32(num), true); err != nil {
			return err
		}
	}
	return nil
}

// fileNum parses the number in a Pebble file name prefix+digits+suffix.
func fileNum(name, prefix, suffix string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	if digits, ok = strings.CutSuffix(digits, suffix); !ok || digits == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}

// checkLog reports damage in the middle of the record log name.
func checkLog(dir, name string, logNum uint32, wal bool) error {
	fh, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) && !wal {
		return &DamageError{Dir: dir, File: name, Problem: "missing, but CURRENT names it"}
	}
	if err != nil {
		return fmt.Errorf("pebble: checking %s: %w", dir, err)
	}
	defer fh.Close()
	s, err := scanLog(bufio.NewReaderSize(fh, recBlockSize), logNum, wal)
	if err != nil {
		return fmt.Errorf("pebble: checking %s: %w", dir, err)
	}
	if s.after >= 0 {
		return &DamageError{Dir: dir, File: name, Problem: fmt.Sprintf(
			"invalid record at offset %d followed by valid records (at offset %d): damage in the middle, not a torn tail; Pebble would drop every record after it",
			s.end, s.after)}
	}
	return nil
}

// A clean-close record lists, for each file whose tail may be legitimately
// torn after a crash (the current MANIFEST and the WALs), its size and
// CRC32-C when the DB was closed. Without it a cut at a record boundary is
// indistinguishable from a crash's torn tail; with it, the directory of a
// clean Close must be found exactly as it was left. Open removes it before
// Pebble writes, so a crash after that is judged by the crash rules.
type fileSum struct {
	name string
	size int64
	crc  uint32
}

func sumFile(path string) (fileSum, error) {
	fh, err := os.Open(path)
	if err != nil {
		return fileSum{}, err
	}
	defer fh.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, fh)
	return fileSum{name: filepath.Base(path), size: n, crc: h.Sum32()}, err
}

// writeCleanClose records the clean close of the (closed) DB in dir.
func writeCleanClose(dir string) error {
	f, err := listDir(dir)
	if err != nil {
		return err
	}
	cur, err := os.ReadFile(filepath.Join(dir, currentName))
	if err != nil {
		return err
	}
	names := append([]string{strings.TrimSuffix(string(cur), "\n")}, f.wals...)
	var b strings.Builder
	b.WriteString(cleanCloseHead + "\n")
	for _, name := range names {
		s, err := sumFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %08x\n", s.name, s.size, s.crc)
	}
	return writeFileSynced(dir, cleanCloseName, []byte(b.String()))
}

// writeFileSynced replaces dir/name with data durably: a temporary file,
// synced, renamed over name, and the directory synced.
func writeFileSynced(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	fh, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readCleanClose returns the sums of the clean-close record in dir, nil if
// there is none.
func readCleanClose(dir string) ([]fileSum, error) {
	data, err := os.ReadFile(filepath.Join(dir, cleanCloseName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != cleanCloseHead || len(lines) < 2 {
		return nil, &DamageError{Dir: dir, File: cleanCloseName, Problem: "malformed"}
	}
	sums := make([]fileSum, 0, len(lines)-1)
	for _, l := range lines[1:] {
		var s fileSum
		if _, err := fmt.Sscanf(l, "%s %d %x", &s.name, &s.size, &s.crc); err != nil {
			return nil, &DamageError{Dir: dir, File: cleanCloseName, Problem: fmt.Sprintf("malformed line %q", l)}
		}
		sums = append(sums, s)
	}
	return sums, nil
}

// checkCleanClose compares dir with its clean-close record, if it has one
// that is current: one made when CURRENT named the same MANIFEST and no
// newer WAL existed. A stale record (another program opened the directory
// since, without knowing of it) proves nothing and is ignored.
func checkCleanClose(dir string, f dirFiles) error {
	sums, err := readCleanClose(dir)
	if err != nil || sums == nil {
		if err != nil && !errors.Is(err, ErrDamaged) {
			err = fmt.Errorf("pebble: checking %s: %w", dir, err)
		}
		return err
	}
	if sums[0].name != f.manifest {
		return nil
	}
	var newest uint64 // the newest WAL recorded, 0 if none
	for _, s := range sums[1:] {
		if n, ok := fileNum(s.name, "", walSuffix); ok && n > newest {
			newest = n
		}
	}
	for _, w := range f.wals {
		if n, ok := fileNum(w, "", walSuffix); ok && n > newest {
			return nil
		}
	}
	for _, want := range sums {
		got, err := sumFile(filepath.Join(dir, want.name))
		if errors.Is(err, os.ErrNotExist) {
			return &DamageError{Dir: dir, File: want.name, Problem: "missing since the last clean close"}
		}
		if err != nil {
			return fmt.Errorf("pebble: checking %s: %w", dir, err)
		}
		if got != want {
			return &DamageError{Dir: dir, File: want.name, Problem: fmt.Sprintf(
				"changed since the last clean close (%d bytes, CRC32-C %08x; was %d bytes, %08x)",
				got.size, got.crc, want.size, want.crc)}
		}
	}
	return nil
}
