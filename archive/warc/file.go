package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"sync"

	"github.com/klauspost/compress/gzip"
)

// OpenSuffix ends the name of a file while a Writer is writing to it. The
// Writer renames the file without it when it finishes the file, on rotation
// or Close. A file still named so after its Writer is gone is unfinished:
// its process stopped without closing the Writer, or finishing the file
// failed (and the error was returned).
const OpenSuffix = ".open"

// osFile is the part of *os.File the file writer uses; tests substitute
// files that fail.
type osFile interface {
	WriteAt(p []byte, off int64) (int, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

func createFile(path string) (osFile, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// span locates one record, a gzip member, in a file.
type span struct {
	offset, length int64
}

// fileWriter writes exchanges to rotating WARC files, each record a gzip
// member of its own. It is not safe for concurrent use; Writer serializes
// it.
//
// File names are unique among writers following the same protocol, in any
// process: a writer creates name+OpenSuffix exclusively and then checks
// that name does not exist; if it does, it removes its file and tries the
// next serial. While a writer holds name+OpenSuffix no other writer can
// create it, and name only comes into being when its holder renames
// name+OpenSuffix onto it, so the check cannot be invalidated before the
// writer's own rename.
type fileWriter struct {
	dir     string
	prefix  string
	now     func() time.Time
	maxSize int64
	// warcinfo builds the warcinfo record that starts the file named name.
	warcinfo func(name string) *record
	// create creates a file exclusively; a hook for tests.
	create func(path string) (osFile, error)

	serial    int
	f         osFile // nil when no file is open
	path      string // final path of f; f is named path+OpenSuffix
	size      int64  // bytes in f, the offset of the next record
	infoID    string // WARC-Record-ID of f's warcinfo record
	exchanges int    // exchanges in f

	level int      // gzip level
	enc   *encoder // encodes records again when an exchange's encoding is stale

	// index, if set, keeps a CDXJ line per response or revisit record of
	// f, written beside it, sorted, when it is finished.
	index bool
	lines []string
}

func newFileWriter(dir, prefix string, now func() time.Time, maxSize int64, level int,
	warcinfo func(string) *record) *fileWriter {
	return &fileWriter{
		dir: dir, prefix: prefix, now: now, maxSize: maxSize, warcinfo: warcinfo,
		create: createFile,
		level:  level,
		enc:    new(encoder),
	}
}

// encoder compresses records, each as a gzip member of its own, into buf.
type encoder struct {
	gz      *gzip.Writer
	level   int
	store   *gzip.Writer // for records whose payload is compressed already
	buf     bytes.Buffer // the members
	scratch bytes.Buffer // a record's header while it is built
	spans   []span       // where each member is in buf
	infoID  string       // the WARC-Warcinfo-ID the records were encoded with
}

// encoders keeps encoders for reuse: a gzip writer's state is costly to
// make.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

// putEncoder returns e to encoders, dropping the memory of one large
// exchange.
func putEncoder(e *encoder) {
	if e.buf.Cap() > 4<<20 {
		e.buf = bytes.Buffer{}
	}
	encoders.Put(e)
}

// encode compresses recs into e.buf at the gzip level, with infoID as
// their WARC-Warcinfo-ID, and records where each went in e.spans.
func (e *encoder) encode(recs []*record, infoID string, level int) error {
	if e.gz == nil || e.level != level {
		gz, err := gzip.NewWriterLevel(nil, level)
		if err != nil {
			return err
		}
		e.gz, e.level = gz, level
	}
	e.buf.Reset()
	e.spans = e.spans[:0]
	e.infoID = infoID
	size := 0
	for _, r := range recs {
		size += r.size()
	}
	e.buf.Grow(size/2 + 1024)
	for _, rec := range recs {
		start := e.buf.Len()
		gz := e.gz
		if rec.stored {
			if e.store == nil {
				e.store, _ = gzip.NewWriterLevel(nil, gzip.NoCompression)
			}
			gz = e.store
		}
		gz.Reset(&e.buf)
		if err := rec.encode(gz, infoID, &e.scratch); err != nil {
			return fmt.Errorf("encoding %s record: %w", rec.typ, err)
		}
		if err := gz.Close(); err != nil {
			return fmt.Errorf("encoding %s record: %w", rec.typ, err)
		}
		e.spans = append(e.spans, span{offset: int64(start), length: int64(e.buf.Len() - start)})
	}
	return nil
}

// writeExchange writes recs to one file, in order, and returns the file's
// final path and where each record went. enc holds recs encoded already,
// for the file whose warcinfo record is enc.infoID; if that is not the
// current file's, they are encoded again. If recs would take a file that
// already holds an exchange past maxSize, that file is finished and recs go
// to the next one. If writing fails, the file is truncated to its size
// before the exchange, so it stays a valid WARC file; if even that fails,
// the file is closed and left unfinished (named with OpenSuffix) and the
// next exchange starts a new file. entry, if not nil, is the exchange's
// index entry, which locates the first record.
func (fw *fileWriter) writeExchange(recs []*record, enc *encoder, entry *cdxEntry) (string, []span, error) {
	if fw.f == nil {
		if err := fw.open(); err != nil {
			return "", nil, err
		}
	}
	if enc == nil || enc.infoID != fw.infoID {
		enc = fw.enc
		if err := enc.encode(recs, fw.infoID, fw.level); err != nil {
			return "", nil, err
		}
	}
	if fw.exchanges > 0 && fw.size+int64(enc.buf.Len()) > fw.maxSize {
		if err := fw.finish(); err != nil {
			return "", nil, err
		}
		if err := fw.open(); err != nil {
			return "", nil, err
		}
		// Encode again: the records refer to the new file's warcinfo.
		enc = fw.enc
		if err := enc.encode(recs, fw.infoID, fw.level); err != nil {
			return "", nil, err
		}
	}
	start := fw.size
	if err := fw.append(&enc.buf); err != nil {
		return "", nil, err
	}
	fw.exchanges++
	spans := make([]span, len(enc.spans))
	for i, sp := range enc.spans {
		spans[i] = span{offset: sp.offset + start, length: sp.length}
	}
	if fw.index && entry != nil {
		fw.lines = append(fw.lines, entry.line(spans[0], filepath.Base(fw.path)))
	}
	return fw.path, spans, nil
}

// append writes buf at the end of the file. On failure it truncates the
// file to its previous size, or if that fails too closes it and leaves it
// unfinished.
func (fw *fileWriter) append(buf *bytes.Buffer) error {
	n := int64(buf.Len())
	_, err := fw.f.WriteAt(buf.Bytes(), fw.size)
	if fw.enc.buf.Cap() > 4<<20 {
		fw.enc.buf = bytes.Buffer{} // do not keep the memory of one large exchange
	}
	if err == nil {
		fw.size += n
		return nil
	}
	err = fmt.Errorf("writing %s: %w", fw.path+OpenSuffix, err)
	if terr := fw.f.Truncate(fw.size); terr != nil {
		cerr := fw.f.Close()
		fw.f = nil
		return errors.Join(err, fmt.Errorf("truncating it after the failed write, left unfinished: %w", terr), cerr)
	}
	return err
}

// open starts a new file under the first free name and writes its warcinfo
// record.
func (fw *fileWriter) open() error {
	for {
		fw.serial++
		name := fmt.Sprintf("%s-%s-%05d.warc.gz", fw.prefix, fw.now().UTC().Format("20060102150405"), fw.serial)
		path := filepath.Join(fw.dir, name)
		f, err := fw.create(path + OpenSuffix)
		if errors.Is(err, fs.ErrExist) {
			continue // another writer's file, or one left unfinished
		}
		if err != nil {
			return fmt.Errorf("creating file: %w", err)
		}
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			// A finished file has the name, or it cannot be checked.
			cerr := f.Close()
			rerr := os.Remove(path + OpenSuffix)
			if err == nil && cerr == nil && rerr == nil {
				continue
			}
			if err == nil {
				err = fmt.Errorf("%s exists", path)
			}
			return errors.Join(fmt.Errorf("creating file: %w", err), cerr, rerr)
		}
		fw.f, fw.path, fw.size, fw.infoID, fw.exchanges, fw.lines = f, path, 0, "", 0, nil
		if err := fw.writeWarcinfo(name); err != nil {
			if fw.f != nil { // not closed already by append
				err = errors.Join(err, f.Close())
				fw.f = nil
			}
			return errors.Join(err, os.Remove(path+OpenSuffix))
		}
		return nil
	}
}

func (fw *fileWriter) writeWarcinfo(name string) error {
	info := fw.warcinfo(name)
	if err := fw.enc.encode([]*record{info}, "", fw.level); err != nil {
		return fmt.Errorf("warcinfo record for %s: %w", name, err)
	}
	if err := fw.append(&fw.enc.buf); err != nil {
		return err
	}
	fw.infoID = info.id
	return nil
}

// finish syncs and closes the current file and renames it to its final
// name. If syncing or closing fails, the file keeps OpenSuffix: its
// contents may not all be on disk.
//
// Renaming replaces a file of the final name if there is one, but the
// naming protocol (see fileWriter) guarantees there is none written by a
// writer following it. Hard-linking and removing instead would refuse to
// replace even a file made otherwise, but not every file system supports
// hard links, and a crash between the two steps would leave both names.
func (fw *fileWriter) finish() error {
	if fw.f == nil {
		return nil
	}
	f, path := fw.f, fw.path
	fw.f = nil
	open := path + OpenSuffix
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("finishing %s, left unfinished: %w", open, err)
	}
	if fw.index {
		// The index is in place before the file it indexes is.
		lines := fw.lines
		fw.lines = nil
		if err := writeIndex(indexPath(path), lines); err != nil {
			return fmt.Errorf("finishing %s, left unfinished: %w", open, err)
		}
	}
	if err := os.Rename(open, path); err != nil {
		return fmt.Errorf("finishing %s: %w", open, err)
	}
	if err := syncDir(fw.dir); err != nil {
		return fmt.Errorf("finishing %s: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory,
// and does not need to.
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
