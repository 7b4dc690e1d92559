package customstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/crawlkit/crawlkit/frontier"
)

// ErrClosed is returned by a FileStore's methods after Close.
var ErrClosed = errors.New("customstore: store is closed")

// ErrCorrupt is wrapped by errors about a log record that has a valid
// checksum but cannot be decoded (a log written by something else).
var ErrCorrupt = errors.New("customstore: corrupt log record")

// ErrBroken is wrapped by the errors of every Write after an append failed
// and its partial record could not be cut off the log. Appending after those
// bytes would put acknowledged batches past the torn record, where Open stops
// replaying, so the store refuses to; reopening it cuts the torn record off.
var ErrBroken = errors.New("customstore: log has a torn record that could not be removed; reopen the store")

// maxRecord bounds one log record, so that a damaged length field cannot
// make Open allocate without bound.
const maxRecord = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// logFile is the part of *os.File that FileStore uses after Open. Tests
// replace it with a wrapper that fails on demand.
type logFile interface {
	WriteAt(p []byte, off int64) (int, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// FileStore is a frontier.Store in one append-only log file (see the
// package documentation for the format). It is safe for concurrent use.
type FileStore struct {
	mu     sync.RWMutex
	f      logFile
	size   int64    // end of the last complete record: where the next one goes
	broken error    // set when a torn record could not be removed
	keys   []string // sorted
	vals   map[string][]byte
	closed bool
}

var _ frontier.Store = (*FileStore)(nil)

// OpenFileStore opens the log at path, creating it if needed, and replays
// it. A torn record at the end (a crash during a Write that was therefore
// never acknowledged) is cut off.
func OpenFileStore(path string) (*FileStore, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("customstore: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("customstore: reading %s: %w", path, err)
	}
	s := &FileStore{f: f, vals: map[string][]byte{}}
	good, err := s.replay(data)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("customstore: %s: %w", path, err)
	}
	if good < len(data) {
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, fmt.Errorf("customstore: cutting the torn tail of %s: %w", path, err)
		}
	}
	// O_CREATE may just have created the file: sync its directory so that
	// the file's name survives a machine crash along with its contents.
	// (Syncing on every open also covers a crash right after a creation.)
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, fmt.Errorf("customstore: syncing the directory of %s: %w", path, err)
	}
	s.size = int64(good)
	return s, nil
}

// syncDir makes the creation of a file in dir durable. Windows cannot sync
// a directory, and does not need to.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// replay applies the complete records of data and returns the length of
// the prefix they make up.
func (s *FileStore) replay(data []byte) (int, error) {
	off := 0
	for len(data)-off >= 8 {
		n := int(binary.BigEndian.Uint32(data[off:]))
		sum := binary.BigEndian.Uint32(data[off+4:])
		if n > maxRecord || n > len(data)-off-8 {
			break // torn: the append did not finish
		}
		payload := data[off+8 : off+8+n]
		if crc32.Checksum(payload, castagnoli) != sum {
			break // torn: the record's bytes did not all reach the disk
		}
		muts, err := decodeBatch(payload)
		if err != nil {
			return off, err
		}
		s.apply(muts)
		off += 8 + n
	}
	return off, nil
}

// encodeBatch returns the payload of a record holding muts.
func encodeBatch(muts []frontier.Mutation) []byte {
	b := binary.AppendUvarint(nil, uint64(len(muts)))
	for _, m := range muts {
		if m.Delete {
			b = append(b, 0)
		} else {
			b = append(b, 1)
		}
		b = binary.AppendUvarint(b, uint64(len(m.Key)))
		b = append(b, m.Key...)
		if !m.Delete {
			b = binary.AppendUvarint(b, uint64(len(m.Value)))
			b = append(b, m.Value...)
		}
	}
	return b
}

// decodeBatch parses a payload; the mutations' slices are copies.
func decodeBatch(b []byte) ([]frontier.Mutation, error) {
	count, k := binary.Uvarint(b)
	// Every mutation takes at least two bytes, which bounds count.
	if k <= 0 || count > uint64(len(b)) {
		return nil, fmt.Errorf("%w: bad count", ErrCorrupt)
	}
	b = b[k:]
	bytesField := func() ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: bad length", ErrCorrupt)
		}
		v := bytes.Clone(b[k : k+int(n)])
		b = b[k+int(n):]
		return v, nil
	}
	muts := make([]frontier.Mutation, 0, count)
	for i := uint64(0); i < count; i++ {
		if len(b) == 0 || b[0] > 1 {
			return nil, fmt.Errorf("%w: bad op", ErrCorrupt)
		}
		put := b[0] == 1
		b = b[1:]
		key, err := bytesField()
		if err != nil {
			return nil, err
		}
		m := frontier.Mutation{Key: key, Delete: !put}
		if put {
			if m.Value, err = bytesField(); err != nil {
				return nil, err
			}
		}
		muts = append(muts, m)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", ErrCorrupt)
	}
	return muts, nil
}

// apply changes memory; s.mu is held for writing (or s is not shared yet).
func (s *FileStore) apply(muts []frontier.Mutation) {
	for _, m := range muts {
		k := string(m.Key)
		i := sort.SearchStrings(s.keys, k)
		found := i < len(s.keys) && s.keys[i] == k
		switch {
		case m.Delete && found:
			s.keys = slices.Delete(s.keys, i, i+1)
			delete(s.vals, k)
		case !m.Delete:
			if !found {
				s.keys = slices.Insert(s.keys, i, k)
			}
			s.vals[k] = bytes.Clone(m.Value)
		}
	}
}

// Write appends muts to the log as one record, syncs it, and then applies
// it to memory, so the batch is durable before anyone can read it.
func (s *FileStore) Write(ctx context.Context, muts []frontier.Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	payload := encodeBatch(muts)
	if len(payload) > maxRecord {
		return fmt.Errorf("customstore: batch of %d bytes exceeds %d", len(payload), maxRecord)
	}
	rec := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint32(rec, uint32(len(payload)))
	binary.BigEndian.PutUint32(rec[4:], crc32.Checksum(payload, castagnoli))
	rec = append(rec, payload...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.broken != nil {
		return s.broken
	}
	if _, err := s.f.WriteAt(rec, s.size); err != nil {
		return s.cutTail(fmt.Errorf("customstore: appending: %w", err))
	}
	if err := s.f.Sync(); err != nil {
		return s.cutTail(fmt.Errorf("customstore: syncing: %w", err))
	}
	s.size += int64(len(rec))
	// The record holds copies of the slices (Write must not retain muts);
	// apply clones the values it keeps.
	s.apply(muts)
	return nil
}

// cutTail handles a failed append, whose error is err: part of the record
// may be in the file. It truncates the file back to the end of the last
// complete record, so that the next record follows it directly. (The next
// Write's Sync makes the truncation durable; a crash before it leaves the
// torn bytes at the end of the log, where Open cuts them off.) If the
// truncation fails, the store is marked broken: a record appended after the
// torn bytes would be lost, with every later one, when Open replays the log.
// s.mu is held for writing.
func (s *FileStore) cutTail(err error) error {
	if terr := s.f.Truncate(s.size); terr != nil {
		s.broken = fmt.Errorf("%w: %w (cutting it off: %w)", ErrBroken, err, terr)
		return s.broken
	}
	return err
}

// Scan returns up to limit pairs with start <= key < end (end nil: no upper
// bound) in key order, as copies.
func (s *FileStore) Scan(ctx context.Context, start, end []byte, limit int) ([]frontier.KV, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	var out []frontier.KV
	for i := sort.SearchStrings(s.keys, string(start)); i < len(s.keys) && len(out) < limit; i++ {
		k := s.keys[i]
		if end != nil && k >= string(end) {
			break
		}
		out = append(out, frontier.KV{Key: []byte(k), Value: bytes.Clone(s.vals[k])})
	}
	return out, nil
}

// Close closes the log file. Close is idempotent.
func (s *FileStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.f.Close()
}
