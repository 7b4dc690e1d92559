package main

import (
	"fmt"
	"strings"
)

// navLinks is the number of links of every page's menu.
const navLinks = 8

// render writes page id's HTML: the head of one real page, then body
// segments of the corpus (after a menu of navLinks links) from a point chosen by the page, until the page's
// drawn size, each link slot filled with a link into the synthetic web. It
// records the page's size and slot count on s.pages[id]; recordLinks then
// records its links as a parser sees them (a slot may fall in a script or
// a comment, where no crawler finds a link).
func (s *site) render(c *corpus, id int) []byte {
	p := &s.pages[id]
	want := s.pageSize(id)
	var b strings.Builder
	b.Grow(want + 4096)
	slot := 0
	write := func(seg segment) {
		if !seg.slot {
			b.WriteString(seg.lit)
			return
		}
		_, href := s.link(id, slot)
		slot++
		b.WriteByte('"')
		b.WriteString(href)
		b.WriteByte('"')
	}
	for _, seg := range c.heads[s.hash(8, uint64(id), 0)%uint64(len(c.heads))] {
		write(seg)
	}
	fmt.Fprintf(&b, "\n<div class=\"rw-page\"><h1>%s — page %d</h1></div>\n", s.hosts[p.host].name, id-s.hosts[p.host].first)
	// A site menu, as news sites have: some bodies of the corpus are
	// mostly script and hold no link at all.
	b.WriteString(`<nav class="rw-nav"><ul>`)
	for k := 0; k < navLinks; k++ {
		b.WriteString(`<li><a href=`)
		write(segment{slot: true})
		b.WriteString(`>` + sections[k%len(sections)] + `</a></li>`)
	}
	b.WriteString("</ul></nav>\n")
	const tail = "\n</body>\n</html>\n"
	// Start at an original's body half the time, anywhere otherwise.
	r := s.hash(9, uint64(id), 0)
	i := int(r % uint64(len(c.body)))
	if r>>32%2 == 0 {
		i = c.bodyStarts[int(r>>33%uint64(len(c.bodyStarts)))]
	}
	for b.Len() < want-len(tail) {
		seg := c.body[i]
		i = (i + 1) % len(c.body)
		if !seg.slot && b.Len()+len(seg.lit) > want-len(tail) {
			// Cut the last literal before a tag, so no tag is broken.
			cut := seg.lit[:want-len(tail)-b.Len()]
			if j := strings.LastIndexByte(cut, '<'); j >= 0 {
				cut = cut[:j]
			}
			b.WriteString(cut)
			break
		}
		write(seg)
	}
	b.WriteString(tail)
	p.size = b.Len()
	p.nLinks = slot
	return []byte(b.String())
}
