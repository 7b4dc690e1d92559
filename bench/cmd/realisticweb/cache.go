package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// buildVersion changes whenever the pages built from the same flags and
// corpus would change, so that an old cache is not used.
const buildVersion = 3

// cachedPage is what a cache file holds of one page.
type cachedPage struct {
	Size, NLinks int
	Links        []int32
	GZ, BR       []byte
}

// cacheKey names the web built from these settings and corpus files.
func cacheKey(seed uint64, hosts, minPages, maxPages int, corpusDir string) (string, error) {
	names, err := filepath.Glob(filepath.Join(corpusDir, "*.html.gz"))
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "v%d %d %d %d %d %d %d\n", buildVersion, seed, hosts, minPages, maxPages, gzipLevel, brotliQuality)
	for _, n := range names {
		st, err := os.Stat(n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", filepath.Base(n), st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// loadOrBuild returns the bodies of s's pages (recording their sizes and
// links on s), from dir's cache file for key if there is one, else built
// from the corpus and written there. An empty dir builds without a cache.
func loadOrBuild(s *site, corpusDir, dir, key string) ([]encoded, bool, error) {
	path := filepath.Join(dir, "realisticweb-"+key+".gob")
	if dir != "" {
		if bodies, err := loadCache(s, path); err == nil {
			return bodies, true, nil
		}
	}
	c, err := loadCorpus(corpusDir)
	if err != nil {
		return nil, false, err
	}
	bodies := buildAll(s, c)
	if dir != "" {
		if err := writeCache(s, bodies, dir, path); err != nil {
			fmt.Fprintln(os.Stderr, "realisticweb: cache not written:", err)
		}
	}
	return bodies, false, nil
}

func loadCache(s *site, path string) ([]encoded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pages []cachedPage
	if err := gob.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&pages); err != nil {
		return nil, err
	}
	if len(pages) != len(s.pages) {
		return nil, fmt.Errorf("%s: %d pages, want %d", path, len(pages), len(s.pages))
	}
	bodies := make([]encoded, len(pages))
	for i, p := range pages {
		s.pages[i].size, s.pages[i].nLinks, s.pages[i].links = p.Size, p.NLinks, p.Links
		bodies[i] = encoded{gz: p.GZ, br: p.BR}
	}
	return bodies, nil
}

func writeCache(s *site, bodies []encoded, dir, path string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	pages := make([]cachedPage, len(bodies))
	for i, b := range bodies {
		p := s.pages[i]
		pages[i] = cachedPage{Size: p.size, NLinks: p.nLinks, Links: p.links, GZ: b.gz, BR: b.br}
	}
	tmp, err := os.CreateTemp(dir, "realisticweb-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := gob.NewEncoder(w).Encode(pages); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
