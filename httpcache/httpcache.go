// Package httpcache is an on-disk HTTP response cache for developing a
// crawler: run it again and again while writing its Handler, and pages the
// server says are still fresh are served from disk without a request, the
// others are revalidated with a conditional request whose 304 answer
// serves the stored body.
//
// It is a private cache in the sense of RFC 9111, kept simple: responses
// are keyed by URL alone (the crawler sends the same headers every time, so
// Vary is ignored, and a response with "Vary: *" is not stored);
// freshness comes from Cache-Control max-age, Expires or, for a response
// with Last-Modified, the heuristic of 10% of its age (RFC 9111 §4.2);
// no-store keeps a response out and no-cache makes it revalidated every
// time. The cache is bounded in bytes and forgets the entries used least
// recently first (by file modification time, which a hit updates).
//
// One process at a time may use a cache directory.
package httpcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxBytes bounds a cache whose Config.MaxBytes is zero.
const DefaultMaxBytes = 1 << 30

// ErrConfig is wrapped by Open's errors for unusable Config.
var ErrConfig = errors.New("httpcache: invalid config")

// Config configures a Cache.
type Config struct {
	// MaxBytes bounds the entries' total size on disk (default 1 GiB).
	// Past it the entries used least recently are removed until the
	// cache is at 90% of it.
	MaxBytes int64
	// MinFresh, if set, serves every stored response without a request
	// for at least this long after it was stored, whatever its headers
	// say: a developer's override of RFC 9111 for sites that send no
	// validators or freshness, so that a Handler can be rerun without
	// touching the server. Zero follows the headers.
	MinFresh time.Duration
	// Now is the cache's clock (nil: time.Now).
	Now func() time.Time
}

// Cache is an on-disk response cache. It is safe for concurrent use.
type Cache struct {
	dir      string
	max      int64
	minFresh time.Duration
	now      func() time.Time

	mu   sync.Mutex
	size int64 // bytes of the entries on disk
}

// entrySuffix names the cache's entry files.
const entrySuffix = ".entry"

// Open opens the cache in dir, creating the directory if needed.
func Open(dir string, opts Config) (*Cache, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: no directory", ErrConfig)
	}
	if opts.MaxBytes < 0 || opts.MinFresh < 0 {
		return nil, fmt.Errorf("%w: MaxBytes and MinFresh must not be negative", ErrConfig)
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("httpcache: %w", err)
	}
	c := &Cache{dir: dir, max: opts.MaxBytes, minFresh: opts.MinFresh, now: opts.Now}
	files, err := c.files()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		c.size += f.size
	}
	return c, nil
}

// path returns the file of url's entry: its SHA-256, under a directory
// named by the first byte, so that no directory grows too large.
func (c *Cache) path(url string) string {
	sum := sha256.Sum256([]byte(url))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(c.dir, h[:2], h+entrySuffix)
}

// Get returns the entry stored for url, and marks it used.
func (c *Cache) Get(url string) (*Entry, bool) {
	p := c.path(url)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	e, err := Decode(b)
	if err != nil || e.URL != url {
		return nil, false
	}
	now := c.now()
	os.Chtimes(p, now, now)
	return e, true
}

// Fresh reports whether e may be served without asking the server: its
// freshness lifetime is longer than its age (RFC 9111 §4.2), or it was
// stored less than Config.MinFresh ago.
func (c *Cache) Fresh(e *Entry) bool {
	now := c.now()
	if c.minFresh > 0 && now.Sub(e.Stored) < c.minFresh {
		return true
	}
	return e.Fresh(now)
}

// Put stores e under e.URL, unless RFC 9111 keeps it out (Storable) or it
// could never be reused (neither fresh for a while nor revalidatable, and
// no MinFresh). It reports whether e was stored.
func (c *Cache) Put(e *Entry) (bool, error) {
	if !Storable(e.StatusCode, e.Header) || (c.minFresh == 0 && e.Lifetime() <= 0 && e.Validators() == (Validators{})) {
		return false, nil
	}
	b := e.Encode()
	if int64(len(b)) > c.max {
		return false, nil
	}
	p := c.path(e.URL)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, fmt.Errorf("httpcache: %w", err)
	}
	var old int64
	if fi, err := os.Stat(p); err == nil {
		old = fi.Size()
	}
	f, err := os.CreateTemp(filepath.Dir(p), "put-*.tmp")
	if err != nil {
		return false, fmt.Errorf("httpcache: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return false, fmt.Errorf("httpcache: %w", err)
	}
	now := c.now()
	os.Chtimes(p, now, now)
	c.mu.Lock()
	c.size += int64(len(b)) - old
	over := c.size > c.max
	c.mu.Unlock()
	if over {
		return true, c.evict()
	}
	return true, nil
}

// Delete removes url's entry.
func (c *Cache) Delete(url string) error {
	p := c.path(url)
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("httpcache: %w", err)
	}
	c.mu.Lock()
	c.size -= fi.Size()
	c.mu.Unlock()
	return nil
}

// Size returns the entries' total size on disk in bytes.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// entryFile is one entry file on disk.
type entryFile struct {
	path  string
	size  int64
	mtime time.Time
}

// files lists the entry files.
func (c *Cache) files() ([]entryFile, error) {
	var files []entryFile
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, entrySuffix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		files = append(files, entryFile{path: p, size: fi.Size(), mtime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("httpcache: %w", err)
	}
	return files, nil
}

// evict removes the entries used least recently until the cache is at 90%
// of its bound.
func (c *Cache) evict() error {
	files, err := c.files()
	if err != nil {
		return err
	}
	slices.SortFunc(files, func(a, b entryFile) int {
		if n := a.mtime.Compare(b.mtime); n != 0 {
			return n
		}
		return strings.Compare(a.path, b.path)
	})
	var total int64
	for _, f := range files {
		total += f.size
	}
	target := c.max / 10 * 9
	for _, f := range files {
		if total <= target {
			break
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
	c.mu.Lock()
	c.size = total
	c.mu.Unlock()
	return nil
}

// Storable reports whether RFC 9111 §3 lets a private cache store a
// response to a GET with this status and header: not no-store, not
// "Vary: *" (which no later request matches, §4.1), and either with an
// explicit freshness (max-age, Expires, public) or a status cacheable by
// default (§4.2.2).
func Storable(status int, h http.Header) bool {
	cc := parseCacheControl(h)
	if cc.has("no-store") {
		return false
	}
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.TrimSpace(f) == "*" {
				return false
			}
		}
	}
	if _, ok := cc["max-age"]; ok || cc.has("public") || h.Get("Expires") != "" {
		return status >= 200 && status != http.StatusPartialContent && status != http.StatusNotModified
	}
	return heuristicallyCacheable(status)
}

// heuristicallyCacheable lists the statuses RFC 9110 §15.1 makes
// cacheable by default (206 left out: a crawler asks for no ranges).
func heuristicallyCacheable(status int) bool {
	switch status {
	case 200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501:
		return true
	}
	return false
}
