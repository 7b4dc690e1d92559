package crawlkit

import (
	"sync"

	"github.com/crawlkit/crawlkit/structured"
)

// pageStructured holds a page's structured data once read.
type pageStructured struct {
	once sync.Once
	data *structured.Data
	err  error
}

// Structured returns the page's structured data (see package structured):
// its JSON-LD blocks, microdata items, and Open Graph and Twitter card
// properties, with relative URLs resolved against FinalURL. It is read on
// the first call, once, from the document Page.HTML parses, so that a
// Handler asking for both parses the page once; a Handler that modified
// that document before the first call sees its changes reflected. Several
// goroutines may call it. A page that is not HTML gives ErrNotHTML.
// Reading it costs about three times the CPU of the extraction every page
// gets when the document is parsed for it (the parse is most of it), under
// half of it when Page.HTML has parsed the page already (a 70 KB product
// page, structured.BenchmarkParseCPU).
func (p *Page) Structured() (*structured.Data, error) {
	if p.doc == nil {
		// A Page the caller built: read each time.
		return readStructured(p)
	}
	// doc.mu guards the pointer; the read itself runs outside it.
	p.doc.mu.Lock()
	if p.structured == nil {
		p.structured = &pageStructured{}
	}
	s := p.structured
	p.doc.mu.Unlock()
	s.once.Do(func() { s.data, s.err = readStructured(p) })
	return s.data, s.err
}

func readStructured(p *Page) (*structured.Data, error) {
	doc, err := p.HTML()
	if err != nil {
		return nil, err
	}
	return structured.FromNode(doc.Nodes[0], p.baseURL()), nil
}
