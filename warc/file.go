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

	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc"
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
	warcinfo func(name string) (gowarc.WarcRecord, error)
	// create creates a file exclusively; a hook for tests.
	create func(path string) (osFile, error)

	serial    int
	f         osFile // nil when no file is open
	path      string // final path of f; f is named path+OpenSuffix
	size      int64  // bytes in f, the offset of the next record
	infoID    string // WARC-Record-ID of f's warcinfo record
	exchanges int    // exchanges in f

	marshaler gowarc.Marshaler
	gz        *gzip.Writer
	buf       bytes.Buffer // the encoded records of one exchange
}

func newFileWriter(dir, prefix string, now func() time.Time, maxSize int64,
	warcinfo func(string) (gowarc.WarcRecord, error)) *fileWriter {
	return &fileWriter{
		dir: dir, prefix: prefix, now: now, maxSize: maxSize, warcinfo: warcinfo,
		create:    createFile,
		marshaler: gowarc.NewMarshaler(),
		gz:        gzip.NewWriter(nil),
	}
}

// writeExchange writes recs to one file, in order, and returns the file's
// final path and where each record went. If recs would take a file that
// already holds an exchange past maxSize, that file is finished and recs go
// to the next one. If writing fails, the file is truncated to its size
// before the exchange, so it stays a valid WARC file; if even that fails,
// the file is closed and left unfinished (named with OpenSuffix) and the
// next exchange starts a new file.
func (fw *fileWriter) writeExchange(recs ...gowarc.WarcRecord) (string, []span, error) {
	if fw.f == nil {
		if err := fw.open(); err != nil {
			return "", nil, err
		}
	}
	spans, err := fw.encode(recs)
	if err != nil {
		return "", nil, err
	}
	if fw.exchanges > 0 && fw.size+int64(fw.buf.Len()) > fw.maxSize {
		if err := fw.finish(); err != nil {
			return "", nil, err
		}
		if err := fw.open(); err != nil {
			return "", nil, err
		}
		// Encode again: the records refer to the new file's warcinfo.
		if spans, err = fw.encode(recs); err != nil {
			return "", nil, err
		}
	}
	start := fw.size
	if err := fw.append(); err != nil {
		return "", nil, err
	}
	fw.exchanges++
	for i := range spans {
		spans[i].offset += start
	}
	return fw.path, spans, nil
}

// encode compresses recs into fw.buf, each as its own gzip member, and
// returns their offsets in fw.buf and lengths.
func (fw *fileWriter) encode(recs []gowarc.WarcRecord) ([]span, error) {
	fw.buf.Reset()
	spans := make([]span, len(recs))
	for i, rec := range recs {
		if fw.infoID != "" {
			rec.WarcHeader().SetId(gowarc.WarcWarcinfoID, fw.infoID)
		}
		start := fw.buf.Len()
		fw.gz.Reset(&fw.buf)
		if _, _, err := fw.marshaler.Marshal(fw.gz, rec, 0); err != nil {
			return nil, fmt.Errorf("encoding %s record: %w", rec.Type(), err)
		}
		if err := fw.gz.Close(); err != nil {
			return nil, fmt.Errorf("encoding %s record: %w", rec.Type(), err)
		}
		spans[i] = span{offset: int64(start), length: int64(fw.buf.Len() - start)}
	}
	return spans, nil
}

// append writes fw.buf at the end of the file. On failure it truncates the
// file to its previous size, or if that fails too closes it and leaves it
// unfinished.
func (fw *fileWriter) append() error {
	n := int64(fw.buf.Len())
	_, err := fw.f.WriteAt(fw.buf.Bytes(), fw.size)
	if fw.buf.Cap() > 4<<20 {
		fw.buf = bytes.Buffer{} // do not keep the memory of one large exchange
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
		fw.f, fw.path, fw.size, fw.infoID, fw.exchanges = f, path, 0, "", 0
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
	info, err := fw.warcinfo(name)
	if err != nil {
		return fmt.Errorf("warcinfo record for %s: %w", name, err)
	}
	defer info.Close()
	if _, err := fw.encode([]gowarc.WarcRecord{info}); err != nil {
		return err
	}
	if err := fw.append(); err != nil {
		return err
	}
	fw.infoID = info.WarcHeader().GetId(gowarc.WarcRecordID)
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
