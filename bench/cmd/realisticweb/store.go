package main

import (
	"bytes"
	"runtime"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// encoded is one page's body, compressed in advance both ways a real server
// sends it, so that serving costs the server a copy and nothing more.
type encoded struct {
	gz, br []byte
}

// Compression settings of a dynamic-content server: gzip level 6 (nginx's
// common setting), brotli quality 4.
const (
	gzipLevel     = 6
	brotliQuality = 4
)

// buildAll renders and compresses every page of s on all cores.
func buildAll(s *site, c *corpus) []encoded {
	out := make([]encoded, len(s.pages))
	var wg sync.WaitGroup
	next := make(chan int, 256)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzipLevel)
			for id := range next {
				html := s.render(c, id)
				s.recordLinks(id, html)
				buf.Reset()
				zw.Reset(&buf)
				_, _ = zw.Write(html)
				_ = zw.Close()
				out[id].gz = bytes.Clone(buf.Bytes())
				buf.Reset()
				bw := brotli.NewWriterLevel(&buf, brotliQuality)
				_, _ = bw.Write(html)
				_ = bw.Close()
				out[id].br = bytes.Clone(buf.Bytes())
			}
		}()
	}
	for id := range s.pages {
		next <- id
	}
	close(next)
	wg.Wait()
	return out
}
