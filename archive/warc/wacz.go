package warc

import (
	"archive/zip"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WACZVersion is the version of the WACZ format PackWACZ writes.
const WACZVersion = "1.1.1"

// PackWACZ packages the finished WARC files in dir, with the CDXJ indexes
// a Writer wrote beside them (Config.Index), as a WACZ file at out
// (WACZ 1.1.1, https://specs.webrecorder.net/wacz/1.1.1/): a zip holding
// archive/*.warc.gz (stored, not compressed again, so replay can read
// records at their offsets), indexes/index.cdx (the files' CDXJ lines,
// merged and sorted), pages/pages.jsonl (one line per HTML page answered
// 200) and datapackage.json, which lists every file with its size and
// SHA-256, and datapackage-digest.json, the digest of datapackage.json.
// Replay tools such as ReplayWeb.page open it as it is.
//
// Unfinished files (named with OpenSuffix) are left out. A WARC file
// without an index is an error: write it with Config.Index. out is
// written through a temporary file, so it is either complete or absent.
func PackWACZ(dir, out string) (err error) {
	warcs, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		return fmt.Errorf("warc: packing %s: %w", dir, err)
	}
	if len(warcs) == 0 {
		return fmt.Errorf("warc: packing %s: no finished WARC files", dir)
	}
	slices.Sort(warcs)
	var lines []string
	for _, w := range warcs {
		data, err := os.ReadFile(indexPath(w))
		if err != nil {
			return fmt.Errorf("warc: packing %s: the index of %s (write it with Config.Index): %w", dir, filepath.Base(w), err)
		}
		for l := range strings.Lines(string(data)) {
			if l = strings.TrimSuffix(l, "\n"); l != "" {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)

	tmp := out + OpenSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("warc: packing %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	p := &packer{zw: zip.NewWriter(bw), created: time.Now().UTC()}
	for _, w := range warcs {
		if err := p.addFile("archive/"+filepath.Base(w), w); err != nil {
			return fmt.Errorf("warc: packing %s: %w", dir, err)
		}
	}
	if err := p.add("indexes/index.cdx", zip.Deflate, func(w io.Writer) error {
		for _, l := range lines {
			if _, err := io.WriteString(w, l+"\n"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("warc: packing %s: %w", dir, err)
	}
	if err := p.add("pages/pages.jsonl", zip.Deflate, func(w io.Writer) error { return writePages(w, lines) }); err != nil {
		return fmt.Errorf("warc: packing %s: %w", dir, err)
	}
	if err := p.finish(); err != nil {
		return fmt.Errorf("warc: packing %s: %w", dir, err)
	}
	if err := errors.Join(bw.Flush(), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("warc: packing %s: %w", dir, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("warc: packing %s: %w", dir, err)
	}
	return nil
}

// waczResource is one file of a WACZ as datapackage.json lists it.
type waczResource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

// packer writes the files of a WACZ and keeps their resources.
type packer struct {
	zw        *zip.Writer
	created   time.Time
	resources []waczResource
}

// add writes the file at path in the zip with method, its contents from
// fill, hashing and counting them on the way.
func (p *packer) add(path string, method uint16, fill func(io.Writer) error) error {
	w, err := p.zw.CreateHeader(&zip.FileHeader{Name: path, Method: method, Modified: p.created})
	if err != nil {
		return err
	}
	h := sha256.New()
	c := &countingWriter{w: io.MultiWriter(w, h)}
	if err := fill(c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p.resources = append(p.resources, waczResource{Name: filepath.Base(path), Path: path, Hash: sha256Label(h), Bytes: c.n})
	return nil
}

// addFile stores the file src at path: a WARC file's records are gzip
// members already.
func (p *packer) addFile(path, src string) error {
	return p.add(path, zip.Store, func(w io.Writer) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
}

// finish writes datapackage.json and datapackage-digest.json and closes
// the zip.
func (p *packer) finish() error {
	pkg, err := json.MarshalIndent(struct {
		Profile     string         `json:"profile"`
		WACZVersion string         `json:"wacz_version"`
		Created     string         `json:"created"`
		Software    string         `json:"software"`
		Resources   []waczResource `json:"resources"`
	}{"data-package", WACZVersion, p.created.Format(time.RFC3339), "crawlkit", p.resources}, "", "  ")
	if err != nil {
		return err
	}
	var pkgHash string
	if err := p.add("datapackage.json", zip.Deflate, func(w io.Writer) error {
		_, err := w.Write(pkg)
		return err
	}); err != nil {
		return err
	}
	pkgHash = p.resources[len(p.resources)-1].Hash
	p.resources = p.resources[:len(p.resources)-1]
	digest, err := json.MarshalIndent(struct {
		Path string `json:"path"`
		Hash string `json:"hash"`
	}{"datapackage.json", pkgHash}, "", "  ")
	if err != nil {
		return err
	}
	if err := p.add("datapackage-digest.json", zip.Deflate, func(w io.Writer) error {
		_, err := w.Write(digest)
		return err
	}); err != nil {
		return err
	}
	return p.zw.Close()
}

// writePages writes pages.jsonl (WACZ 1.1.1 section "pages"): its header
// line, then each URL answered 200 with an HTML page, at its first
// capture, from the index lines.
func writePages(w io.Writer, lines []string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]string{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, l := range lines {
		_, rest, _ := strings.Cut(l, " ")
		ts, fields, _ := strings.Cut(rest, " ")
		var f cdxjFields
		if json.Unmarshal([]byte(fields), &f) != nil || f.Status != "200" || seen[f.URL] {
			continue
		}
		if f.Mime != "text/html" && f.Mime != "application/xhtml+xml" {
			continue
		}
		t, err := time.Parse("20060102150405", ts)
		if err != nil {
			continue
		}
		seen[f.URL] = true
		if err := enc.Encode(struct {
			URL string `json:"url"`
			TS  string `json:"ts"`
		}{f.URL, t.Format(time.RFC3339)}); err != nil {
			return err
		}
	}
	return nil
}

func sha256Label(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
