package crawlkit

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// A Handler steers the crawl past the page's own links: Page.Enqueue adds
// a URL it found some other way (a JSON API's next page, a URL built from a
// form's values), with data of the caller's that comes back on that URL's
// Page (Page.Data). The URLs are admitted when the Handler returns, like
// the page's links: normalized and judged by depth, scope, filters, trap
// rules and the seen set, each refusal counted with its Reason.

// MaxPageData bounds the data Enqueue attaches to a URL (it is kept with
// the URL in the queue, which bounds an entry's metadata to 64 KiB).
const MaxPageData = 60 << 10

// ErrEnqueue is wrapped by Page.Enqueue's errors.
var ErrEnqueue = errors.New("crawlkit: enqueue")

// enqueued is a URL a Handler added.
type enqueued struct {
	url      string
	data     []byte
	priority float64
}

// Enqueue adds rawURL, resolved against the page's final URL, to the
// crawl at the depth of the page's links, with data that its Page will
// carry as Data. It is safe to call from several goroutines of one
// Handler; the URL is admitted when the Handler returns, and not at all
// if the Handler returns an error (the page is fetched again, and its
// Handler asked again).
func (p *Page) Enqueue(rawURL string, data []byte) error {
	return p.EnqueuePriority(rawURL, 0, data)
}

// EnqueuePriority is Enqueue with a priority, read as Link.Priority is: a
// positive one queues the URL in the most urgent band (or, with
// Config.Prioritizer, as frontier.Entry.Priority).
func (p *Page) EnqueuePriority(rawURL string, priority float64, data []byte) error {
	if p.doc == nil {
		return fmt.Errorf("%w: the Page was not fetched by a Crawler", ErrEnqueue)
	}
	if len(data) > MaxPageData {
		return fmt.Errorf("%w: %d bytes of data for %s, at most %d", ErrEnqueue, len(data), rawURL, MaxPageData)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrEnqueue, err)
	}
	if p.finalURL != nil {
		u = p.finalURL.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%w: %s is not an absolute http or https URL", ErrEnqueue, u)
	}
	p.doc.mu.Lock()
	defer p.doc.mu.Unlock()
	p.doc.added = append(p.doc.added, enqueued{url: u.String(), data: append([]byte(nil), data...), priority: priority})
	return nil
}

// followEnqueued admits the URLs p's Handler added.
func (cr *Crawler) followEnqueued(l *frontier.Lease, p *Page) error {
	p.doc.mu.Lock()
	added := p.doc.added
	p.doc.added = nil
	p.doc.mu.Unlock()
	if len(added) == 0 {
		return nil
	}
	var entries []frontier.Entry
	var keys []uint64
	for _, a := range added {
		link := Link{Raw: a.url}
		norm, err := urlnorm.Normalize(a.url)
		if err != nil {
			cr.reject(&link, ReasonInvalidURL, err.Error())
			continue
		}
		link.URL = norm
		e, key, ok := cr.admitURL(norm, l.URL, l.Depth+1, &link)
		if !ok {
			continue
		}
		e.Meta = append([]byte{metaPage}, a.data...)
		e.Priority = linkPriority(a.priority)
		entries = append(entries, e)
		keys = append(keys, key)
	}
	return cr.enqueue(entries, keys)
}

// pageData returns the data a lease's URL was enqueued with.
func pageData(l *frontier.Lease) []byte {
	if len(l.Meta) < 2 || l.Meta[0] != metaPage {
		return nil
	}
	return append([]byte(nil), l.Meta[1:]...)
}
